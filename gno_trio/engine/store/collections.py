"""Where collections are kept: the statements over ``collections`` rows, behind one protocol.

The configuration file says which collections exist; the sync keeps one row
per collection so reads, status and the change journal can name them.
:mod:`gno_trio.engine.ingest.spec` says what a row holds and
:mod:`gno_trio.engine.ingest.collection_rows` reconciles rows with the
configuration; this module only reads and writes them, inside the caller's
transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Protocol

from gno_trio.engine.store.database import RowView


class CollectionStore(Protocol):
    """The collection rows of one index."""

    def rows(self) -> dict[str, RowView]:
        """Every collection row, by name."""
        ...

    def upsert(self, name: str, columns: Mapping[str, object], created_at: str) -> None:
        """Create the row, or set these columns of the existing one (``created_at`` is
        kept)."""
        ...

    def delete(self, name: str) -> None:
        """Forget the collection and the failures recorded for its files."""
        ...

    def rename(self, old: str, new: str) -> None:
        """Call the collection row and the failures recorded for its files ``new``."""
        ...

    def synced(self, name: str, at: str) -> None:
        """Record when a full sync of the collection finished."""
        ...


class SqliteCollections:
    """:class:`CollectionStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def rows(self) -> dict[str, RowView]:
        return {row["name"]: row for row in self._conn.execute("SELECT * FROM collections")}

    def upsert(self, name: str, columns: Mapping[str, object], created_at: str) -> None:
        names = list(columns)
        updates = ", ".join(f"{c}=excluded.{c}" for c in names)
        self._conn.execute(
            f"INSERT INTO collections(name, {', '.join(names)}, created_at) "
            f"VALUES (?, {', '.join('?' for _ in names)}, ?) "
            f"ON CONFLICT(name) DO UPDATE SET {updates}",
            (name, *(columns[c] for c in names), created_at),
        )

    def delete(self, name: str) -> None:
        self._conn.execute("DELETE FROM collections WHERE name = ?", (name,))
        self._conn.execute("DELETE FROM ingest_errors WHERE collection = ?", (name,))

    def rename(self, old: str, new: str) -> None:
        self._conn.execute("UPDATE collections SET name = ? WHERE name = ?", (new, old))
        self._conn.execute(
            "UPDATE ingest_errors SET collection = ? WHERE collection = ?", (new, old)
        )

    def synced(self, name: str, at: str) -> None:
        self._conn.execute("UPDATE collections SET last_synced_at = ? WHERE name = ?", (at, name))


__all__ = ["CollectionStore", "SqliteCollections"]
