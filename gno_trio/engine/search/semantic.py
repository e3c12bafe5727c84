"""Vector search (``vsearch``) and similar documents (``similar``).

Results are documents, like lexical search: the chunks nearest the query are
found first, then each document is reported once, at its best chunk (which
gives the line anchor and the snippet). A score is GNO's ``1 - d / 2`` for
cosine distance ``d``, i.e. ``(1 + cosine) / 2``. Filters are the lexical
search's own (collection, dates, tags, categories, author, language,
exclude): with any of them the nearest chunks are looked for among the
matching documents only, so a selective filter never empties the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.lookup import resolve
from gno_trio.engine.search.anchortext import Anchor, excerpt
from gno_trio.engine.search.request import SearchRequest, request_document_filter, validate_request
from gno_trio.engine.search.results import echo_filters, result_object
from gno_trio.engine.search.scope import Scope
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.store.document_filters import DocumentFilter
from gno_trio.engine.store.vectors import ModelRow
from gno_trio.engine.uris import parse_ref
from gno_trio.engine.vectors.available import stored_vectors
from gno_trio.engine.vectors.chunktext import WindowKey, chunk_texts, placed_windows, window_lines
from gno_trio.engine.vectors.embedder import (
    EMBED_DIMENSION_MISMATCH,
    VECTORS_UNAVAILABLE,
    EmbeddingBackend,
    embed_query,
    window,
)
from gno_trio.engine.vectors.index import VectorMatrix
from gno_trio.errors import GnoError

DEFAULT_SIMILAR_THRESHOLD: Final = 0.7
# How much an intent pulls the choice of a document's chunk (the query counts 1).
_INTENT_WEIGHT: Final = 0.5


@dataclass(frozen=True, slots=True)
class VectorHit:
    """One document found by the vector leg, at its best chunk."""

    row: RowView
    cosine: float
    seq: int
    part: int = 0

    @property
    def window(self) -> WindowKey:
        return (self.row["mirror_hash"], self.seq, self.part)

    @property
    def score(self) -> float:
        return min(1.0, max(0.0, (1.0 + self.cosine) / 2.0))


def query_vector(backend: EmbeddingBackend, model: ModelRow, text: str) -> npt.NDArray[np.float32]:
    """The unit vector of a query, checked against the dimension of the stored vectors."""
    vector = embed_query(backend, text)
    if vector.shape[0] != model.dimension:
        raise GnoError(
            EMBED_DIMENSION_MISMATCH,
            f"Model {backend.identity.uri} now gives {vector.shape[0]}-dimensional vectors "
            f"but its stored vectors have {model.dimension}",
        )
    return vector


def _allowed_rows(
    conn: Connection, matrix: VectorMatrix, request: SearchRequest
) -> tuple[npt.NDArray[np.intp] | None, DocumentFilter]:
    """Matrix rows the request's filters admit (None: every active one), and the filter."""
    where = request_document_filter(conn, request)
    if where.unfiltered:
        return None, where
    return matrix.rows_of_mirrors(
        SQLITE_STORES.search_documents(conn).mirrors_passing(where)
    ), where


def vector_leg(
    conn: Connection,
    matrix: VectorMatrix,
    query: npt.NDArray[np.float32],
    request: SearchRequest,
    limit: int,
    *,
    steer: npt.NDArray[np.float32] | None = None,
) -> list[VectorHit]:
    """Up to ``limit`` documents nearest ``query`` that pass the request's filters."""
    rows, where = _allowed_rows(conn, matrix, request)
    available = matrix.size if rows is None else len(rows)
    wanted = limit * 3 + 10
    while True:
        nearest = matrix.nearest(query, wanted, rows)
        found = np.fromiter((row for row, _ in nearest), dtype=np.intp, count=len(nearest))
        mirrors = matrix.mirrors
        best: dict[str, tuple[float, int, int]] = {}
        for (_, cosine), mirror_index, seq, part in zip(
            nearest,
            matrix.mirror_of[found].tolist(),
            matrix.seqs[found].tolist(),
            matrix.parts[found].tolist(),
            strict=True,
        ):
            best.setdefault(mirrors[mirror_index], (cosine, seq, part))
        hits = _documents(conn, best, where, limit)
        if len(hits) >= limit or wanted >= available:
            break
        wanted *= 4
    if steer is not None:
        hits = [_steered(matrix, hit, query, steer) for hit in hits]
    return hits[:limit]


def _documents(
    conn: Connection,
    best: dict[str, tuple[float, int, int]],
    where: DocumentFilter,
    limit: int,
) -> list[VectorHit]:
    """The ``limit`` best documents holding the ``best`` chunks that pass the filters.

    Documents rank by their chunk's cosine, then URI. The result columns
    (with their per-document subqueries) are read for the nearest mirrors
    first: ``limit`` of them, and any tied with the last. Only when those
    give fewer than ``limit`` documents (a filter, or a stale document, left
    some out) are the others read too; a document of a farther mirror could
    not have ranked above those already found.
    """
    ordered = sorted(best, key=lambda mirror: -best[mirror][0])
    cut = min(limit, len(ordered))
    while 0 < cut < len(ordered) and best[ordered[cut]][0] == best[ordered[cut - 1]][0]:
        cut += 1
    documents = SQLITE_STORES.search_documents(conn)
    rows = documents.rows_holding(ordered[:cut], where)
    if len(rows) < limit and cut < len(ordered):
        rows += documents.rows_holding(ordered[cut:], where)
    rows.sort(key=lambda row: (-best[row["mirror_hash"]][0], row["uri"]))
    return [VectorHit(row, *best[row["mirror_hash"]]) for row in rows[:limit]]


