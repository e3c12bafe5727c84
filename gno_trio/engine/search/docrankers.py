"""Lexical ranking of documents: one protocol, three rankers, chosen once per snapshot.

A search ranks documents by BM25 on whichever index ranks this state of
the index: FTS5's ``documents_fts`` (``bm25()`` in SQL), the document index
a serving process holds in memory (:mod:`.docmemory`, FTS5's arithmetic
and tie order), or tantivy's (:mod:`.docindex`, when ``search.backend``
says so). :func:`document_ranker` picks one for a snapshot (one read
transaction) and every step of the request that ranks, counts or checks
documents asks that one, instead of branching on the backend itself.

Whatever ranks, one rule holds (:func:`ranked_with_top_up`): documents
matching every term first, then, when they are too few, documents
matching only some terms, scaled below the weakest full match so the
order stays honest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Protocol

from gno_trio.engine.search import docmemory
from gno_trio.engine.search.chunkmemory import ChunkMemory
from gno_trio.engine.search.docindex.ranking import TantivyRanker, ranker
from gno_trio.engine.search.keyruns import listed_keys
from gno_trio.engine.search.querygrammar import LexicalQuery, fts_quote
from gno_trio.engine.search.request import SearchRequest, document_filter_for, request_filters
from gno_trio.engine.search.results import result_rows
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.store.document_filters import DocumentFilter, Filters
from gno_trio.engine.store.scratch_fulltext import Tokenized

Ranked = list[tuple[RowView, float]]
"""Result rows (:data:`~gno_trio.engine.store.search_documents.RESULT_COLUMNS`) and their
raw BM25 score, best first."""


class DocumentRanker(Protocol):
    """How one state of the index ranks, counts and checks documents lexically."""

    name: str
    """``fts5``, ``memory`` or ``tantivy``."""

    def rank(
        self, parsed: LexicalQuery, request: SearchRequest, fetch: int, said: Tokenized | None
    ) -> Ranked:
        """Up to ``fetch`` filtered documents, full matches topped up with any-term ones
        (``said``: the request's tokenizations, shared with its other steps)."""
        ...

    def matches(
        self, parsed: LexicalQuery, request: SearchRequest, *, any_term: bool
    ) -> list[tuple[int, float]]:
        """Every filtered document matching (``any_term``: some term, the top-up form),
        with its raw score rounded as diagnosis shows it, best first."""
        ...

    def holds(self, doc_id: int) -> bool:
        """Whether this ranker's index holds the document."""
        ...

    def unranked(self, collection: str) -> int:
        """Active documents of a collection this ranker's index does not hold (yet)."""
        ...


def relaxed_match(parsed: LexicalQuery) -> str | None:
    """Any-term form of a multi-term query (negations kept), or None."""
    if len(parsed.positive_terms) + len(parsed.phrases) < 2:
        return None
    if not parsed.negative_terms:
        return parsed.any_match
    negatives = " OR ".join(
        fts_quote(t) if " " in t else fts_quote(t) + "*" for t in parsed.negative_terms
    )
    return f"({parsed.any_match}) NOT ({negatives})"


def ranked_with_top_up(
    parsed: LexicalQuery, fetch: int, run: Callable[[str, int], Ranked]
) -> Ranked:
    """``run(match, limit)`` for the full match, topped up from the any-term match."""
    strict = run(parsed.match, fetch)
    relaxed = relaxed_match(parsed)
    if len(strict) >= fetch or relaxed is None:
        return strict
    seen = {int(row["id"]) for row, _ in strict}
    extra = [pair for pair in run(relaxed, fetch + len(seen)) if int(pair[0]["id"]) not in seen]
    return topped_up(strict, extra[: fetch - len(strict)])


def topped_up(strict: Ranked, extra: Ranked) -> Ranked:
    """Full matches, then the any-term ones scaled below the weakest full match."""
    if strict and extra:
        floor = min(score for _, score in strict)
        top = max(score for _, score in extra)
        if top > 0 and floor > 0:
            factor = 0.5 * floor / top
            extra = [(row, score * factor) for row, score in extra]
    return strict + extra


class Fts5Ranker:
    """FTS5's ``bm25()`` over ``documents_fts``, in SQL."""

    name = "fts5"

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def rank(
        self, parsed: LexicalQuery, request: SearchRequest, fetch: int, said: Tokenized | None
    ) -> Ranked:
        return self._rank_filtered(parsed, request_filters(self.conn, request), fetch)

    def _rank_filtered(self, parsed: LexicalQuery, filters: Filters, fetch: int) -> Ranked:
        where = document_filter_for(self.conn, filters)
        return ranked_with_top_up(parsed, fetch, self._runner(where))

    def _runner(self, where: DocumentFilter) -> Callable[[str, int], Ranked]:
        """The ranking of this filter, run for one match and limit."""
        matches = SQLITE_STORES.document_matches(self.conn)
        return lambda match, limit: matches.ranked(match, where, limit)

    def matches(
        self, parsed: LexicalQuery, request: SearchRequest, *, any_term: bool
    ) -> list[tuple[int, float]]:
        match = relaxed_match(parsed) if any_term else parsed.match
        if match is None:
            return []
        where = document_filter_for(self.conn, request_filters(self.conn, request))
        found = SQLITE_STORES.document_matches(self.conn).matching(match, where)
        return [(doc, round(score, 6)) for doc, score in found]

    def holds(self, doc_id: int) -> bool:
        return SQLITE_STORES.document_matches(self.conn).holds(doc_id)

    def unranked(self, collection: str) -> int:
        return SQLITE_STORES.document_matches(self.conn).unindexed(collection)


class MemoryRanker(Fts5Ranker):
    """The document index a serving process holds (:mod:`.docmemory`): FTS5's answers
    without its statements, for requests whose rows are read cheaply (none filtered, or
    one collection's); any other filter, and any match the held index cannot take, ranks
    on FTS5."""

    name = "memory"

    def __init__(self, conn: Connection, held: ChunkMemory) -> None:
        super().__init__(conn)
        self.held = held

    def rank(
        self, parsed: LexicalQuery, request: SearchRequest, fetch: int, said: Tokenized | None
    ) -> Ranked:
        documents = self.held.documents
        filters = request_filters(self.conn, request)
        if documents is None or not _read_cheaply(filters):
            return self._rank_filtered(parsed, filters, fetch)
        where = document_filter_for(self.conn, filters)
        among = (
            None
            if where.unfiltered
            else listed_keys(SQLITE_STORES.search_documents(self.conn).ids_passing(where))
        )
        spoken = said if said is not None else Tokenized(self.held.tokenize)
        on_fts5 = self._runner(where)

        def run(match: str, limit: int) -> Ranked:
            with contextlib.suppress(docmemory.Unsupported):
                ranked = documents.ranked(match, limit, spoken, among)
                rows = result_rows(self.conn, [doc for doc, _ in ranked])
                return [(rows[doc], -rank) for doc, rank in ranked if doc in rows]
            return on_fts5(match, limit)

        return ranked_with_top_up(parsed, fetch, run)


def _read_cheaply(filters: Filters) -> bool:
    """Whether the rows these filters keep are read from an index: none, or a
    collection's. Any other filter tests every document; FTS5 tests only the
    matching ones, which costs less for all but the commonest words."""
    return filters == Filters(collection=filters.collection)


class TantivyDocuments:
    """Tantivy's document index (``search.backend: tantivy``), SQLite reading the rows."""

    name = "tantivy"

    def __init__(self, conn: Connection, tantivy: TantivyRanker) -> None:
        self.conn = conn
        self.tantivy = tantivy

    def rank(
        self, parsed: LexicalQuery, request: SearchRequest, fetch: int, said: Tokenized | None
    ) -> Ranked:
        conn, tantivy = self.conn, self.tantivy
        filters = request_filters(conn, request)
        strict_ids = tantivy.top(conn, parsed, filters, fetch, any_term=False)
        extra_ids: list[tuple[int, float]] = []
        if len(strict_ids) < fetch and relaxed_match(parsed) is not None:
            seen = {doc for doc, _ in strict_ids}
            extra_ids = [
                hit
                for hit in tantivy.top(conn, parsed, filters, fetch + len(seen), any_term=True)
                if hit[0] not in seen
            ]
        rows = result_rows(conn, [doc for doc, _ in (*strict_ids, *extra_ids)])
        # The index may lag SQLite by a batch: a document retired since is skipped.
        strict = [(rows[doc], score) for doc, score in strict_ids if doc in rows][:fetch]
        extra = [(rows[doc], score) for doc, score in extra_ids if doc in rows]
        return topped_up(strict, extra[: fetch - len(strict)])

    def matches(
        self, parsed: LexicalQuery, request: SearchRequest, *, any_term: bool
    ) -> list[tuple[int, float]]:
        filters = request_filters(self.conn, request)
        found = self.tantivy.top(self.conn, parsed, filters, None, any_term=any_term)
        return [(doc, round(score, 6)) for doc, score in found]

    def holds(self, doc_id: int) -> bool:
        return self.tantivy.holds(doc_id)

    def unranked(self, collection: str) -> int:
        active = SQLITE_STORES.counts(self.conn).active_documents(collection)
        return max(0, active - self.tantivy.collection_size(collection))


def document_ranker(conn: Connection, held: ChunkMemory | None = None) -> DocumentRanker:
    """The ranker of the index state ``conn`` reads (``held``: that state's memory,
    :func:`.chunkkeeper.current`, when the process holds one)."""
    tantivy = ranker(conn)
    if tantivy is not None:
        return TantivyDocuments(conn, tantivy)
    if held is not None and held.documents is not None:
        return MemoryRanker(conn, held)
    return Fts5Ranker(conn)


__all__ = [
    "DocumentRanker",
    "Fts5Ranker",
    "MemoryRanker",
    "Ranked",
    "TantivyDocuments",
    "document_ranker",
    "relaxed_match",
    "topped_up",
]
