"""``gno_graph_neighbors`` and ``gno_graph_path``: walking the resolved link graph."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio.engine import graph
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import GraphNeighborsInput, GraphPathInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool

_ARROWS = {"out": "->", "in": "<-", "both": "<->"}


def neighbors_text(result: dict[str, Any]) -> str:
    """A header, then one line per neighbour with the way its links go."""
    meta = result["meta"]
    shown = f", showing {meta['returned']}" if meta["truncated"] else ""
    lines = [
        f"{meta['totalNeighbors']} {result['direction']} neighbours of "
        f"{result['node']['uri']}{shown}"
    ]
    for entry in result["neighbors"]:
        kinds = "/".join(entry["linkTypes"])
        lines.append(
            f"  {_ARROWS[entry['direction']]} {entry['uri']} ({kinds}, {entry['linkCount']})"
        )
    return "\n".join(lines)


def path_text(result: dict[str, Any]) -> str:
    start, goal = result["from"]["uri"], result["to"]["uri"]
    if not result["found"]:
        return f"No link path from {start} to {goal} within {result['maxDepth']} hops"
    lines = [f"{result['hops']}-hop path from {start} to {goal}:", f"  {start}"]
    for step in result["steps"]:
        arrow = "->" if step["direction"] == "forward" else "<-"
        lines.append(f"  {arrow} {step['toUri']} ({'/'.join(step['linkTypes'])})")
    return "\n".join(lines)


def make_graph_neighbors(runtime: Runtime) -> ToolHandler:
    def call(
        args: GraphNeighborsInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return graph.neighbors(conn, args.ref, direction=args.direction, limit=args.limit)

    return engine_tool(runtime, call, neighbors_text)


def make_graph_path(runtime: Runtime) -> ToolHandler:
    def call(
        args: GraphPathInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return graph.shortest_path(conn, args.from_, args.to, max_depth=args.maxDepth)

    return engine_tool(runtime, call, path_text)
