"""``gno_graph``: the whole resolved link graph, bounded, with a small health report.

Edges are the ones :class:`~gno_trio.engine.graph.linkgraph.LinkGraph` resolves, so this
view agrees with ``gno_links``, ``gno_backlinks`` and the neighbour/path tools.
One edge is reported per (source, target, link kind), weighted by how many
such links the source holds. With a collection filter only documents of that
collection and the links between them take part.

With ``includeSimilar`` the caller's ``find_similar`` adds similarity edges
among the returned nodes (:mod:`~gno_trio.engine.graph.similarity`); when
there are no vectors to compare the answer says ``similarAvailable: false``
with the reason as a warning, rather than silently leaving them out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from gno_trio.engine.graph.communities import communities
from gno_trio.engine.graph.linkgraph import (
    GRAPH_DEFAULT_EDGE_LIMIT,
    GRAPH_DEFAULT_LIMIT,
    LinkGraph,
)
from gno_trio.engine.graph.links import DocSummary, summary, with_node_ids
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.errors import GnoError

HUB_COUNT: Final = 10
SIMILAR_DEFAULT_TOP_K: Final = 5
SIMILAR_DEFAULT_THRESHOLD: Final = 0.7
SimilarFinder = Callable[[list[DocSummary], int, float], tuple[list[tuple[int, int, float]], bool]]
"""(nodes, top-k, threshold) -> (edges as (source id, target id, score), cut by the budget)."""


def _scope(conn: Connection, collection: str | None) -> tuple[str | None, list[DocSummary]]:
    """The collection filter as stored (``NOT_FOUND`` if unknown) and its active documents."""
    stored = SQLITE_STORES.links(conn)
    wanted: str | None = None
    if collection is not None:
        wanted = collection.strip().lower()
        if not stored.collection_exists(wanted):
            raise GnoError("NOT_FOUND", f"Collection not found: {collection}")
    rows = stored.active_documents(wanted, by_uri=True)
    return wanted, with_node_ids([summary(row) for row in rows])


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


def _node(doc: DocSummary, degree: int, community: str | None = None) -> dict[str, Any]:
    entry = {**doc.identity(), "degree": degree}
    if community is not None:
        entry["communityId"] = community
    return entry


def _link(graph: LinkGraph, by_id: dict[int, DocSummary], edge: Edge) -> dict[str, Any]:
    source, target, kind, count = edge
    found = graph.audits[(source, target, kind)]
    audit: dict[str, Any] = {"resolution": found.resolution}
    if found.match_count > 1:
        audit["matchCount"] = found.match_count
    return {
        "source": by_id[source].node,
        "target": by_id[target].node,
        "type": kind,
        "weight": count,
        "confidence": found.confidence,
        "audit": audit,
    }


Edge = tuple[int, int, str, int]


def _similar_link(by_id: dict[int, DocSummary], edge: tuple[int, int, float]) -> dict[str, Any]:
    source, target, score = edge
    return {
        "source": by_id[source].node,
        "target": by_id[target].node,
        "type": "similar",
        "weight": score,
        "confidence": "similarity",
        "audit": {"resolution": "similarity", "score": score},
    }


def overview(
    conn: Connection,
    *,
    collection: str | None = None,
    limit: int = GRAPH_DEFAULT_LIMIT,
    edge_limit: int = GRAPH_DEFAULT_EDGE_LIMIT,
    linked_only: bool = True,
    include_similar: bool = False,
    similar_top_k: int = SIMILAR_DEFAULT_TOP_K,
    similar_threshold: float = SIMILAR_DEFAULT_THRESHOLD,
    find_similar: SimilarFinder | None = None,
) -> dict[str, Any]:
    """The graph of active documents (highest degree first) and the links among them.

    Nodes are ranked by degree (distinct neighbours either way), then URI, and
    cut at ``limit``; edges are those between kept nodes, cut at
    ``edge_limit``. ``meta.truncated`` says whether either cut dropped
    anything. Each edge says how far it can be trusted (``confidence``) and
    how its link resolved (``audit``). The report counts hubs, bridges
    (documents both linking and linked), isolated documents, unresolved
    links, edge kinds and confidences and connected components over the
    whole scope, before any cut; communities are found among the returned
    nodes.
    """
    for name, value, high in (
        ("limit", limit, 5000),
        ("edge limit", edge_limit, 50000),
        ("similar top-k", similar_top_k, 20),
    ):
        if not 1 <= value <= high:
            raise GnoError("INVALID_INPUT", f"{name} must be between 1 and {high} (got {value})")
    if not 0 <= similar_threshold <= 1:
        raise GnoError(
            "INVALID_INPUT", f"threshold must be between 0 and 1 (got {similar_threshold})"
        )
    wanted, docs = _scope(conn, collection)
    by_id = {doc.id: doc for doc in docs}
    graph = LinkGraph.load(conn)
    edges: list[Edge] = []
    adjacent: dict[int, set[int]] = {}
    linking: set[int] = set()
    linked: set[int] = set()
    for source, targets in graph.outgoing.items():
        if source not in by_id:
            continue
        for target, kinds in targets.items():
            if target not in by_id:
                continue
            adjacent.setdefault(source, set()).add(target)
            adjacent.setdefault(target, set()).add(source)
            linking.add(source)
            linked.add(target)
            edges.extend((source, target, kind, count) for kind, count in kinds.items())
    unresolved = Counter(kind for source, kind in graph.unresolved if source in by_id)
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
    trust = Counter(graph.audits[edge[:3]].confidence for edge in edges)
    assigned, community_report = communities(
        kept, adjacent, degree, lambda doc: _node(doc, degree.get(doc.id, 0), None)
    )

    def listed(doc: DocSummary) -> dict[str, Any]:
        return _node(doc, degree.get(doc.id, 0), assigned.get(doc.id))

    similar: list[tuple[int, int, float]] = []
    budget_cut = available = False
    warnings: list[str] = []
    if include_similar and find_similar is None:
        warnings.append("Similarity edges need vector embeddings; none were compared")
    elif include_similar and find_similar is not None:
        try:
            similar, budget_cut = find_similar(kept, similar_top_k, similar_threshold)
            available = True
        except GnoError as error:
            warnings.append(f"No similarity edges (vector search unavailable): {error.message}")
    similar.sort(key=lambda edge: (uri[edge[0]], uri[edge[1]]))
    shown_similar = similar[: max(0, edge_limit - len(shown))]
    if budget_cut:
        warnings.append("Similarity edges cover only the first nodes (compute budget)")
    return {
        "nodes": [listed(doc) for doc in kept],
        "links": [_link(graph, by_id, edge) for edge in shown]
        + [_similar_link(by_id, edge) for edge in shown_similar],
        "report": {
            "hubs": [listed(doc) for doc in ranked[:HUB_COUNT] if degree.get(doc.id)],
            "bridgeCandidates": [
                listed(doc) for doc in ranked if doc.id in linking and doc.id in linked
            ][:HUB_COUNT],
            "isolated": {
                "total": len(isolated),
                "examples": [_node(doc, 0) for doc in isolated[:HUB_COUNT]],
            },
            "unresolvedLinks": {
                "total": sum(unresolved.values()),
                "byType": {"wiki": unresolved["wiki"], "markdown": unresolved["markdown"]},
            },
            "components": _components([doc.id for doc in docs], adjacent),
            "edgeTypes": {
                "wiki": kinds["wiki"],
                "markdown": kinds["markdown"],
                "similar": len(similar),
            },
            "edgeConfidence": {
                "explicit": trust["explicit"],
                "inferred": trust["inferred"],
                "ambiguous": trust["ambiguous"],
                "similarity": len(similar),
            },
            "audit": {
                "inferredEdges": trust["inferred"],
                "ambiguousEdges": trust["ambiguous"],
                "similarityEdges": len(similar),
            },
            "communities": community_report,
        },
        "meta": {
            "collection": wanted,
            "nodeLimit": limit,
            "edgeLimit": edge_limit,
            "totalNodes": len(candidates),
            "totalEdges": len(edges) + len(similar),
            "totalEdgesUnresolved": sum(unresolved.values()),
            "returnedNodes": len(kept),
            "returnedEdges": len(shown) + len(shown_similar),
            "truncated": len(kept) < len(candidates)
            or len(shown) < len(edges)
            or len(shown_similar) < len(similar),
            "linkedOnly": linked_only,
            "includedSimilar": include_similar and available,
            "similarAvailable": available,
            "similarTopK": similar_top_k,
            "similarTruncatedByComputeBudget": budget_cut,
            "warnings": warnings,
        },
    }


__all__ = [
    "GRAPH_DEFAULT_EDGE_LIMIT",
    "GRAPH_DEFAULT_LIMIT",
    "overview",
]
