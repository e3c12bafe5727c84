"""The retrieval legs of the hybrid pipeline, each as hits ready for fusion.

BM25 hits, vector hits with their
anchors, and the graph's one-hop neighbours at their chunk nearest the
query: every leg hands :class:`.fusion.Fusion` (result, document id) pairs
shaped exactly as a lexical or vector search would return them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from gno_trio.engine.search import graph_expansion as graph_leg
from gno_trio.engine.search.fusion import Fusion
from gno_trio.engine.search.lexical import search
from gno_trio.engine.search.request import SearchRequest, request_document_filter
from gno_trio.engine.search.results import result_object
from gno_trio.engine.search.semantic import VectorHit, anchors
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.vectors.index import VectorMatrix


def doc_ids(conn: Connection, uris: Sequence[str]) -> dict[str, int]:
    return SQLITE_STORES.search_documents(conn).active_ids(uris)


def lexical_hits(conn: Connection, request: SearchRequest) -> list[tuple[dict[str, Any], int]]:
    """Lexical search's hits (full matches, then any-term top-ups) with their document ids."""
    hits = search(conn, request)["results"]
    ids = doc_ids(conn, [h["uri"] for h in hits])
    return [(h, ids[h["uri"]]) for h in hits if h["uri"] in ids]


def vector_results(
    conn: Connection, model_id: int, hits: Sequence[VectorHit], request: SearchRequest
) -> list[tuple[dict[str, Any], int, float]]:
    found = anchors(conn, model_id, [h.window for h in hits])
    return [
        (
            result_object(h.row, h.score, found.get(h.window), request),
            int(h.row["id"]),
            h.score,
        )
        for h in hits
    ]


def nearest_cosines(
    conn: Connection,
    matrix: VectorMatrix,
    vectors: Sequence[npt.NDArray[np.float32]],
    doc_ids: Sequence[int],
) -> dict[int, list[float]]:
    """Each document's cosine to each vector at its chunk nearest it (documents without
    stored vectors are left out)."""
    if not doc_ids:
        return {}
    mirrors = SQLITE_STORES.links(conn).mirrors(doc_ids).items()
    # One pass over the index for every document's rows (not one per document), then
    # each mirror's best row per vector.
    rows = matrix.rows_of_mirrors([mirror for _, mirror in mirrors if mirror])
    if not len(rows):
        return {}
    order = np.argsort(matrix.mirror_of[rows], kind="stable")
    rows = rows[order]
    owners = matrix.mirror_of[rows]
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    best = np.maximum.reduceat(matrix.vectors(rows) @ np.stack(vectors, axis=1), starts, axis=0)
    best_of = {int(owners[start]): best[at] for at, start in enumerate(starts)}
    found: dict[int, list[float]] = {}
    for doc_id, mirror in mirrors:
        own = best_of.get(matrix.mirror_index.get(mirror, -1)) if mirror else None
        if own is not None:
            found[int(doc_id)] = [float(v) for v in own]
    return found


def graph_results(
    conn: Connection,
    ids: Sequence[int],
    request: SearchRequest,
    matrix: VectorMatrix,
    query: npt.NDArray[np.float32],
) -> list[tuple[dict[str, Any], int]]:
    """Neighbour documents that pass the request's filters, at their chunk nearest the query."""
    if not ids:
        return []
    rows = SQLITE_STORES.search_documents(conn).rows_passing(
        ids, request_document_filter(conn, request)
    )
    hits = []
    for doc_id in ids:
        row = rows.get(doc_id)
        if row is None:
            continue
        own = matrix.rows_of(row["mirror_hash"]) if row["mirror_hash"] else np.zeros(0, np.intp)
        if len(own):
            cosine = matrix.vectors(own) @ query
            best = int(np.argmax(cosine))
            chosen = own[best]
            hits.append(
                VectorHit(
                    row, float(cosine[best]), int(matrix.seqs[chosen]), int(matrix.parts[chosen])
                )
            )
        else:
            hits.append(VectorHit(row, -1.0, 0))
    return [
        (result, doc_id)
        for result, doc_id, _ in vector_results(conn, matrix.model_id, hits, request)
    ]


def expand_graph(
    conn: Connection,
    fusion: Fusion,
    request: SearchRequest,
    matrix: VectorMatrix,
    query: npt.NDArray[np.float32],
    candidate_limit: int | None = None,
) -> graph_leg.GraphExpansion:
    seeds = [c.doc_id for c in fusion.ranked()[: graph_leg.SEED_LIMIT]]
    cap = min(graph_leg.CANDIDATE_LIMIT, candidate_limit or graph_leg.CANDIDATE_LIMIT)
    expansion = graph_leg.expand(conn, seeds, max_candidates=cap)
    hits = graph_results(conn, expansion.candidates, request, matrix, query)
    hits = hits[: expansion.max_candidates]
    expansion.candidates = [doc_id for _, doc_id in hits]
    if expansion.candidates:
        for candidate in fusion.add(hits):
            candidate.graph = True
    elif not expansion.fallback:
        expansion.fallback.append("graph_neighbor_lookup_empty")
    return expansion


def graph_line(expansion: graph_leg.GraphExpansion) -> str:
    if expansion.fallback and not expansion.candidates:
        return f"graph: no candidates ({', '.join(expansion.fallback)})"
    c = expansion.confidence
    return (
        f"graph: seeds={expansion.seed_count}, candidates={len(expansion.candidates)}/"
        f"{expansion.max_candidates}, explicit={c['explicit']}, inferred={c['inferred']}, "
        f"ambiguous={c['ambiguous']}, similarity={c['similarity']}"
    )
