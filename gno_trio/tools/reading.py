"""``gno_get`` and ``gno_multi_get``."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import GetInput, MultiGetInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt


def get_text(result: dict[str, Any]) -> str:
    lines = [f"Document: {result['uri']} ({result['docid']})"]
    if result.get("title"):
        lines.append(f"Title: {result['title']}")
    returned = result.get("returnedLines")
    total = result["totalLines"]
    if returned:
        span = f"{returned['start']}-{returned['end']}"
        lines.append(f"Lines: {span} of {total}")
    else:
        span = f"1-{total}" if result["content"] else "none"
        lines.append(f"Lines: {total}")
    lines.append(f"Path: {result['source'].get('absPath', result['source']['relPath'])}")
    lines.append(f"--- Content (lines {span}) ---")
    lines.append(result["content"])
    return "\n".join(lines)


def multi_get_text(result: dict[str, Any]) -> str:
    meta = result["meta"]
    lines = [
        f"Retrieved {meta['returned']} of {meta['requested']} documents"
        + (f", skipped {meta['skipped']}" if meta["skipped"] else "")
    ]
    for doc in result["documents"]:
        flag = " (truncated)" if doc.get("truncated") else ""
        lines.append(f"\n=== {doc['uri']} ({doc['docid']}){flag} ===")
        lines.append(doc["content"])
    for skip in result["skipped"]:
        lines.append(f"\nskipped {skip['ref']}: {skip['reason']}")
    return "\n".join(lines)


def make_get(runtime: Runtime) -> ToolHandler:
    def call(args: GetInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return runtime.engine.get(
            args.ref,
            from_line=opt(args.fromLine),
            line_count=opt(args.lineCount),
            line_numbers=args.lineNumbers,
            conn=conn,
        )

    return engine_tool(runtime, call, get_text)


def make_multi_get(runtime: Runtime) -> ToolHandler:
    def call(args: MultiGetInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return runtime.engine.multi_get(
            refs=opt(args.refs),
            pattern=opt(args.pattern),
            max_bytes=args.maxBytes,
            line_numbers=args.lineNumbers,
            conn=conn,
        )

    return engine_tool(runtime, call, multi_get_text)
