"""Ranking documents on the tantivy index: the search request as one tantivy query.

:func:`ranker` says whether tantivy ranks this index's documents (and gives
the opened index, reloaded if SQLite is ahead of it); :class:`TantivyRanker`
answers the questions the lexical search, its diagnosis and the readiness
check ask of a document index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from gno_trio.engine.search.docindex import analysis, store
from gno_trio.engine.search.docindex.query import Occur, Query, QueryBuilder, unscored
from gno_trio.engine.search.querygrammar import LexicalQuery
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.document_filters import Filters
from gno_trio.errors import GnoError

SLACK: Final = 8
"""Extra hits fetched in case the newest SQLite rows retired some (the index lags a batch)."""


class TantivyRanker:
    """The questions search asks of the document index, answered by tantivy."""

    def __init__(self, opened: store.Opened, tokenizer: str) -> None:
        self._searcher = opened.searcher
        self._schema = opened.index.schema
        self._build = QueryBuilder(self._searcher, self._schema, tokenizer)

    def top(
        self,
        conn: Connection,
        parsed: LexicalQuery,
        filters: Filters,
        limit: int | None,
        *,
        any_term: bool,
    ) -> list[tuple[int, float]]:
        """(document id, BM25 score) of the best matches, best first; ``limit`` None: all."""
        clauses = self._build.text(parsed, any_term=any_term)
        if clauses is None:
            return []
        clauses += self._filters(conn, filters)
        return self._search(Query.boolean_query(clauses), limit)

    def matching_any(self, phrases: Sequence[str], doc_id: int | None = None) -> set[int]:
        """Documents (or just ``doc_id``) containing any of these exact phrases."""
        shoulds = [(Occur.Should, q) for _, q in self._build.excluded(phrases)]
        if not shoulds:
            return set()
        query = Query.boolean_query(shoulds)
        if doc_id is not None:
            query = Query.boolean_query(
                [(Occur.Must, query), (Occur.Must, self._build.document(doc_id))]
            )
        return {doc for doc, _ in self._search(query, None)}

    def holds(self, doc_id: int) -> bool:
        return self._count(self._build.document(doc_id)) > 0

    def collection_size(self, name: str) -> int:
        return self._count(self._build.collection(name))

    def _count(self, query: Query) -> int:
        found: Any = self._searcher.search(query, 1, count=True)  # the stub omits ``count``
        return int(found.count or 0)

    def _search(self, query: Query, limit: int | None) -> list[tuple[int, float]]:
        wanted = self._searcher.num_docs if limit is None else limit + SLACK
        if wanted <= 0:
            return []
        hits = self._searcher.search(query, wanted, count=False).hits
        if not hits:
            return []
        ids = self._searcher.fast_field_values(analysis.ID_FIELD, [addr for _, addr in hits])
        return [
            (int(doc), float(score))
            for (score, _), doc in zip(hits, ids, strict=True)
            if doc is not None and doc != analysis.STAMP_ID
        ]

    def _filters(self, conn: Connection, filters: Filters) -> list[tuple[Occur, Query]]:
        build = self._build
        musts: list[Query] = []
        if filters.collection:
            musts.append(build.collection(filters.collection))
        if filters.uri_prefix:
            musts.append(build.uri_prefix(filters.uri_prefix))
        if filters.since or filters.until:
            days = SQLITE_STORES.document_index(conn).julian_days(filters.since, filters.until)
            musts.append(build.dated(*days))
        musts += build.tags_all(filters.tags_all)
        if filters.tags_any:
            musts.append(build.tags_any(filters.tags_any))
        if filters.categories:
            musts.append(build.categories(filters.categories))
        if filters.author:
            musts.append(build.author(filters.author))
        if filters.lang:
            musts.append(build.language(filters.lang))
        clauses = [(Occur.Must, unscored(q)) for q in musts]
        return clauses + self._build.excluded(filters.exclude)


def ranker(conn: Connection) -> TantivyRanker | None:
    """The tantivy ranker of this index, or None when FTS5 ranks its documents.

    ``RUNTIME`` when tantivy should rank but its index cannot be read (it is
    rebuilt by the next sync, or the next open that gets the write lease).
    """
    now = store.state(conn)
    if now.mode != store.TANTIVY:
        return None
    opened = store.READERS.current(conn, now)
    if opened is None:
        raise GnoError(
            "RUNTIME",
            "The document index is missing or damaged; it is rebuilt by the next "
            "`gno-trio update` (or the next start that can take the write lease).",
        )
    return TantivyRanker(opened, now.tokenizer)


__all__ = ["TantivyRanker", "ranker"]
