"""The document full-text index as search asks it: which documents match, ranked by BM25.

``documents_fts`` (:mod:`.fulltext`) answers a full-text expression (the
query grammar of :mod:`gno_trio.engine.search.querygrammar`) with documents
scored by ``bm25()`` under the fields' weights. It is a cache derived from
the documents on each host, so the protocol says what it answers, not how:
an index on another host answers the same questions from its own copy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView, mapped_rows
from gno_trio.engine.store.document_filters import ACTIVE, DocumentFilter
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS
from gno_trio.engine.store.search_documents import RESULT_COLUMNS

_WEIGHTS: Final = ", ".join(str(w) for w in FIELD_WEIGHTS)


class DocumentMatchStore(Protocol):
    """Documents matching a full-text expression, by their BM25 score."""

    def ranked(self, match: str, where: DocumentFilter, limit: int) -> list[tuple[RowView, float]]:
        """Up to ``limit`` documents passing ``where`` that ``match`` finds, best first:
        their result rows (:data:`.search_documents.RESULT_COLUMNS`) and raw scores."""
        ...

    def matching(self, match: str, where: DocumentFilter) -> list[tuple[int, float]]:
        """Every document passing ``where`` that ``match`` finds, best first, with its
        raw score."""
        ...

    def holds(self, doc_id: int) -> bool:
        """Whether the index holds the document."""
        ...

    def unindexed(self, collection: str) -> int:
        """Active documents of a collection the index does not hold."""
        ...

    def documents_beginning(self, terms: Sequence[str]) -> dict[str, int]:
        """For each index term, the documents holding a word it begins, summed over
        those words (an upper bound of its document frequency)."""
        ...


def _rank_sql(filters: str) -> str:
    """Rank first (cut to the limit), then read result columns for the top rows only."""
    if filters:
        ranked = (
            f"SELECT d.id AS id, bm25(documents_fts, {_WEIGHTS}) AS rank "
            f"FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid "
            f"WHERE documents_fts MATCH ? AND {filters} ORDER BY rank LIMIT ?"
        )
    else:
        # Inactive documents are not in the FTS index, so with no other
        # filter no document row is read before the cut.
        ranked = (
            f"SELECT rowid AS id, bm25(documents_fts, {_WEIGHTS}) AS rank "
            f"FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rank LIMIT ?"
        )
    return (
        f"WITH top AS ({ranked}) SELECT {RESULT_COLUMNS}, top.rank "
        f"FROM top JOIN documents d ON d.id = top.id WHERE {ACTIVE} ORDER BY top.rank"
    )


_UNFILTERED_RANK_SQL: Final = _rank_sql("")


class SqliteDocumentMatches:
    """:class:`DocumentMatchStore` on FTS5's ``documents_fts``."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def ranked(self, match: str, where: DocumentFilter, limit: int) -> list[tuple[RowView, float]]:
        if where.unfiltered:
            sql, params = _UNFILTERED_RANK_SQL, (match, limit)
        else:
            sql, params = _rank_sql(where.where), (match, *where.params, limit)
        return [(row, -float(row["rank"])) for row in mapped_rows(self._conn.execute(sql, params))]

    def matching(self, match: str, where: DocumentFilter) -> list[tuple[int, float]]:
        rows = self._conn.execute(
            f"SELECT d.id, bm25(documents_fts, {_WEIGHTS}) AS rank FROM documents_fts "
            f"JOIN documents d ON d.id = documents_fts.rowid "
            f"WHERE documents_fts MATCH ? AND {where.where} ORDER BY rank",
            (match, *where.params),
        ).fetchall()
        return [(int(row[0]), -float(row[1])) for row in rows]

    def holds(self, doc_id: int) -> bool:
        found = self._conn.execute("SELECT 1 FROM documents_fts WHERE rowid = ?", (doc_id,))
        return found.fetchone() is not None

    def unindexed(self, collection: str) -> int:
        row = self._conn.execute(
            "SELECT COUNT(*) FROM documents d WHERE d.collection = ? AND d.active = 1 "
            "AND NOT EXISTS (SELECT 1 FROM documents_fts f WHERE f.rowid = d.id)",
            (collection,),
        ).fetchone()
        return int(row[0])

    def documents_beginning(self, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.evidence_words "
            "USING fts5vocab(main, documents_fts, row)"
        )
        found = {}
        for term in dict.fromkeys(terms):
            (docs,) = self._conn.execute(
                "SELECT coalesce(sum(doc), 0) FROM temp.evidence_words "
                "WHERE term >= ? AND term < ?",
                (term, term + "\U0010ffff"),
            ).fetchone()
            found[term] = int(docs)
        return found


__all__ = ["DocumentMatchStore", "SqliteDocumentMatches"]
