"""Where chunk text is read: the statements over content chunks, behind one protocol.

Chunks are identified by ``(mirror_hash, seq)`` everywhere (vectors,
fusion, the embed backlog); their text is cut from the document's mirror
(the ``chunk_texts`` view). :mod:`gno_trio.engine.vectors.chunktext` turns
these rows into chunk texts and window places; this module only reads them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Protocol

from gno_trio.engine.store.database import RowView

ChunkRow = tuple[str, int, str, int, int, str | None, int | None]
"""``(mirror_hash, seq, text, start_line, end_line, language, byte_pos)``."""


class ChunkStore(Protocol):
    """The content chunks of one index, read by identity."""

    def texts(self, keys: Sequence[tuple[str, int]], *, byte_pos: bool) -> list[ChunkRow]:
        """The chunks of ``keys`` that exist; ``byte_pos`` (else None) is where each starts
        in its mirror's UTF-8 bytes."""
        ...

    def holds(self, mirror_hash: str) -> bool:
        """Whether the mirror has any chunk (some content to search)."""
        ...

    def latest_id(self) -> int:
        """The newest chunk's id (0 for none): it grows whenever a chunk is added."""
        ...

    def text_is_utf8(self) -> bool:
        """Whether text is stored as UTF-8 (the bytes places count)."""
        ...

    def matching_in_range(self, match: str, first: int, last: int, limit: int) -> list[int]:
        """Ids of the chunks ``first`` .. ``last`` (one mirror's) that the full-text
        expression ``match`` finds, best first; none for an expression the index refuses."""
        ...

    def lines(self, ids: Sequence[int]) -> list[RowView]:
        """``id``, ``start_line``, ``end_line`` and ``language`` of the chunks ``ids``
        (those that exist, in no particular order)."""
        ...

    def anchored(self, mirror_hash: str, line: int | None) -> list[RowView]:
        """The same columns of the mirror's chunk holding ``line``, else its first chunk."""
        ...


class SqliteChunks:
    """:class:`ChunkStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def texts(self, keys: Sequence[tuple[str, int]], *, byte_pos: bool) -> list[ChunkRow]:
        if not keys:
            return []
        where = (
            # A chunk written since version 21 knows its byte offset; an older one's is
            # counted out of the mirror's characters.
            ", COALESCE(c.byte_pos, length(CAST(substr(m.markdown, 1, c.pos) AS BLOB))) "
            "FROM json_each(?) k "
            "JOIN content_chunks c ON c.mirror_hash = json_extract(k.value, '$[0]') "
            "AND c.seq = json_extract(k.value, '$[1]') "
            "JOIN content m ON m.mirror_hash = c.mirror_hash"
            if byte_pos
            else ", NULL FROM json_each(?) k JOIN content_chunks c "
            "ON c.mirror_hash = json_extract(k.value, '$[0]') "
            "AND c.seq = json_extract(k.value, '$[1]')"
        )
        rows = self._conn.execute(
            "SELECT c.mirror_hash, c.seq, t.text, c.start_line, c.end_line, c.language"
            f"{where} JOIN chunk_texts t ON t.id = c.id",
            (json.dumps([[mirror, seq] for mirror, seq in keys]),),
        )
        return [
            (
                str(row[0]),
                int(row[1]),
                row[2],
                int(row[3]),
                int(row[4]),
                row[5],
                None if row[6] is None else int(row[6]),
            )
            for row in rows
        ]

    def holds(self, mirror_hash: str) -> bool:
        found = self._conn.execute(
            "SELECT 1 FROM content_chunks WHERE mirror_hash = ? LIMIT 1", (mirror_hash,)
        )
        return found.fetchone() is not None

    def latest_id(self) -> int:
        row = self._conn.execute("SELECT MAX(id) FROM content_chunks").fetchone()
        return int(row[0] or 0)

    def text_is_utf8(self) -> bool:
        row = self._conn.execute("PRAGMA encoding").fetchone()
        return row is not None and str(row[0]).upper() == "UTF-8"

    def matching_in_range(self, match: str, first: int, last: int, limit: int) -> list[int]:
        try:
            rows = self._conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
                "AND rowid BETWEEN ? AND ? ORDER BY rank, rowid LIMIT ?",
                (match, first, last, limit),
            ).fetchall()
        except sqlite3.OperationalError:  # an expression FTS5 cannot parse finds nothing
            return []
        return [int(row[0]) for row in rows]

    def lines(self, ids: Sequence[int]) -> list[RowView]:
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        rows: list[RowView] = self._conn.execute(
            f"SELECT id, start_line, end_line, language FROM content_chunks WHERE id IN ({marks})",
            tuple(ids),
        ).fetchall()
        return rows

    def anchored(self, mirror_hash: str, line: int | None) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            "SELECT id, start_line, end_line, language FROM content_chunks "
            "WHERE mirror_hash = ? ORDER BY (? BETWEEN start_line AND end_line) DESC, seq "
            "LIMIT 1",
            (mirror_hash, line),
        ).fetchall()
        return rows


__all__ = ["ChunkRow", "ChunkStore", "SqliteChunks"]
