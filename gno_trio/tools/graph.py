"""The graph tools: neighbours, paths, the whole graph, typed-edge walks and impact."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio.engine import graph, graph_overview, typed_graph
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import (
    GraphInput,
    GraphNeighborsInput,
    GraphPathInput,
    GraphQueryInput,
    ImpactInput,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt

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


def _cut(meta: dict[str, Any]) -> str:
    return " (truncated by a limit)" if meta["truncated"] else ""


def _label(entry: dict[str, Any]) -> str:
    return f'{entry["uri"]} "{entry["title"]}"' if entry.get("title") else entry["uri"]


def overview_text(result: dict[str, Any]) -> str:
    """Counts, then the hubs, then the health figures and any warning."""
    meta, report = result["meta"], result["report"]
    lines = [
        f"Link graph: {meta['returnedNodes']} of {meta['totalNodes']} nodes, "
        f"{meta['returnedEdges']} of {meta['totalEdges']} edges{_cut(meta)}"
    ]
    if report["hubs"]:
        lines.append("Hubs by degree:")
        lines += [f"  {_label(hub)} (degree {hub['degree']})" for hub in report["hubs"]]
    lines.append(
        f"Isolated documents: {report['isolated']['total']}; "
        f"connected components: {report['components']}"
    )
    lines += [f"Warning: {warning}" for warning in meta["warnings"]]
    return "\n".join(lines)


def query_text(result: dict[str, Any]) -> str:
    """The root, then each reached document with its hop count, then the edges."""
    meta = result["meta"]
    kind = f" of type {meta['edgeType']}" if meta["edgeType"] else ""
    lines = [
        f"Typed edges{kind} around {result['root']['uri']} ({meta['direction']}): "
        f"{meta['returnedNodes']} documents, {meta['returnedEdges']} edges{_cut(meta)}"
    ]
    by_id = {entry["id"]: entry["uri"] for entry in result["nodes"]}
    lines += [f"  [{entry['depth']}] {_label(entry)}" for entry in result["nodes"][1:]]
    lines += [
        f"  {by_id[edge['source']]} -{edge['edgeType']}-> {by_id[edge['target']]}"
        for edge in result["edges"]
    ]
    lines += [f"Warning: {warning}" for warning in meta["warnings"]]
    return "\n".join(lines)


def impact_text(result: dict[str, Any]) -> str:
    """Each impacted document with its depth and the first step of its evidence."""
    meta = result["meta"]
    lines = [f"{len(result['impacted'])} documents depend on {result['root']['uri']}{_cut(meta)}"]
    for entry in result["impacted"]:
        first = entry["evidencePath"][0]
        lines.append(
            f"  [{entry['depth']}] {_label(entry['document'])} "
            f"-{first['edgeType']}-> {first['target']['uri']}"
        )
    lines += [f"Warning: {warning}" for warning in meta["warnings"]]
    return "\n".join(lines)


def make_graph(runtime: Runtime) -> ToolHandler:
    def call(args: GraphInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return graph_overview.overview(
            conn,
            collection=opt(args.collection),
            limit=args.limit,
            edge_limit=args.edgeLimit,
            linked_only=args.linkedOnly,
            include_similar=args.includeSimilar,
            similar_top_k=args.similarTopK,
        )

    return engine_tool(runtime, call, overview_text)


def make_graph_query(runtime: Runtime) -> ToolHandler:
    def call(
        args: GraphQueryInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return typed_graph.graph_query(
            conn,
            args.ref,
            direction=args.direction,
            edge_type=typed_graph.check_edge_type(opt(args.edgeType), opt(args.relation)),
            max_depth=args.maxDepth,
            max_nodes=args.maxNodes,
            frontier_limit=args.frontierLimit,
            visited_limit=args.visitedLimit,
        )

    return engine_tool(runtime, call, query_text)


def make_impact(runtime: Runtime) -> ToolHandler:
    def call(args: ImpactInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return typed_graph.impact(
            conn,
            args.ref,
            max_depth=args.maxDepth,
            max_nodes=args.maxNodes,
            max_edges=args.maxEdges,
            frontier_limit=args.frontierLimit,
            visited_limit=args.visitedLimit,
        )

    return engine_tool(runtime, call, impact_text)
