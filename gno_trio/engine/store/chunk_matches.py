"""The chunk full-text index as search asks it: matching chunks, their scores and snippets.

``chunks_fts`` has two columns, the chunk ``text`` and its ``mirror_hash``,
so one statement ranks or cuts the chunks of many documents at once: the
expression (already restricted to the text column by the caller) is ANDed
with the documents' mirror hashes. Its stored figures (FTS5's averages
record, each chunk's token counts) are decoded here too, so search ranks
chunks as FTS5 would without knowing its record format. Like the document
index it is a cache derived on each host; the protocol names what it
answers.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import stored_tokenizer

Span = tuple[int, int]
"""A mirror's first and last chunk id."""
ChunkPlace = tuple[str, int, int, str | None]
"""``(text, start_line, end_line, language)`` of a chunk."""
CutRow = tuple[int, str, str, int, int, str | None]
"""``(chunk id, snippet, text, start_line, end_line, language)``."""
ChunkLines = tuple[int, int, int, str | None]
"""``(seq, start_line, end_line, language)`` of a chunk."""

_AVERAGES_SQL: Final = "SELECT block FROM chunks_fts_data WHERE id = 1"
"""The chunk index's averages record (FTS5 keeps it at id 1 of its data table)."""


def varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers, one after another (FTS5's record format)."""
    values = []
    index = 0
    while index < len(blob):
        value = 0
        for step in range(9):
            byte = blob[index]
            index += 1
            if step == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def totals_of(averages: bytes | None) -> tuple[int, int] | None:
    """(rows, tokens in all columns) from a full-text index's averages record."""
    if not averages:
        return None
    values = varints(bytes(averages))
    return values[0], sum(values[1:])


def _mirrors_match(expression: str, mirrors: Iterable[str]) -> str:
    hashes = " OR ".join('"' + mirror.replace('"', '""') + '"' for mirror in mirrors)
    return f"{expression} AND mirror_hash : ({hashes})"


class ChunkMatchStore(Protocol):
    """Chunks matching a full-text expression, and the index figures bm25 reads."""

    def totals(self) -> tuple[int, int] | None:
        """(chunks, tokens in all columns) of the index, as FTS5 stored them."""
        ...

    def tokenizer_and_totals(self) -> tuple[str | None, tuple[int, int] | None]:
        """The index's tokenizer setting and :meth:`totals`, in one read."""
        ...

    def lengths(self, spans: Sequence[Span]) -> dict[int, int]:
        """Tokens in each chunk of these id ranges (all columns), as FTS5 recorded them."""
        ...

    def state_key(self) -> tuple[str, bytes]:
        """The database file and the index's structure record: equal while the index
        does not change."""
        ...

    def count(self, expression: str) -> int:
        """Chunks ``expression`` matches in the whole index."""
        ...

    def spans(self, mirrors: Sequence[str]) -> dict[str, Span]:
        """First and last chunk id of each mirror (those with chunks)."""
        ...

    def scored(self, expression: str, mirrors: Iterable[str]) -> list[tuple[int, float]]:
        """(chunk id, bm25 on the text) of the chunks of ``mirrors`` that ``expression``
        matches, in chunk id order; empty for a malformed expression."""
        ...

    def places(self, chunk_ids: Sequence[int]) -> dict[int, ChunkPlace]:
        """Text, line range and language of each of these chunks."""
        ...

    def cut(
        self,
        chunk_ids: Sequence[int],
        expression: str,
        mirrors: Iterable[str],
        marks: tuple[str, str, str, int],
    ) -> list[CutRow]:
        """``snippet(text, open, close, ellipsis, tokens)`` of each of these chunks (of
        ``mirrors``) that ``expression`` matches; empty for a malformed expression."""
        ...

    def opening(self, mirror: str) -> ChunkPlace | None:
        """The mirror's first chunk."""
        ...

    def best_lines(self, expression: str, span: Span) -> ChunkLines | None:
        """The best chunk of the id range that ``expression`` matches (bm25, then id)."""
        ...

    def lines_at(self, mirror: str, seq: int) -> ChunkLines | None: ...

    def lines_of(self, chunk_id: int) -> ChunkLines | None: ...

    def count_of(self, mirror: str) -> int:
        """Chunks of a mirror."""
        ...


class SqliteChunkMatches:
    """:class:`ChunkMatchStore` on FTS5's ``chunks_fts``."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def totals(self) -> tuple[int, int] | None:
        row = self._conn.execute(_AVERAGES_SQL).fetchone()
        return None if row is None else totals_of(row[0])

    def tokenizer_and_totals(self) -> tuple[str | None, tuple[int, int] | None]:
        try:
            tokenizer, averages = self._conn.execute(
                "SELECT (SELECT value FROM schema_meta WHERE key = 'fts_tokenizer'), "
                f"({_AVERAGES_SQL})"
            ).fetchone()
        except sqlite3.OperationalError:  # an index from before the schema table
            return stored_tokenizer(self._conn), None
        return (str(tokenizer) if tokenizer else None), totals_of(averages)

    def lengths(self, spans: Sequence[Span]) -> dict[int, int]:
        lengths: dict[int, int] = {}
        for first, last in spans:
            for chunk_id, sizes in self._conn.execute(
                "SELECT id, sz FROM chunks_fts_docsize WHERE id BETWEEN ? AND ?", (first, last)
            ):
                lengths[int(chunk_id)] = sum(varints(bytes(sizes)))
        return lengths

    def state_key(self) -> tuple[str, bytes]:
        listed = self._conn.execute("PRAGMA database_list").fetchall()
        path = next((str(row[2]) for row in listed if row[1] == "main"), "")
        row = self._conn.execute("SELECT block FROM chunks_fts_data WHERE id = 10").fetchone()
        return path, bytes(row[0]) if row and row[0] else b""

    def count(self, expression: str) -> int:
        row = self._conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (expression,)
        ).fetchone()
        return int(row[0])

    def spans(self, mirrors: Sequence[str]) -> dict[str, Span]:
        if not mirrors:
            return {}
        marks = ", ".join("?" for _ in mirrors)
        return {
            row[0]: (int(row[1]), int(row[2]))
            for row in self._conn.execute(
                f"SELECT mirror_hash, MIN(id), MAX(id) FROM content_chunks "
                f"WHERE mirror_hash IN ({marks}) GROUP BY mirror_hash",
                tuple(mirrors),
            )
        }

    def scored(self, expression: str, mirrors: Iterable[str]) -> list[tuple[int, float]]:
        cursor = self._conn.cursor()
        cursor.row_factory = None
        try:
            rows: list[tuple[int, float]] = cursor.execute(
                "SELECT rowid, bm25(chunks_fts, 1.0, 0.0) FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY rowid",
                (_mirrors_match(expression, mirrors),),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        finally:
            cursor.close()
        return rows

    def places(self, chunk_ids: Sequence[int]) -> dict[int, ChunkPlace]:
        if not chunk_ids:
            return {}
        return {
            int(row[0]): (str(row[1]), int(row[2]), int(row[3]), row[4])
            for row in self._conn.execute(
                "SELECT c.id, t.text, c.start_line, c.end_line, c.language "
                "FROM json_each(?) wanted "
                "CROSS JOIN content_chunks c ON c.id = wanted.value "
                "CROSS JOIN chunk_texts t ON t.id = c.id",
                (json.dumps(list(chunk_ids)),),
            )
        }

    def cut(
        self,
        chunk_ids: Sequence[int],
        expression: str,
        mirrors: Iterable[str],
        marks: tuple[str, str, str, int],
    ) -> list[CutRow]:
        # The mirrors narrow the match, so FTS5 sets the expression up once for the
        # statement, not once per rowid asked for; the rows kept are the ones asked for
        # (``+rowid``: a filter, never an index lookup). The mirror phrases are in the
        # other column, which snippet() of the text column never looks at. Each kept
        # row's line range comes with it (the full-text scan stays the outer loop).
        try:
            rows: list[CutRow] = self._conn.execute(
                "SELECT f.rowid, snippet(chunks_fts, 0, ?, ?, ?, ?), f.text, c.start_line, "
                "c.end_line, c.language FROM chunks_fts f CROSS JOIN content_chunks c "
                "ON c.id = f.rowid WHERE chunks_fts MATCH ? "
                "AND +f.rowid IN (SELECT value FROM json_each(?))",
                (*marks, _mirrors_match(expression, mirrors), json.dumps(list(chunk_ids))),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        return rows

    def opening(self, mirror: str) -> ChunkPlace | None:
        row = self._conn.execute(
            "SELECT t.text, c.start_line, c.end_line, c.language FROM content_chunks c "
            "JOIN chunk_texts t ON t.id = c.id WHERE c.mirror_hash = ? ORDER BY c.seq LIMIT 1",
            (mirror,),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def best_lines(self, expression: str, span: Span) -> ChunkLines | None:
        row = self._conn.execute(
            "SELECT c.seq, c.start_line, c.end_line, c.language FROM chunks_fts f "
            "JOIN content_chunks c ON c.id = f.rowid WHERE chunks_fts MATCH ? "
            "AND f.rowid BETWEEN ? AND ? ORDER BY f.rank, f.rowid LIMIT 1",
            (expression, span[0], span[1]),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def lines_at(self, mirror: str, seq: int) -> ChunkLines | None:
        row = self._conn.execute(
            "SELECT seq, start_line, end_line, language FROM content_chunks "
            "WHERE mirror_hash = ? AND seq = ?",
            (mirror, seq),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def lines_of(self, chunk_id: int) -> ChunkLines | None:
        row = self._conn.execute(
            "SELECT seq, start_line, end_line, language FROM content_chunks WHERE id = ?",
            (chunk_id,),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def count_of(self, mirror: str) -> int:
        row = self._conn.execute(
            "SELECT COUNT(*) FROM content_chunks WHERE mirror_hash = ?", (mirror,)
        ).fetchone()
        return int(row[0])


__all__ = [
    "ChunkLines",
    "ChunkMatchStore",
    "ChunkPlace",
    "CutRow",
    "Span",
    "SqliteChunkMatches",
    "totals_of",
    "varints",
]
