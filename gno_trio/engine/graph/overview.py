"""``gno_graph``: the whole resolved link graph, bounded, with a small health report.

Edges are the ones :class:`~gno_trio.engine.graph.linkgraph.LinkGraph` resolves, so this
view agrees with ``gno_links``, ``gno_backlinks`` and the neighbour/path tools.
One edge is reported per (source, target, link kind), weighted by how many
such links the source holds. With a collection filter only documents of that
collection and the links between them take part.

Similarity edges need vector embeddings, which this server does not build:
``includeSimilar`` is accepted and answered with ``similarAvailable: false``
and a warning rather than silently ignored.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any, Final

from gno_trio.engine.graph.linkgraph import LinkGraph
from gno_trio.engine.graph.links import DocSummary, summary
from gno_trio.errors import GnoError

GRAPH_DEFAULT_LIMIT: Final = 2000
GRAPH_DEFAULT_EDGE_LIMIT: Final = 10000
HUB_COUNT: Final = 10
SIMILAR_UNAVAILABLE: Final = (
    "includeSimilar needs vector embeddings, which this server does not build; "
    "no similarity edges were added"
)


def _scope(conn: sqlite3.Connection, collection: str | None) -> tuple[str | None, list[DocSummary]]:
    """The collection filter as stored (``NOT_FOUND`` if unknown) and its active documents."""
    query = "SELECT id, docid, uri, title, collection, rel_path FROM documents WHERE active = 1"
    params: tuple[Any, ...] = ()
    wanted: str | None = None
    if collection is not None:
        wanted = collection.strip().lower()
        known = conn.execute("SELECT 1 FROM collections WHERE name = ?", (wanted,)).fetchone()
        if known is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {collection}")
        query += " AND collection = ?"
        params = (wanted,)
    return wanted, [summary(row) for row in conn.execute(query + " ORDER BY uri", params)]


def _components(ids: list[int], adjacent: dict[int, set[int]]) -> int:
    """How many connected pieces the documents form, ignoring link direction."""
    seen: set[int] = set()
    count = 0
    for start in ids:
        if start in seen:
            continue
        count += 1
        seen.add(start)
        stack = [start]
        while stack:
            for other in adjacent.get(stack.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
    return count


def _node(doc: DocSummary, degree: int) -> dict[str, Any]:
    return {**doc.identity(), "degree": degree}


def overview(
    conn: sqlite3.Connection,
    *,
    collection: str | None = None,
    limit: int = GRAPH_DEFAULT_LIMIT,
    edge_limit: int = GRAPH_DEFAULT_EDGE_LIMIT,
    linked_only: bool = True,
    include_similar: bool = False,
) -> dict[str, Any]:
    """The graph of active documents (highest degree first) and the links among them.

    Nodes are ranked by degree (distinct neighbours either way), then URI, and
    cut at ``limit``; edges are those between kept nodes, cut at
    ``edge_limit``. ``meta.truncated`` says whether either cut dropped
    anything. The report counts hubs, isolated documents and connected
    components over the whole scope, before any cut.
    """
    wanted, docs = _scope(conn, collection)
    by_id = {doc.id: doc for doc in docs}
    graph = LinkGraph.load(conn)
    edges: list[tuple[int, int, str, int]] = []
    adjacent: dict[int, set[int]] = {}
    for source, targets in graph.outgoing.items():
        if source not in by_id:
            continue
        for target, kinds in targets.items():
            if target not in by_id:
                continue
            adjacent.setdefault(source, set()).add(target)
            adjacent.setdefault(target, set()).add(source)
            edges.extend((source, target, kind, count) for kind, count in kinds.items())
    degree = {doc_id: len(others) for doc_id, others in adjacent.items()}
    ranked = sorted(docs, key=lambda doc: (-degree.get(doc.id, 0), doc.uri))
    candidates = [doc for doc in ranked if degree.get(doc.id, 0) > 0 or not linked_only]
    kept = candidates[:limit]
    kept_ids = {doc.id for doc in kept}
    uri = {doc.id: doc.uri for doc in docs}
    in_scope = sorted(
        (edge for edge in edges if edge[0] in kept_ids and edge[1] in kept_ids),
        key=lambda edge: (uri[edge[0]], uri[edge[1]], edge[2]),
    )
    shown = in_scope[:edge_limit]
    isolated = [doc for doc in docs if doc.id not in adjacent]
    kinds = Counter(edge[2] for edge in edges)
    warnings = [SIMILAR_UNAVAILABLE] if include_similar else []
    return {
        "nodes": [_node(doc, degree.get(doc.id, 0)) for doc in kept],
        "links": [
            {
                "source": by_id[source].docid,
                "target": by_id[target].docid,
                "type": kind,
                "weight": count,
            }
            for source, target, kind, count in shown
        ],
        "report": {
            "hubs": [
                _node(doc, degree[doc.id]) for doc in ranked[:HUB_COUNT] if degree.get(doc.id)
            ],
            "isolated": {
                "total": len(isolated),
                "examples": [_node(doc, 0) for doc in isolated[:HUB_COUNT]],
            },
            "components": _components([doc.id for doc in docs], adjacent),
            "edgeTypes": {"wiki": kinds["wiki"], "markdown": kinds["markdown"], "similar": 0},
        },
        "meta": {
            "collection": wanted,
            "nodeLimit": limit,
            "edgeLimit": edge_limit,
            "totalNodes": len(candidates),
            "totalEdges": len(edges),
            "returnedNodes": len(kept),
            "returnedEdges": len(shown),
            "truncated": len(kept) < len(candidates) or len(shown) < len(edges),
            "linkedOnly": linked_only,
            "includedSimilar": False,
            "similarAvailable": False,
            "warnings": warnings,
        },
    }


__all__ = [
    "GRAPH_DEFAULT_EDGE_LIMIT",
    "GRAPH_DEFAULT_LIMIT",
    "overview",
]
