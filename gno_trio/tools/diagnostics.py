"""``gno_diff`` and ``gno_query_diagnose``: read-only explanations of history and ranking."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio.engine.diagnose import diagnose
from gno_trio.engine.diff import document_diff
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import DiffInput, QueryDiagnoseInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.retrieval import query_setup


def _delta_lines(delta: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for key in ("headings", "links", "typedEdges"):
        for sign, side in (("+", "added"), ("-", "removed")):
            lines.extend(f"  {sign} {key}: {item}" for item in delta[key][side])
    dates = delta["dates"]
    lines.extend(f"  + date: {item}" for item in dates["added"])
    lines.extend(f"  - date: {item}" for item in dates["removed"])
    lines.extend(f"  ~ date: {item}" for item in dates["changed"])
    return lines


def diff_text(result: dict[str, Any]) -> str:
    document = result["document"]
    change = result["change"]
    if change is None:
        return f"No retained change for {document['uri']}."
    lines = [
        f"{change['kind']} of {document['uri']} at {change['observedAt']} ({change['id']})",
        *(_delta_lines(change["structureDelta"]) or ["  no structural difference recorded"]),
        "Bodies are not retained; read the current text with gno_get.",
    ]
    return "\n".join(lines)


def diagnose_text(result: dict[str, Any]) -> str:
    target = result["target"]
    lines = [f'Target {target["ref"]} for "{result["query"]}": {target["status"]}']
    if target["filterReasons"]:
        lines.append(f"  excluded by: {', '.join(target['filterReasons'])}")
    for stage in result["stages"]:
        lines.append(f"  {stage['id']}: {stage['reason']}")
    return "\n".join(lines)


def make_diff(runtime: Runtime) -> ToolHandler:
    def call(args: DiffInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return document_diff(conn, args.ref, opt(args.change))

    return engine_tool(runtime, call, diff_text)


def make_query_diagnose(runtime: Runtime) -> ToolHandler:
    def call(
        args: QueryDiagnoseInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        request, options = query_setup(runtime, args)
        return diagnose(conn, request, args.target, options)

    return engine_tool(runtime, call, diagnose_text)
