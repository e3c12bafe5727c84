"""What a serving process reads to hold the full-text indexes in memory, all in one snapshot.

The in-memory chunk and document indexes
(:mod:`gno_trio.engine.search.chunkkeeper`) are copies of FTS5's own:
every posting through ``fts5vocab`` (as one joined string of packed
integers, which numpy parses without a Python object per posting), each
row's token counts from the ``docsize`` tables, the chunk texts and the
documents' metadata fields. A copy is keyed by the state of both indexes
(FTS5's structure and averages records, rewritten by every change).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any, Final, Protocol

from gno_trio.engine.store.chunk_matches import totals_of, varints
from gno_trio.engine.store.fulltext import DOCUMENT_FIELDS

IndexState = tuple[str, tuple[bytes, ...]]
"""The database file and the records that change with either index."""
ChunkCopyRow = tuple[int, str, int, int, str | None, list[int]]
"""``(chunk id, text, start_line, end_line, language, tokens per column)``."""
Postings = tuple[list[tuple[Any, ...]], str | None]
"""Each term's row of ``fts5vocab`` and every posting packed as one comma-joined string."""

_STATE_SQL: Final = (
    "SELECT (SELECT file FROM pragma_database_list WHERE name = 'main'), "
    "(SELECT block FROM chunks_fts_data WHERE id = 10), "
    "(SELECT block FROM chunks_fts_data WHERE id = 1), "
    "(SELECT block FROM documents_fts_data WHERE id = 10), "
    "(SELECT block FROM documents_fts_data WHERE id = 1)"
)
_COLUMN_NUMBER: Final = " ".join(
    f"WHEN '{name}' THEN {n}" for n, name in enumerate(DOCUMENT_FIELDS)
)


def _vocabularies(conn: sqlite3.Connection, table: str, views: Mapping[str, str]) -> None:
    """Open ``fts5vocab`` views of ``table`` (name -> kind: instance, row, col), private
    to the connection."""
    for name, kind in views.items():
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, {table}, {kind})"
        )


class FullTextCopyStore(Protocol):
    """The full-text indexes read whole, for a copy held in memory."""

    def state(self) -> IndexState:
        """What keys a copy: equal while neither index changes (one read, per search)."""
        ...

    def snapshot(self) -> contextlib.AbstractContextManager[IndexState]:
        """One read transaction for a whole build, and the state it reads."""
        ...

    def chunk_totals(self, state: IndexState) -> tuple[int, int] | None:
        """(chunks, tokens) of the chunk index, from the state read."""
        ...

    def chunk_postings(self, offset_bits: int) -> Postings:
        """Term rows ``(term, chunk id, count)`` of the text column, and every posting as
        ``chunk id << offset_bits | token offset``."""
        ...

    def chunk_rows(self) -> list[ChunkCopyRow]: ...

    def document_totals(self) -> tuple[int, int] | None:
        """(documents, tokens) of the document index."""
        ...

    def document_postings(self, doc_shift: int, column_bits: int) -> Postings:
        """Term rows ``(term, count)``, and every posting as ``doc << doc_shift | column
        << column_bits | token offset`` (columns numbered in ``DOCUMENT_FIELDS`` order)."""
        ...

    def document_lengths(self) -> dict[int, int]:
        """Tokens (all columns) of each indexed document."""
        ...

    def document_metadata(self) -> list[tuple[Any, ...]]:
        """Each indexed document's filepath, title, author, tags and categories fields."""
        ...


class SqliteFullTextCopy:
    """:class:`FullTextCopyStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def state(self) -> IndexState:
        path, *blocks = self._conn.execute(_STATE_SQL).fetchone()
        return str(path), tuple(bytes(block or b"") for block in blocks)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[IndexState]:
        self._conn.execute("BEGIN")
        try:
            yield self.state()
        finally:
            self._conn.execute("ROLLBACK")

    def chunk_totals(self, state: IndexState) -> tuple[int, int] | None:
        return totals_of(state[1][1])

    def chunk_postings(self, offset_bits: int) -> Postings:
        _vocabularies(self._conn, "chunks_fts", {"chunk_words": "instance", "chunk_terms": "col"})
        listed = self._conn.execute(
            "SELECT term, doc, cnt FROM temp.chunk_terms WHERE col = 'text'"
        ).fetchall()
        joined = self._conn.execute(
            f"SELECT group_concat((doc << {offset_bits}) | offset) FROM temp.chunk_words "
            "WHERE col = 'text'"
        ).fetchone()[0]
        return listed, joined

    def chunk_rows(self) -> list[ChunkCopyRow]:
        return [
            (row[0], row[1], row[2], row[3], row[4], varints(bytes(row[5])))
            for row in self._conn.execute(
                "SELECT c.id, t.text, c.start_line, c.end_line, c.language, s.sz "
                "FROM content_chunks c JOIN chunk_texts t ON t.id = c.id "
                "JOIN chunks_fts_docsize s ON s.id = c.id"
            )
        ]

    def document_totals(self) -> tuple[int, int] | None:
        averages = self._conn.execute(
            "SELECT block FROM documents_fts_data WHERE id = 1"
        ).fetchone()
        return totals_of(averages[0] if averages else None)

    def document_postings(self, doc_shift: int, column_bits: int) -> Postings:
        _vocabularies(
            self._conn,
            "documents_fts",
            {"document_words": "instance", "document_terms": "row"},
        )
        listed = self._conn.execute("SELECT term, cnt FROM temp.document_terms").fetchall()
        joined = self._conn.execute(
            f"SELECT group_concat((doc << {doc_shift}) | ((CASE col {_COLUMN_NUMBER} END) "
            f"<< {column_bits}) | offset) FROM temp.document_words"
        ).fetchone()[0]
        return listed, joined

    def document_lengths(self) -> dict[int, int]:
        return {
            int(row_id): sum(varints(bytes(blob)))
            for row_id, blob in self._conn.execute("SELECT id, sz FROM documents_fts_docsize")
        }

    def document_metadata(self) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self._conn.execute(
            "SELECT filepath, title, author, tags, categories FROM documents_fts"
        ).fetchall()
        return rows


__all__ = ["ChunkCopyRow", "FullTextCopyStore", "IndexState", "SqliteFullTextCopy"]
