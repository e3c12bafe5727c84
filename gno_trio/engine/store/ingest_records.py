"""Where the files a sync did not index are recorded: the statements over ``ingest_errors``.

:mod:`gno_trio.engine.ingest.documents.records` says what a record means
(its reason, whether the file's type was the reason, when it still holds
and how ``status`` lists records); this module only keeps the rows, inside
the caller's transaction. One row per ``(collection, rel_path)``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol

from gno_trio.engine.store.database import RowView


class IngestRecordStore(Protocol):
    """The records of files not indexed, by collection and path."""

    def of_collection(self, collection: str) -> dict[str, RowView]:
        """Every record of ``collection``, by path (whole rows)."""
        ...

    def save(
        self,
        collection: str,
        rel_path: str,
        code: str,
        message: str,
        *,
        at: str,
        unsupported: bool,
        size: int | None,
        mtime_ns: int | None,
        policy: str | None,
    ) -> None:
        """Record a file, or replace its record."""
        ...

    def forget(self, collection: str, rel_path: str) -> None: ...

    def paths(self, collection: str) -> list[str]:
        """The paths of the collection's records."""
        ...

    def forget_paths(self, collection: str, rel_paths: Sequence[str]) -> None: ...

    def listed(self, collection: str, *, unsupported: bool, limit: int) -> list[RowView]:
        """The first records of one group (unsupported types or errors), by path."""
        ...

    def count(self, collection: str, *, unsupported: bool) -> int: ...


class SqliteIngestRecords:
    """:class:`IngestRecordStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def of_collection(self, collection: str) -> dict[str, RowView]:
        rows = self._conn.execute("SELECT * FROM ingest_errors WHERE collection = ?", (collection,))
        return {row["rel_path"]: row for row in rows}

    def save(
        self,
        collection: str,
        rel_path: str,
        code: str,
        message: str,
        *,
        at: str,
        unsupported: bool,
        size: int | None,
        mtime_ns: int | None,
        policy: str | None,
    ) -> None:
        self._conn.execute(
            """INSERT INTO ingest_errors(collection, rel_path, code, message, at, unsupported,
                   source_size, source_mtime_ns, policy) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(collection, rel_path) DO UPDATE SET code = excluded.code,
                   message = excluded.message, at = excluded.at,
                   unsupported = excluded.unsupported, source_size = excluded.source_size,
                   source_mtime_ns = excluded.source_mtime_ns, policy = excluded.policy""",
            (collection, rel_path, code, message, at, int(unsupported), size, mtime_ns, policy),
        )

    def forget(self, collection: str, rel_path: str) -> None:
        self._conn.execute(
            "DELETE FROM ingest_errors WHERE collection = ? AND rel_path = ?",
            (collection, rel_path),
        )

    def paths(self, collection: str) -> list[str]:
        rows = self._conn.execute(
            "SELECT rel_path FROM ingest_errors WHERE collection = ?", (collection,)
        )
        return [row[0] for row in rows]

    def forget_paths(self, collection: str, rel_paths: Sequence[str]) -> None:
        self._conn.executemany(
            "DELETE FROM ingest_errors WHERE collection = ? AND rel_path = ?",
            [(collection, rel) for rel in rel_paths],
        )

    def listed(self, collection: str, *, unsupported: bool, limit: int) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            "SELECT * FROM ingest_errors WHERE collection = ? AND unsupported = ? "
            "ORDER BY rel_path LIMIT ?",
            (collection, int(unsupported), limit),
        ).fetchall()
        return rows

    def count(self, collection: str, *, unsupported: bool) -> int:
        row = self._conn.execute(
            "SELECT COUNT(*) FROM ingest_errors WHERE collection = ? AND unsupported = ?",
            (collection, int(unsupported)),
        ).fetchone()
        return int(row[0])


__all__ = ["IngestRecordStore", "SqliteIngestRecords"]
