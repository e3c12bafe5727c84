"""Where a sync keeps document text: the statements writing mirrors and their chunks.

A mirror (a document's Markdown) is stored once per text (``content``,
keyed by its hash) however many documents share it; its chunks are ranges of
it (``content_chunks``), indexed in ``chunks_fts``. :mod:`gno_trio.engine.ingest`
decides what a mirror and its chunks are and when one is no longer needed;
this module only writes and drops the rows, inside the caller's transaction.
Chunks are read back through :class:`~gno_trio.engine.store.chunks.ChunkStore`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Protocol


class MirrorStore(Protocol):
    """The mirrors and chunks of one index, as a sync writes them."""

    def add(self, mirror_hash: str, markdown: str) -> bool:
        """Store a mirror; whether it is new (False: that text is stored already)."""
        ...

    def add_chunk(
        self,
        mirror_hash: str,
        seq: int,
        pos: int,
        length: int,
        byte_range: tuple[int, int] | None,
        start_line: int,
        end_line: int,
        language: str | None,
        token_count: int,
    ) -> int:
        """Store one chunk of a mirror (its full-text entry is the caller's); its id.

        ``pos``/``length`` place it in the mirror's characters, ``byte_range``
        (offset, length) in its UTF-8 bytes, where reads cut it from (None: cut
        by characters)."""
        ...

    def unreferenced(self, candidates: Iterable[str] | None = None) -> list[str]:
        """The mirrors no document row refers to: of ``candidates`` (in hash order), or of
        every stored mirror when None."""
        ...

    def drop(self, mirror_hash: str) -> None:
        """Forget a mirror with its chunks and their full-text entries."""
        ...

    def drop_chunks(self, mirror_hash: str) -> None:
        """Forget a mirror's chunks and their full-text entries (the mirror stays)."""
        ...


class SqliteMirrors:
    """:class:`MirrorStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def add(self, mirror_hash: str, markdown: str) -> bool:
        inserted = self._conn.execute(
            "INSERT OR IGNORE INTO content(mirror_hash, markdown, line_count) VALUES (?, ?, ?)",
            (mirror_hash, markdown, markdown.count("\n") + 1),
        ).rowcount
        return bool(inserted)

    def add_chunk(
        self,
        mirror_hash: str,
        seq: int,
        pos: int,
        length: int,
        byte_range: tuple[int, int] | None,
        start_line: int,
        end_line: int,
        language: str | None,
        token_count: int,
    ) -> int:
        cur = self._conn.execute(
            """INSERT INTO content_chunks(mirror_hash, seq, pos, length, byte_pos, byte_length,
                   start_line, end_line, language, token_count)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                mirror_hash,
                seq,
                pos,
                length,
                *(byte_range or (None, None)),
                start_line,
                end_line,
                language,
                token_count,
            ),
        )
        return int(cur.lastrowid or 0)

    def unreferenced(self, candidates: Iterable[str] | None = None) -> list[str]:
        if candidates is None:
            return [
                str(row[0])
                for row in self._conn.execute(
                    "SELECT mirror_hash FROM content WHERE mirror_hash NOT IN "
                    "(SELECT mirror_hash FROM documents WHERE mirror_hash IS NOT NULL)"
                )
            ]
        return [
            mirror
            for mirror in sorted(candidates)
            if self._conn.execute(
                "SELECT 1 FROM documents WHERE mirror_hash = ? LIMIT 1", (mirror,)
            ).fetchone()
            is None
        ]

    def drop(self, mirror_hash: str) -> None:
        self.drop_chunks(mirror_hash)
        self._conn.execute("DELETE FROM content WHERE mirror_hash = ?", (mirror_hash,))

    def drop_chunks(self, mirror_hash: str) -> None:
        # The full-text entries are read through the view before the chunks go.
        self._conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rowid, text, mirror_hash) "
            "SELECT 'delete', id, text, mirror_hash FROM chunk_texts WHERE mirror_hash = ?",
            (mirror_hash,),
        )
        self._conn.execute("DELETE FROM content_chunks WHERE mirror_hash = ?", (mirror_hash,))


__all__ = ["MirrorStore", "SqliteMirrors"]
