"""What the index holds, counted: the statements of ``status`` and ``peek``, behind one protocol.

:mod:`gno_trio.engine.reads.status` decides what a status report says
(health, warnings, what is recent); this module only counts and lists rows.
"""

from __future__ import annotations

import sqlite3
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView

_USED: Final = "SELECT mirror_hash FROM documents WHERE active = 1 AND mirror_hash IS NOT NULL"
_ORPHANS: Final = f"""
SELECT
  (SELECT COUNT(*) FROM documents WHERE active = 0),
  (SELECT COUNT(*) FROM content WHERE mirror_hash NOT IN ({_USED})),
  (SELECT COUNT(*) FROM content_chunks WHERE mirror_hash NOT IN ({_USED})),
  (SELECT COUNT(*) FROM content_vectors WHERE mirror_hash NOT IN ({_USED}))
"""


class IndexCounts(Protocol):
    """Counts and recent rows of one index."""

    def collections(self) -> list[RowView]:
        """Every collection row (``name``, ``path``, ``last_synced_at``,
        ``memory_managed``, ``egress_policy``), by name."""
        ...

    def collection_count(self) -> int: ...

    def active_documents(self, collection: str | None = None) -> int: ...

    def active_and_newest(self) -> tuple[int, int]:
        """How many documents are active, and the newest active document's id (0 for none)."""
        ...

    def active_chunks(self, collection: str | None = None) -> int:
        """Chunks of the contents active documents (of ``collection``) hold."""
        ...

    def chunk_count(self) -> int:
        """Every stored chunk, active or not."""
        ...

    def frontmatter_errors(self, collection: str, limit: int) -> list[tuple[str, str]]:
        """``(rel_path, message)`` of active documents whose front matter failed, by path."""
        ...

    def failures(self, since: str | None = None) -> int:
        """Recorded ingest failures (observed at or after ``since``), unsupported files
        left out."""
        ...

    def last_synced_at(self) -> str | None: ...

    def orphans(self) -> tuple[int, int, int, int]:
        """What no active document needs: inactive documents, unused mirrors, their
        chunks and those chunks' vectors."""
        ...

    def last_indexed_at(self) -> str | None: ...

    def recently_indexed(self, limit: int) -> list[RowView]:
        """Active documents (``docid``, ``uri``, ``title``, ``indexed_at``), newest first."""
        ...


class SqliteCounts:
    """:class:`IndexCounts` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _scalar(self, sql: str, params: tuple[object, ...] = ()) -> int:
        row = self._conn.execute(sql, params).fetchone()
        return int(row[0] or 0) if row else 0

    def collections(self) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            "SELECT * FROM collections ORDER BY name"
        ).fetchall()
        return rows

    def collection_count(self) -> int:
        return self._scalar("SELECT COUNT(*) FROM collections")

    def active_documents(self, collection: str | None = None) -> int:
        if collection is None:
            return self._scalar("SELECT COUNT(*) FROM documents WHERE active = 1")
        return self._scalar(
            "SELECT COUNT(*) FROM documents WHERE collection = ? AND active = 1", (collection,)
        )

    def active_and_newest(self) -> tuple[int, int]:
        count, newest = self._conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM documents WHERE active = 1"
        ).fetchone()
        return int(count), int(newest)

    def active_chunks(self, collection: str | None = None) -> int:
        if collection is None:
            return self._scalar(
                "SELECT COUNT(*) FROM content_chunks c JOIN (SELECT DISTINCT mirror_hash FROM "
                "documents WHERE active = 1) d ON d.mirror_hash = c.mirror_hash"
            )
        return self._scalar(
            "SELECT COUNT(*) FROM content_chunks c JOIN (SELECT DISTINCT mirror_hash FROM "
            "documents WHERE collection = ? AND active = 1) d ON d.mirror_hash = c.mirror_hash",
            (collection,),
        )

    def chunk_count(self) -> int:
        return self._scalar("SELECT COUNT(*) FROM content_chunks")

    def frontmatter_errors(self, collection: str, limit: int) -> list[tuple[str, str]]:
        rows = self._conn.execute(
            "SELECT rel_path, frontmatter_error FROM documents WHERE collection = ? "
            "AND active = 1 AND frontmatter_error IS NOT NULL ORDER BY rel_path LIMIT ?",
            (collection, limit),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def failures(self, since: str | None = None) -> int:
        if since is None:
            return self._scalar("SELECT COUNT(*) FROM ingest_errors WHERE unsupported = 0")
        return self._scalar(
            "SELECT COUNT(*) FROM ingest_errors WHERE at >= ? AND unsupported = 0", (since,)
        )

    def orphans(self) -> tuple[int, int, int, int]:
        documents, mirrors, chunks, vectors = self._conn.execute(_ORPHANS).fetchone()
        return int(documents), int(mirrors), int(chunks), int(vectors)

    def last_synced_at(self) -> str | None:
        last: str | None = self._conn.execute(
            "SELECT MAX(last_synced_at) FROM collections"
        ).fetchone()[0]
        return last

    def last_indexed_at(self) -> str | None:
        last: str | None = self._conn.execute("SELECT MAX(indexed_at) FROM documents").fetchone()[0]
        return last

    def recently_indexed(self, limit: int) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            "SELECT docid, uri, title, indexed_at FROM documents WHERE active = 1 "
            "ORDER BY indexed_at DESC, id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return rows


__all__ = ["IndexCounts", "SqliteCounts"]
