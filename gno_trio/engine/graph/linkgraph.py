"""The document link graph: one node's neighbourhood and the shortest path between two.

The graph is the resolved form of the stored links: an edge ``A -> B`` exists
when a link written in active document ``A`` resolves to active document ``B``
under the rules of :mod:`gno_trio.engine.graph.links` (so the graph always agrees
with ``gno_links`` and ``gno_backlinks``). Unresolved links and links from a
document to itself are not edges. The graph is built per call from the index,
so it never goes stale; answers are ordered by URI so they are repeatable.

A path may follow a link either way: "how are X and Y connected" is answered
just as well by a backlink as by a link, and each step says which way it went.

Both answers take the filters of ``gno_graph`` (:class:`GraphFilters`): a
collection narrows the graph to that collection's documents (the given
documents themselves always take part), ``limit`` bounds the documents an
answer may hold or a path search may visit, ``edgeLimit`` the link edges it
may use. Similarity edges need vectors; asking for them is answered with a
warning, never ignored silently.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, Final, Literal

from gno_trio.engine.graph.links import DocSummary, Resolution, Resolver, summary
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

Direction = Literal["in", "out", "both"]
PATH_DEFAULT_MAX_DEPTH: Final = 6
_TRUST: Final = {"explicit": 0, "inferred": 1, "ambiguous": 2}
GRAPH_DEFAULT_LIMIT: Final = 2000
GRAPH_DEFAULT_EDGE_LIMIT: Final = 10000
SIMILAR_UNAVAILABLE: Final = (
    "Similarity edges need vector embeddings, which this server does not build; "
    "no similarity edges were added"
)


@dataclass(frozen=True, slots=True)
class GraphFilters:
    """The graph filters ``gno_graph``, ``gno_graph_neighbors`` and ``gno_graph_path`` share."""

    collection: str | None = None
    limit: int = GRAPH_DEFAULT_LIMIT
    edge_limit: int = GRAPH_DEFAULT_EDGE_LIMIT
    linked_only: bool = True
    include_similar: bool = False
    threshold: float = 0.7
    similar_top_k: int = 5

    def warnings(self) -> list[str]:
        return [SIMILAR_UNAVAILABLE] if self.include_similar else []

    def admits(self, doc: DocSummary) -> bool:
        return self.collection is None or doc.collection == self.collection

    def meta(self, truncated: bool) -> dict[str, Any]:
        """The filters as applied, for an answer's ``meta``."""
        return {
            "collection": self.collection,
            "limit": self.limit,
            "edgeLimit": self.edge_limit,
            "truncated": truncated,
            "similarAvailable": False,
            "warnings": self.warnings(),
        }


NO_FILTERS: Final = GraphFilters()


def checked_filters(conn: Connection, filters: GraphFilters) -> GraphFilters:
    """``filters`` with the collection name as stored; ``NOT_FOUND`` for an unknown one."""
    if filters.collection is None:
        return filters
    wanted = filters.collection.strip().lower()
    if not SQLITE_STORES.links(conn).collection_exists(wanted):
        raise GnoError("NOT_FOUND", f"Collection not found: {filters.collection}")
    return replace(filters, collection=wanted)


@dataclass(slots=True)
class LinkGraph:
    """Resolved links between active documents, with per-edge counts by link kind."""

    docs: dict[int, DocSummary] = field(default_factory=dict)
    outgoing: dict[int, dict[int, Counter[str]]] = field(default_factory=dict)
    incoming: dict[int, dict[int, Counter[str]]] = field(default_factory=dict)
    # Per (source, target, kind): the most trustworthy way one of its links resolved.
    audits: dict[tuple[int, int, str], Resolution] = field(default_factory=dict)
    # (source id, link kind) of every link that names no active document.
    unresolved: list[tuple[int, str]] = field(default_factory=list)

    @classmethod
    def load(cls, conn: Connection) -> LinkGraph:
        graph = cls()
        stored = SQLITE_STORES.links(conn)
        rows = stored.all_links()
        resolver = Resolver(stored)
        for row in rows:
            source = summary(row)
            found = resolver.resolve_audited(
                row["kind"], row["target"], row["link_collection"], source
            )
            if found is None:
                graph.unresolved.append((source.id, row["kind"]))
                continue
            target = found.document
            if target.id == source.id:
                continue
            key = (source.id, target.id, row["kind"])
            known = graph.audits.get(key)
            if known is None or _TRUST[found.confidence] < _TRUST[known.confidence]:
                graph.audits[key] = found
            graph.docs.setdefault(source.id, source)
            graph.docs.setdefault(target.id, target)
            graph.outgoing.setdefault(source.id, {}).setdefault(target.id, Counter())[
                row["kind"]
            ] += 1
            graph.incoming.setdefault(target.id, {}).setdefault(source.id, Counter())[
                row["kind"]
            ] += 1
        return graph

    def ordered(self, ids: set[int]) -> list[int]:
        return sorted(ids, key=lambda doc_id: self.docs[doc_id].uri)

    def around(self, doc_id: int) -> list[int]:
        """Every document linked with ``doc_id`` in either direction, in URI order."""
        ids = set(self.outgoing.get(doc_id, {})) | set(self.incoming.get(doc_id, {}))
        return self.ordered(ids)


def node(doc: DocSummary) -> dict[str, Any]:
    """A document as the graph answers name it."""
    entry: dict[str, Any] = {"docid": doc.docid, "uri": doc.uri}
    if doc.title:
        entry["title"] = doc.title
    entry["collection"] = doc.collection
    entry["relPath"] = doc.rel_path
    return entry