def _steered(
    matrix: VectorMatrix,
    hit: VectorHit,
    query: npt.NDArray[np.float32],
    steer: npt.NDArray[np.float32],
) -> VectorHit:
    """The hit at the chunk that best serves query and intent together (score unchanged)."""
    rows = matrix.rows_of(hit.row["mirror_hash"])
    if len(rows) < 2:
        return hit
    vectors = matrix.vectors(rows)
    pull = vectors @ query + _INTENT_WEIGHT * (vectors @ steer)
    chosen = int(rows[int(np.argmax(pull))])
    return VectorHit(hit.row, hit.cosine, int(matrix.seqs[chosen]), int(matrix.parts[chosen]))


def anchors(conn: Connection, model_id: int, keys: Sequence[WindowKey]) -> dict[WindowKey, Anchor]:
    """The anchor of each embedding window: its opening as the snippet, its own lines.

    A window whose vector (of ``model_id``) records its place is cut from
    the mirror by bytes; the others are found in their chunk's text.
    """
    found: dict[WindowKey, Anchor] = {}
    for key, placed in placed_windows(SQLITE_STORES.vectors(conn), model_id, keys).items():
        found[key] = Anchor(
            excerpt(placed.text),
            placed.start_line,
            placed.end_line,
            placed.language,
            placed.start_line,
        )
    rest = [key for key in keys if key not in found]
    texts = chunk_texts(
        SQLITE_STORES.chunks(conn), list(dict.fromkeys((mirror, seq) for mirror, seq, _ in rest))
    )
    for key in rest:
        chunk = texts.get((key[0], key[1]))
        if chunk is None:
            continue
        offset, text = window(chunk.text, key[2])
        start, end = window_lines(chunk, offset, text)
        found[key] = Anchor(excerpt(text), start, end, chunk.language, start)
    return found


def vector_search(
    conn: Connection, backend: EmbeddingBackend, request: SearchRequest
) -> dict[str, Any]:
    """``vsearch``: a ``search-results@1.0`` object with ``meta.mode = "vector"``."""
    validate_request(request)
    model, matrix = stored_vectors(conn, backend)
    query = query_vector(backend, model, request.query)
    steer = (
        query_vector(backend, model, request.scope.intent)
        if request.scope.intent and request.scope.intent.strip()
        else None
    )
    hits = vector_leg(conn, matrix, query, request, request.limit, steer=steer)
    floor = request.scope.min_score
    if floor is not None:
        hits = [hit for hit in hits if hit.score >= floor]
    found = anchors(conn, model.id, [hit.window for hit in hits])
    results = [result_object(hit.row, hit.score, found.get(hit.window), request) for hit in hits]
    meta: dict[str, Any] = {
        "query": request.query,
        "mode": "vector",
        "totalResults": len(results),
        "vectorsUsed": True,
    }
    echo_filters(meta, request)
    return {"results": results, "meta": meta}


def similar(
    conn: Connection,
    backend: EmbeddingBackend,
    ref: str,
    *,
    limit: int = 5,
    threshold: float | None = None,
    cross_collection: bool = False,
) -> dict[str, Any]:
    """``similar@1.0``: documents nearest the mean of ``ref``'s chunk vectors."""
    if not 1 <= limit <= 50:
        raise GnoError("INVALID_INPUT", "limit must be between 1 and 50")
    chosen = DEFAULT_SIMILAR_THRESHOLD if threshold is None else threshold
    if not 0 <= chosen <= 1:
        raise GnoError("INVALID_INPUT", "threshold must be between 0 and 1")
    source = resolve(conn, parse_ref(ref))
    mirror = source["mirror_hash"]
    if not mirror or not SQLITE_STORES.chunks(conn).holds(mirror):
        raise GnoError("NOT_FOUND", f"Document has no content: {ref}")
    _, matrix = stored_vectors(conn, backend)
    own = matrix.rows_of(mirror)
    if len(own) == 0:
        raise GnoError(
            VECTORS_UNAVAILABLE, f"Document has no embeddings yet: {ref} (run gno-trio embed)"
        )
    centre = matrix.vectors(own).mean(axis=0)
    norm = float(np.linalg.norm(centre))
    if norm == 0:
        raise GnoError(VECTORS_UNAVAILABLE, f"Document has no usable embeddings: {ref}")
    centre = (centre / norm).astype(np.float32)
    own_collection = () if cross_collection else (source["collection"],)
    request = SearchRequest(query=ref, limit=limit, scope=Scope(collections=own_collection))
    hits = [
        hit
        for hit in vector_leg(conn, matrix, centre, request, limit + 8)
        if hit.row["id"] != source["id"] and hit.score >= chosen
    ][:limit]
    items = []
    for hit in hits:
        item: dict[str, Any] = {
            "docid": hit.row["docid"],
            "uri": hit.row["uri"],
            "score": round(hit.score, 6),
            "collection": hit.row["collection"],
            "relPath": hit.row["rel_path"],
        }
        if hit.row["title"]:
            item["title"] = hit.row["title"]
        root = hit.row["collection_root"]
        if root:
            item["absPath"] = f"{root.rstrip('/')}/{hit.row['rel_path']}"
        items.append(item)
    meta: dict[str, Any] = {
        "docid": source["docid"],
        "uri": source["uri"],
        "totalResults": len(items),
        "limit": limit,
        "threshold": chosen,
        "crossCollection": cross_collection,
    }
    if source["title"]:
        meta["title"] = source["title"]
    return {"similar": items, "meta": meta}
