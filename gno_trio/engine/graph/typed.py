"""Bounded traversals over typed edges: ``gno_graph_query`` and ``gno_impact``.

Typed edges come from frontmatter ``relations`` (table ``doc_edges``) and
store their target as written: a ``gno://`` URI, ``collection/path``, a
``#docid``, or a name (path, stem or title) in the source's own collection.
They are resolved per call (:mod:`~gno_trio.engine.graph.typed_edges`) to
active documents; a target naming no active document is not an edge, and
the answer says how many were skipped.

``gno_impact`` walks inbound: a document is impacted by ``ref`` when it has a
typed edge, a wiki link or a Markdown link to it, directly or through other
impacted documents. Links are the ones :class:`~gno_trio.engine.graph.linkgraph.LinkGraph`
resolves. Both walks are breadth-first with neighbours in URI order, so the
same index always gives the same answer, and every cap that cuts the walk
short sets ``meta.truncated``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from gno_trio.engine.graph.typed_edges import Edge, edge_fields, root_doc, typed_edges, with_links
from gno_trio.engine.store.database import Connection
from gno_trio.errors import GnoError

Direction = Literal["out", "in", "both"]
SCHEMA_VERSION: Final = "1.0"
QUERY_DEFAULT_MAX_DEPTH: Final = 2
IMPACT_DEFAULT_MAX_DEPTH: Final = 3
DEFAULT_MAX_NODES: Final = 100
DEFAULT_MAX_EDGES: Final = 250
DEFAULT_FRONTIER_LIMIT: Final = 100
DEFAULT_VISITED_LIMIT: Final = 500
CAPS: Final = {
    "max depth": (1, 6),
    "max nodes": (1, 1000),
    "max edges": (1, 5000),
    "frontier limit": (1, 1000),
    "visited limit": (1, 5000),
}
"""The range of each traversal cap, on every surface (the MCP schemas say the same)."""


@dataclass(slots=True)
class _Walk:
    """Breadth-first walk state shared by both tools, with every cap it honours."""

    max_depth: int
    max_nodes: int
    frontier_limit: int
    visited_limit: int
    max_edges: int | None = None

    def __post_init__(self) -> None:
        given = {
            "max depth": self.max_depth,
            "max nodes": self.max_nodes,
            "frontier limit": self.frontier_limit,
            "visited limit": self.visited_limit,
            "max edges": self.max_edges,
        }
        for name, value in given.items():
            low, high = CAPS[name]
            if value is not None and not low <= value <= high:
                raise GnoError(
                    "INVALID_INPUT", f"{name} must be between {low} and {high} (got {value})"
                )

    def run(
        self, root: int, steps: Callable[[int], list[tuple[Edge, int]]]
    ) -> tuple[dict[int, int], dict[int, Edge], list[Edge], bool]:
        """Depth of each reached document, the edge that first reached it, edges walked.

        ``steps(doc_id)`` yields ``(edge, other_end)`` pairs in a fixed order.
        """
        depth_of = {root: 0}
        reached_by: dict[int, Edge] = {}
        walked: list[Edge] = []
        walked_keys: set[Edge] = set()
        seen = {root}
        truncated = False
        level = [root]
        depth = 0
        while level and depth < self.max_depth:
            if len(level) > self.frontier_limit:
                truncated = True
                level = level[: self.frontier_limit]
            following: list[int] = []
            for here in level:
                for edge, other in steps(here):
                    if other not in seen:
                        if len(seen) >= self.visited_limit:
                            truncated = True
                            continue
                        seen.add(other)
                    if other not in depth_of:
                        if len(depth_of) >= self.max_nodes:
                            truncated = True
                            continue
                        depth_of[other] = depth + 1
                        reached_by[other] = edge
                        following.append(other)
                    if edge in walked_keys:
                        continue
                    if self.max_edges is not None and len(walked) >= self.max_edges:
                        truncated = True
                        continue
                    walked_keys.add(edge)
                    walked.append(edge)
            level = following
            depth += 1
        return depth_of, reached_by, walked, truncated


def graph_query(
    conn: Connection,
    ref: str,
    *,
    direction: Direction = "both",
    edge_type: str | None = None,
    max_depth: int = QUERY_DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
    frontier_limit: int = DEFAULT_FRONTIER_LIMIT,
    visited_limit: int = DEFAULT_VISITED_LIMIT,
) -> dict[str, Any]:
    """``graph-query``: documents reachable from ``ref`` over typed edges, with those edges.

    ``out`` follows edges ``ref`` holds, ``in`` edges pointing at it, ``both``
    either. Each node carries its hop count; ``graphHints`` marks the root
    and documents whose further edges the depth cap left unexplored.
    """
    walk = _Walk(max_depth, max_nodes, frontier_limit, visited_limit)
    root = root_doc(conn, ref)
    edges = typed_edges(conn, edge_type)
    edges.docs.setdefault(root.id, root)

    def steps(here: int) -> list[tuple[Edge, int]]:
        found: list[tuple[Edge, int]] = []
        if direction != "in":
            found += [(e, e.target) for e in edges.ordered(edges.outgoing.get(here, ()), "target")]
        if direction != "out":
            found += [(e, e.source) for e in edges.ordered(edges.incoming.get(here, ()), "source")]
        return [(edge, other) for edge, other in found if other != here]

    depth_of, _, walked, truncated = walk.run(root.id, steps)
    kept = [e for e in walked if e.source in depth_of and e.target in depth_of]

    def node(doc_id: int) -> dict[str, Any]:
        hints = ["root"] if doc_id == root.id else []
        if depth_of[doc_id] == max_depth and any(o not in depth_of for _, o in steps(doc_id)):
            hints.append("more-beyond-depth")
        return {**edges.docs[doc_id].identity(), "depth": depth_of[doc_id], "graphHints": hints}

    warnings = []
    if edges.unresolved:
        warnings.append(f"{edges.unresolved} typed edge target(s) name no active document")
    nodes = sorted(depth_of, key=lambda doc_id: (depth_of[doc_id], edges.docs[doc_id].uri))
    return {
        "schemaVersion": SCHEMA_VERSION,
        "root": node(root.id),
        "nodes": [node(doc_id) for doc_id in nodes],
        "edges": [
            {
                "source": edges.docs[e.source].docid,
                "target": edges.docs[e.target].docid,
                **edge_fields(e),
                "depth": max(depth_of[e.source], depth_of[e.target]),
            }
            for e in kept
        ],
        "meta": {
            "direction": direction,
            "edgeType": edge_type,
            "maxDepth": max_depth,
            "maxNodes": max_nodes,
            "frontierLimit": frontier_limit,
            "visitedLimit": visited_limit,
            "returnedNodes": len(nodes),
            "returnedEdges": len(kept),
            "truncated": truncated,
            "warnings": warnings,
        },
    }


def impact(
    conn: Connection,
    ref: str,
    *,
    max_depth: int = IMPACT_DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
    frontier_limit: int = DEFAULT_FRONTIER_LIMIT,
    visited_limit: int = DEFAULT_VISITED_LIMIT,
) -> dict[str, Any]:
    """``impact``: documents that depend on ``ref`` through inbound typed edges or links.

    ``max_nodes`` counts the root. Each impacted document comes with the
    chain of edges, from it towards ``ref``, by which the walk first reached it.
    """
    walk = _Walk(max_depth, max_nodes, frontier_limit, visited_limit, max_edges)
    root = root_doc(conn, ref)
    edges = with_links(conn, typed_edges(conn))
    edges.docs.setdefault(root.id, root)

    def steps(here: int) -> list[tuple[Edge, int]]:
        inbound = edges.ordered(edges.incoming.get(here, ()), "source")
        return [(e, e.source) for e in inbound if e.source != here]

    depth_of, reached_by, walked, truncated = walk.run(root.id, steps)

    def endpoint(doc_id: int) -> dict[str, Any]:
        return {"id": edges.docs[doc_id].docid, "uri": edges.docs[doc_id].uri}

    def evidence(doc_id: int) -> list[dict[str, Any]]:
        chain: list[dict[str, Any]] = []
        while doc_id != root.id:
            edge = reached_by[doc_id]
            chain.append(
                {"source": endpoint(edge.source), "target": endpoint(edge.target)}
                | edge_fields(edge)
            )
            doc_id = edge.target
        return chain

    impacted = sorted(
        (doc_id for doc_id in depth_of if doc_id != root.id),
        key=lambda doc_id: (depth_of[doc_id], edges.docs[doc_id].uri),
    )
    warnings = []
    if edges.unresolved:
        warnings.append(f"{edges.unresolved} typed edge target(s) name no active document")
    return {
        "schemaVersion": SCHEMA_VERSION,
        "root": root.identity(),
        "impacted": [
            {
                "document": edges.docs[doc_id].identity(),
                "depth": depth_of[doc_id],
                "evidencePath": evidence(doc_id),
            }
            for doc_id in impacted
        ],
        "meta": {
            "maxDepth": max_depth,
            "maxNodes": max_nodes,
            "maxEdges": max_edges,
            "frontierLimit": frontier_limit,
            "visitedLimit": visited_limit,
            "returnedNodes": len(depth_of),
            "returnedEdges": len(walked),
            "truncated": truncated,
            "warnings": warnings,
        },
    }


def check_depth(max_depth: int | None, depth: int | None) -> int:
    """``maxDepth`` and its alias ``depth`` as one bound (default 2); both set must agree."""
    if max_depth is not None and depth is not None and max_depth != depth:
        raise GnoError("INVALID_INPUT", f"maxDepth ({max_depth}) and depth ({depth}) disagree")
    chosen = max_depth if max_depth is not None else depth
    return QUERY_DEFAULT_MAX_DEPTH if chosen is None else chosen


__all__ = [
    "DEFAULT_FRONTIER_LIMIT",
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "DEFAULT_VISITED_LIMIT",
    "IMPACT_DEFAULT_MAX_DEPTH",
    "QUERY_DEFAULT_MAX_DEPTH",
    "check_depth",
    "graph_query",
    "impact",
]
