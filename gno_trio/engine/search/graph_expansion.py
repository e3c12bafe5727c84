"""Graph expansion for the hybrid query: one hop of links around the top results.

The five best fused documents are the seeds. Their neighbours (documents a
seed links to, and documents linking to a seed) become up to twenty extra
candidates, fused like another retrieval list. Only links touching the
seeds are read: a seed's own links, wiki links whose target text can name a
seed (an indexed lookup), and markdown links whose path ends in a seed's
file name. Links are resolved by the same rules as ``gno_links``.

A neighbour's weight is the sum over its links of ``confidence / seed
rank``: a link written as the neighbour's path (or a markdown/``gno://``
link) is ``explicit`` (1), a wiki link that matched a file stem or title is
``inferred`` (0.65), as GNO weighs them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.engine.graph.links import CollectionIndex, DocSummary, Resolver, summary
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView

SEED_LIMIT: Final = 5
CANDIDATE_LIMIT: Final = 20
EDGE_LIMIT: Final = 10_000
_CONFIDENCE: Final = {"explicit": 1.0, "inferred": 0.65, "ambiguous": 0.35, "similarity": 0.25}
_MD: Final = ".md"


@dataclass(slots=True)
class GraphExpansion:
    """The neighbour candidates (document ids, best first) and the ``graphExpansion`` meta."""

    candidates: list[int] = field(default_factory=list)
    seed_count: int = 0
    max_candidates: int = CANDIDATE_LIMIT
    confidence: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_CONFIDENCE, 0))
    fallback: list[str] = field(default_factory=list)

    def meta(self) -> dict[str, Any]:
        return {
            "enabled": bool(self.candidates),
            "seedCount": self.seed_count,
            "candidateCount": len(self.candidates),
            "maxCandidates": self.max_candidates,
            "edgeConfidence": dict(self.confidence),
            "fallbackReasons": list(self.fallback),
        }


_indexes: dict[tuple[str, str], tuple[int, CollectionIndex]] = {}
_indexes_lock = threading.Lock()


class _CachedResolver(Resolver):
    """A resolver whose per-collection lookup tables outlive one query.

    Every change to a collection's documents (create, update, rename,
    inactivate, reactivate) is journaled, so the journal's newest id for the
    collection says whether tables built earlier still hold; rebuilding them
    for each query cost more than the rest of the graph stage.
    """

    def __init__(self, conn: Connection) -> None:
        super().__init__(SQLITE_STORES.links(conn))
        self._conn = conn

    def _index(self, collection: str) -> CollectionIndex:
        known = self._collections.get(collection)
        if known is not None:
            return known
        conn = self._conn
        path = SQLITE_STORES.documents(conn).database_file()
        version = SQLITE_STORES.journal(conn).latest(collection)
        with _indexes_lock:
            cached = _indexes.get((path, collection))
        if cached is not None and cached[0] == version:
            self._collections[collection] = cached[1]
            return cached[1]
        built = super()._index(collection)
        with _indexes_lock:
            _indexes[(path, collection)] = (version, built)
        return built


_endings: dict[str, tuple[tuple[int, int, int], dict[str, list[int]]]] = {}
_endings_lock = threading.Lock()


def _last_segment(target: str) -> str:
    return target.rpartition("/")[2].lower()


def _markdown_links_ending(conn: Connection, endings: set[str]) -> list[int]:
    """Row ids of the markdown links whose path ends in one of ``endings`` (any case).

    Matching the endings with SQL meant a ``LIKE`` per ending on every link
    row for every query (the costliest statement of the hybrid query). The
    links' last path segments are grouped once per index and rebuilt when
    the links can have changed: the change journal moved, or the link table
    gained or lost rows.
    """
    path = SQLITE_STORES.documents(conn).database_file()
    journal = SQLITE_STORES.journal(conn).latest()
    links = SQLITE_STORES.neighbour_links(conn)
    stamp = (journal, *links.stamp())
    with _endings_lock:
        cached = _endings.get(path)
    if cached is None or cached[0] != stamp:
        grouped: dict[str, list[int]] = {}
        for rowid, target in links.markdown_targets():
            grouped.setdefault(_last_segment(target), []).append(rowid)
        cached = (stamp, grouped)
        with _endings_lock:
            _endings[path] = cached
    found: set[int] = set()
    for ending in endings:
        found.update(cached[1].get(ending.lower(), ()))
    return sorted(found)


def disabled(reason: str = "graph_disabled") -> GraphExpansion:
    return GraphExpansion(fallback=[reason])


def _fold(text: str) -> str:
    return text.strip().casefold()


def _stem(rel_path: str) -> str:
    name = rel_path.rpartition("/")[2]
    base, dot, _ = name.rpartition(".")
    return base if dot and base else name


def _confidence(kind: str, target: str, resolved: DocSummary) -> str:
    if kind == "markdown":
        return "explicit"
    key = _fold(target)
    path = _fold(resolved.rel_path)
    if key in (path, path.removesuffix(_MD)) or key + _MD == path:
        return "explicit"
    return "inferred"


def _names(seed: DocSummary) -> set[str]:
    stem = _stem(seed.rel_path)
    names = {seed.rel_path, seed.rel_path.removesuffix(_MD), stem, stem + _MD}
    if seed.title:
        names.add(seed.title)
    return {_fold(name) for name in names if name}


def expand(
    conn: Connection, seed_ids: Sequence[int], *, max_candidates: int = CANDIDATE_LIMIT
) -> GraphExpansion:
    """Neighbour candidates of the first :data:`SEED_LIMIT` seeds (document ids)."""
    result = GraphExpansion(max_candidates=max(1, min(CANDIDATE_LIMIT, max_candidates)))
    seeds = list(dict.fromkeys(seed_ids))[:SEED_LIMIT]
    if not seeds:
        result.fallback.append("graph_no_seed_candidates")
        return result
    seed_docs = {
        int(row["id"]): summary(row) for row in SQLITE_STORES.links(conn).active_by_ids(seeds)
    }
    rank = {doc_id: position for position, doc_id in enumerate(seeds, 1) if doc_id in seed_docs}
    result.seed_count = len(rank)
    if not rank:
        result.fallback.append("graph_seed_lookup_empty")
        return result
    scores: dict[int, float] = {}
    resolver = _CachedResolver(conn)

    def credit(neighbour: int, seed: int, confidence: str) -> None:
        if neighbour in rank:
            return
        result.confidence[confidence] += 1
        scores[neighbour] = scores.get(neighbour, 0.0) + _CONFIDENCE[confidence] / rank[seed]

    edges = 0
    for row in _links_touching(conn, list(rank), list(seed_docs.values())):
        source = summary(row)
        target = resolver.resolve(row["kind"], row["target"], row["link_collection"], source)
        if target is None or target.id == source.id:
            continue
        confidence = _confidence(row["kind"], row["target"], target)
        if source.id in rank:
            credit(target.id, source.id, confidence)
        if target.id in rank:
            credit(source.id, target.id, confidence)
        edges += 1
        if edges >= EDGE_LIMIT:
            break
    if edges == 0:
        result.fallback.append("graph_empty")
        return result
    ordered = sorted(scores, key=lambda doc_id: (-scores[doc_id], doc_id))
    result.candidates = ordered
    if not ordered:
        result.fallback.append("graph_no_new_candidates")
    return result


def _links_touching(
    conn: Connection, seed_ids: list[int], seeds: list[DocSummary]
) -> list[RowView]:
    """Links written in a seed, plus links elsewhere whose target text may name a seed."""
    links = SQLITE_STORES.neighbour_links(conn)
    rows = links.written_in(seed_ids, EDGE_LIMIT)
    names = sorted(set().union(*(_names(seed) for seed in seeds)))
    rows += links.wiki_naming(names, seed_ids, EDGE_LIMIT)
    # A markdown link can only reach a seed if its path ends in the seed's file
    # name (with or without .md, or as a folder's index.md).
    endings = set()
    for seed in seeds:
        folder, _, name = seed.rel_path.rpartition("/")
        stem = name.removesuffix(_MD)
        endings.update({name, stem})
        if stem == "index" and folder:
            endings.add(folder.rpartition("/")[2])
    candidates = _markdown_links_ending(conn, endings)
    if candidates:
        rows += links.listed(candidates, seed_ids, EDGE_LIMIT)
    return rows