def _document(conn: Connection, ref: str) -> DocSummary:
    return summary(resolve(conn, parse_ref(ref)))


def neighbors(
    conn: Connection,
    ref: str,
    *,
    direction: Direction = "both",
    filters: GraphFilters | None = None,
) -> dict[str, Any]:
    """``gno_graph_neighbors``: the documents one link away from ``ref``.

    ``out`` keeps documents ``ref`` links to, ``in`` documents linking to
    ``ref``, ``both`` the union; each neighbour says which way it is linked
    (``both`` when the links go both ways), by which kinds and how many links.
    Neighbours come in URI order while they fit ``filters.limit`` and their
    edges (one per neighbour and link kind) fit ``filters.edge_limit``.
    Raises ``INVALID_INPUT``/``NOT_FOUND`` for a bad or unknown ref or collection.
    """
    filters = checked_filters(conn, filters or NO_FILTERS)
    center = _document(conn, ref)
    graph = LinkGraph.load(conn)
    graph.docs.setdefault(center.id, center)
    outs = graph.outgoing.get(center.id, {}) if direction != "in" else {}
    ins = graph.incoming.get(center.id, {}) if direction != "out" else {}
    found: list[dict[str, Any]] = []
    for doc_id in graph.ordered(set(outs) | set(ins)):
        if not filters.admits(graph.docs[doc_id]):
            continue
        kinds = outs.get(doc_id, Counter()) + ins.get(doc_id, Counter())
        way = "both" if doc_id in outs and doc_id in ins else "out" if doc_id in outs else "in"
        found.append(
            {
                **node(graph.docs[doc_id]),
                "direction": way,
                "linkTypes": sorted(kinds),
                "linkCount": sum(kinds.values()),
            }
        )
    shown: list[dict[str, Any]] = []
    edges = 0
    for entry in found[: filters.limit]:
        edges += len(entry["linkTypes"])
        if edges > filters.edge_limit:
            break
        shown.append(entry)
    return {
        "node": node(center),
        "direction": direction,
        "neighbors": shown,
        "meta": {
            "totalNeighbors": len(found),
            "returned": len(shown),
            **filters.meta(len(shown) < len(found)),
        },
    }


def _step(graph: LinkGraph, here: int, there: int) -> dict[str, Any]:
    forward = graph.outgoing.get(here, {}).get(there)
    kinds = forward if forward is not None else graph.incoming[here][there]
    return {
        "fromUri": graph.docs[here].uri,
        "toUri": graph.docs[there].uri,
        "direction": "forward" if forward is not None else "backward",
        "linkTypes": sorted(kinds),
    }


def shortest_path(
    conn: Connection,
    source_ref: str,
    target_ref: str,
    *,
    max_depth: int = PATH_DEFAULT_MAX_DEPTH,
    filters: GraphFilters | None = None,
) -> dict[str, Any]:
    """``gno_graph_path``: the fewest link hops from ``source_ref`` to ``target_ref``.

    Breadth-first over links in either direction, neighbours in URI order, so
    among equally short paths the answer is always the same one. A step
    prefers following a link forward when links go both ways. The search
    visits at most ``filters.limit`` documents and follows at most
    ``filters.edge_limit`` edges (``meta.truncated`` says it stopped there).
    No path within ``max_depth`` hops is an answer (``found: false``), not an error.
    """
    filters = checked_filters(conn, filters or NO_FILTERS)
    start = _document(conn, source_ref)
    goal = _document(conn, target_ref)
    graph = LinkGraph.load(conn)
    graph.docs.setdefault(start.id, start)
    graph.docs.setdefault(goal.id, goal)
    came_from: dict[int, int | None] = {start.id: None}
    frontier: deque[tuple[int, int]] = deque([(start.id, 0)])
    followed = 0
    truncated = False
    while frontier and goal.id not in came_from and not truncated:
        here, depth = frontier.popleft()
        if depth == max_depth:
            continue
        for there in graph.around(here):
            if there in came_from or not (there == goal.id or filters.admits(graph.docs[there])):
                continue
            followed += 1
            if followed > filters.edge_limit or len(came_from) >= filters.limit:
                truncated = True
                break
            came_from[there] = here
            frontier.append((there, depth + 1))
            if there == goal.id:
                break
    result: dict[str, Any] = {
        "found": goal.id in came_from,
        "from": node(start),
        "to": node(goal),
        "maxDepth": max_depth,
    }
    meta = filters.meta(truncated and goal.id not in came_from)
    if goal.id not in came_from:
        return {**result, "nodes": [], "steps": [], "meta": meta}
    chain = [goal.id]
    while (previous := came_from[chain[-1]]) is not None:
        chain.append(previous)
    chain.reverse()
    return {
        **result,
        "hops": len(chain) - 1,
        "nodes": [node(graph.docs[doc_id]) for doc_id in chain],
        "steps": [_step(graph, a, b) for a, b in pairwise(chain)],
        "meta": meta,
    }


__all__ = [
    "GRAPH_DEFAULT_EDGE_LIMIT",
    "GRAPH_DEFAULT_LIMIT",
    "NO_FILTERS",
    "PATH_DEFAULT_MAX_DEPTH",
    "SIMILAR_UNAVAILABLE",
    "Direction",
    "GraphFilters",
    "LinkGraph",
    "checked_filters",
    "neighbors",
    "node",
    "shortest_path",
]
