"""Where sentence-window vectors are kept: their statements, behind one protocol.

Beside each chunk's window vectors, a chunk's sentence windows get vectors
of their own (:mod:`gno_trio.engine.vectors.sentences` says which windows
and how they score); a chunk with none gets one empty row (``part`` below
zero) so it leaves the backlog. Rows exist only for chunks that exist and
only while the chunk keeps vectors of the model.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol

SentenceRow = tuple[int, str, int, int, bytes, float]
"""``(model_id, mirror_hash, seq, part, codes, scale)``."""


class SentenceVectorStore(Protocol):
    """The sentence-window vectors of one index."""

    def add(self, rows: Sequence[SentenceRow]) -> None:
        """Insert rows of chunks that still exist; a row already stored is left as it is."""
        ...

    def backlog(self, model_id: int, after: int, limit: int) -> list[tuple[int, str, int]]:
        """Chunks ``(id, mirror_hash, seq)`` of active documents with vectors of the model
        but no sentence rows yet, by chunk id after ``after``."""
        ...

    def drop_unbacked(self) -> int:
        """Delete the rows of chunks without vectors of their model; how many went."""
        ...

    def of_documents(self, model_id: int, doc_ids: Sequence[int]) -> list[tuple[int, bytes, float]]:
        """``(document id, codes, scale)`` of every sentence window of the documents."""
        ...

    def disk_use(self) -> tuple[int, int]:
        """How many sentence windows are stored, and the bytes they take."""
        ...


class SqliteSentenceVectors:
    """:class:`SentenceVectorStore` on one SQLite connection (``sentence_vectors``)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def add(self, rows: Sequence[SentenceRow]) -> None:
        self._conn.executemany(
            "INSERT OR IGNORE INTO sentence_vectors (model_id, mirror_hash, seq, part, codes, "
            "scale) SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS "
            "(SELECT 1 FROM content_chunks WHERE mirror_hash = ?2 AND seq = ?3)",
            rows,
        )

    def backlog(self, model_id: int, after: int, limit: int) -> list[tuple[int, str, int]]:
        return [
            (int(r[0]), str(r[1]), int(r[2]))
            for r in self._conn.execute(
                "SELECT c.id, c.mirror_hash, c.seq FROM content_chunks c "
                "WHERE c.id > ?1 AND c.mirror_hash IN (SELECT mirror_hash FROM documents "
                "WHERE active = 1) AND EXISTS (SELECT 1 FROM content_vectors v WHERE "
                "v.mirror_hash = c.mirror_hash AND v.seq = c.seq AND v.model_id = ?2 "
                "AND length(v.codes) > 0) AND NOT EXISTS (SELECT 1 FROM sentence_vectors s "
                "WHERE s.mirror_hash = c.mirror_hash AND s.seq = c.seq AND s.model_id = ?2) "
                "ORDER BY c.id LIMIT ?3",
                (after, model_id, limit),
            )
        ]

    def drop_unbacked(self) -> int:
        cursor = self._conn.execute(
            "DELETE FROM sentence_vectors WHERE NOT EXISTS (SELECT 1 FROM content_vectors v "
            "WHERE v.mirror_hash = sentence_vectors.mirror_hash "
            "AND v.seq = sentence_vectors.seq AND v.model_id = sentence_vectors.model_id)"
        )
        return int(cursor.rowcount)

    def of_documents(self, model_id: int, doc_ids: Sequence[int]) -> list[tuple[int, bytes, float]]:
        if not doc_ids:
            return []
        marks = ", ".join("?" for _ in doc_ids)
        rows = self._conn.execute(
            f"SELECT d.id, s.codes, s.scale FROM documents d JOIN sentence_vectors s "
            f"ON s.mirror_hash = d.mirror_hash WHERE d.id IN ({marks}) AND s.model_id = ? "
            f"AND s.part >= 0",
            [*doc_ids, model_id],
        ).fetchall()
        return [(int(r[0]), bytes(r[1]), float(r[2])) for r in rows]

    def disk_use(self) -> tuple[int, int]:
        conn = self._conn
        (count,) = conn.execute("SELECT count(*) FROM sentence_vectors WHERE part >= 0").fetchone()
        try:
            (size,) = conn.execute(
                "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN "
                "(SELECT name FROM sqlite_master WHERE tbl_name = 'sentence_vectors')"
            ).fetchone()
        except sqlite3.OperationalError:  # built without dbstat
            (size,) = conn.execute(
                "SELECT coalesce(sum(length(codes) + length(mirror_hash) + 24), 0) "
                "FROM sentence_vectors"
            ).fetchone()
        return int(count), int(size)


__all__ = ["SentenceRow", "SentenceVectorStore", "SqliteSentenceVectors"]
