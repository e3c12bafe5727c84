"""Retrieval for a Capsule: the documents it may quote, with the rows, chunks and lines it quotes.

The engine's hybrid query (``gno_query``'s: BM25 and, where the collection's
model has stored vectors, vectors weighed by their evidence) runs once per
requested collection in canonical order, with the result limit spread
across them, merged by rank and capped once; the admitted documents are
then loaded with their best matching chunks and their mirror lines, which
is all the passage cutter needs. A document the words do not reach (a
question in another language) is quoted at the chunk its vector anchor
names. Kept apart from the cutting so each side can change without the
other.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.engine.context import codes
from gno_trio.engine.context.request import NormalizedRequest
from gno_trio.engine.search.anchors import chunk_spans, text_match
from gno_trio.engine.search.anchortext import exact_first
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.pipeline import hybrid_query
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.engine.search.request import SearchRequest
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.chunks import ChunkStore
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.vectors.embedder import EmbeddingBackend
from gno_trio.engine.vectors.models import configured_backend
from gno_trio.errors import GnoError

MAX_SEARCH_LIMIT: Final = 100


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    """One admitted search hit, in merged retrieval order."""

    uri: str
    sources: tuple[str, ...]
    line: int | None = None
    """The line the hit is anchored at (its best chunk by words or by meaning)."""


def _share(total: int, index: int, parts: int) -> int:
    """``total`` spread over ``parts`` in order: earlier parts take the remainder."""
    return total // parts + (1 if index < total % parts else 0)


def _backend(config: Config, collection: str | None) -> EmbeddingBackend | None:
    """The collection's embedding model, or None when it cannot run (the query stays
    lexical then, as ``gno_query`` does)."""
    try:
        return configured_backend(config, collection)
    except GnoError:
        return None


def _sources(explained: dict[str, Any] | None, terms: bool) -> tuple[str, ...]:
    """The legs that found a hit, in the Capsule's vocabulary."""
    legs = ["bm25"] if explained is None or explained.get("bm25Score") else []
    if terms:
        legs.append("bm25_variant")
    if explained is not None and "vecScore" in explained:
        legs.append("vector")
    return tuple(legs) or ("vector",)


def retrieve_documents(
    conn: Connection, config: Config, request: NormalizedRequest, now: datetime
) -> list[RetrievedDocument]:
    """Admitted documents, best first, at most ``request.limit`` across all collections."""
    targets: Sequence[str | None] = request.collections or (None,)
    ranked: list[tuple[int, str, tuple[str, ...], int | None]] = []
    for index, collection in enumerate(targets):
        share = max(1, _share(request.limit, index, len(targets)))
        search = SearchRequest(
            query=request.retrieval_query,
            limit=min(MAX_SEARCH_LIMIT, share),
            scope=request.search_scope(collection),
            now=now,
        )
        options = QueryOptions(
            query_modes=request.query_modes,
            fast=request.depth_policy == "fast",
            thorough=request.depth_policy == "thorough",
            explain=True,
        )
        try:
            backend = None if options.fast else _backend(config, collection)  # fast: no model
            result = hybrid_query(conn, search, options, backend)
        except GnoError as error:
            raise GnoError(codes.RETRIEVAL_FAILED, error.message) from None
        hybrid = result["meta"]["mode"] == "hybrid"
        explained = result["meta"]["explain"]["results"]
        for rank, (hit, why) in enumerate(zip(result["results"], explained, strict=True), 1):
            legs = _sources(why if hybrid else None, bool(request.term_texts))
            ranked.append((rank, hit["uri"], legs, hit.get("line")))
    ranked.sort(key=lambda item: (item[0], item[1]))
    seen: set[str] = set()
    admitted: list[RetrievedDocument] = []
    for _, uri, legs, line in ranked:
        if uri in seen:
            continue
        seen.add(uri)
        admitted.append(RetrievedDocument(uri=uri, sources=legs, line=line))
    return admitted[: request.limit]


def _chunk_match(request: NormalizedRequest) -> tuple[str, ...]:
    """FTS5 expressions ranking a document's chunks: exact words, then prefixes."""
    texts = (request.retrieval_query, *request.term_texts)
    parts = [parse_query(text).any_match for text in texts]
    return exact_first(" OR ".join(f"({part})" for part in parts))


def _best_chunks(
    chunks: ChunkStore,
    span: tuple[int, int] | None,
    matches: tuple[str, ...],
    count: int,
) -> list[int]:
    """Ids of a mirror's ``count`` best-matching chunks (exact terms first)."""
    if span is None:
        return []
    found: dict[int, None] = {}
    for expression in matches:
        if len(found) >= count:
            break
        for chunk_id in chunks.matching_in_range(text_match(expression), *span, count):
            found.setdefault(chunk_id, None)
    return list(found)[:count]


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    row: RowView
    retrieved: RetrievedDocument
    lines: list[str] | None
    chunks: list[RowView]


def load_documents(
    conn: Connection,
    retrieved: Sequence[RetrievedDocument],
    request: NormalizedRequest,
    configured: Collection[str],
) -> list[LoadedDocument]:
    """Rows, best chunks and mirror lines of the retrieved documents.

    A document whose collection has left the configuration since the index
    was written is skipped: nothing could say where its content may go.
    """
    if not retrieved:
        return []
    documents_store, chunk_store = SQLITE_STORES.documents(conn), SQLITE_STORES.chunks(conn)
    rows = {row["uri"]: row for row in documents_store.quotable([doc.uri for doc in retrieved])}
    present = [
        doc
        for doc in retrieved
        if doc.uri in rows
        and rows[doc.uri]["mirror_hash"]
        and rows[doc.uri]["collection"] in configured
    ]
    mirrors = sorted({rows[doc.uri]["mirror_hash"] for doc in present})
    spans = chunk_spans(conn, mirrors)
    matches = _chunk_match(request)
    documents = []
    for doc in present:
        row = rows[doc.uri]
        mirror = row["mirror_hash"]
        ids = _best_chunks(chunk_store, spans.get(mirror), matches, request.passages_per_document)
        if ids:
            by_id = {int(chunk["id"]): chunk for chunk in chunk_store.lines(ids)}
            chunks = [by_id[i] for i in ids if i in by_id]
        else:  # no chunk holds the words: the one the hit is anchored at, else the first
            chunks = chunk_store.anchored(mirror, doc.line)
        content = documents_store.mirror(mirror)
        lines = content.split("\n") if content is not None else None
        documents.append(LoadedDocument(row=row, retrieved=doc, lines=lines, chunks=chunks))
    return documents
