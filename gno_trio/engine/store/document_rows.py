"""Where a sync keeps document rows: the statements that decide and write ``documents``.

A sync first decides (:mod:`gno_trio.engine.ingest.plan`) from a narrow view
of the stored rows, then writes one document at a time
(:mod:`gno_trio.engine.ingest.writes`), inside transactions the caller
holds; a collection rename moves its rows. What a row holds (its columns'
values, the change journal's snapshot of it) is decided there; this module
only reads and writes the rows. Documents are read back for the user
through :class:`~gno_trio.engine.store.documents.DocumentStore`.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView

SyncRow = tuple[int, str, int, int, bool, bool, str, bool, str | None, str | None]
"""``(id, rel_path, size, mtime_ns, active, errored, source_hash, has_mirror,
converter_id, converter_version)``: what deciding needs of one stored document."""


class DocumentRowStore(Protocol):
    """The document rows of one index, as a sync decides and writes them."""

    def sync_rows(self, collection: str, only: Sequence[str] | None = None) -> list[SyncRow]:
        """The collection's stored rows (or those at the ``only`` paths)."""
        ...

    def fresh_fingerprints(
        self, collection: str, stamps: Sequence[str], piece: int
    ) -> Iterator[list[str]]:
        """``"size mtime_ns rel_path"`` of each active document of the collection with no
        error whose converter stamp (``"id\\x01version"``) is in ``stamps`` (or that was
        never converted), ``piece`` documents at a time."""
        ...

    def active_paths_of(self, collection: str) -> list[str]:
        """The paths of the collection's active documents."""
        ...

    def has_active(self, collection: str) -> bool: ...

    def row(self, doc_id: int) -> RowView:
        """A document's whole row."""
        ...

    def insert(self, values: Mapping[str, object]) -> int:
        """A new document row with these columns; its id."""
        ...

    def update(self, doc_id: int, values: Mapping[str, object]) -> None:
        """Set these columns of a document's row."""
        ...

    def refresh_stat(self, doc_id: int, size: int, mtime: str, mtime_ns: int) -> None:
        """Store a file's new size and mtime and clear the document's error."""
        ...

    def set_active(self, doc_id: int, active: bool, at: str) -> None:
        """(Re)activate or retire a document, indexed ``at``."""
        ...

    def record_error(self, doc_id: int, code: str, message: str, at: str) -> None:
        """The document keeps its content and carries this error."""
        ...

    def delete_collection(self, collection: str) -> None:
        """Delete every document row of the collection (tags, links and the rest go
        with them)."""
        ...

    def of_collection(self, collection: str, batch: int) -> Iterator[list[RowView]]:
        """The collection's whole rows by id, ``batch`` at a time."""
        ...

    def move(self, moves: Sequence[tuple[str, str, int]]) -> None:
        """``(collection, uri, id)``: give documents a new collection and URI."""
        ...


_SYNC_SQL: Final = (
    "SELECT id, rel_path, source_size, source_mtime_ns, active, "
    "last_error_code IS NOT NULL, source_hash, mirror_hash IS NOT NULL, "
    "converter_id, converter_version FROM documents "
    "WHERE collection = ?"
)


@functools.lru_cache(maxsize=4)
def _fingerprint_sql(converters: int) -> str:
    """A piece of the fingerprints, joined by NUL (which no path holds) in SQLite: one string
    per piece, split in C, instead of a tuple of three objects per document.

    Today's version of each of ``converters`` converters is bound as a ``CASE`` arm
    (its id, then its version): a document's stamp is compared without a string
    made for it (a stamp list looked up by ``id || version`` cost a quarter more
    per document).
    """
    today = "CASE converter_id " + " ".join(["WHEN ? THEN ?"] * converters) + " END"
    return (
        "SELECT group_concat(fingerprint, char(0)), max(id) FROM ("
        "SELECT id, source_size || ' ' || source_mtime_ns || ' ' || rel_path AS fingerprint "
        "FROM documents WHERE collection = ? AND active = 1 AND last_error_code IS NULL "
        "AND id > ? AND (converter_id IS NULL OR coalesce(converter_version, '') = "
        f"{today if converters else 'NULL'}) ORDER BY id LIMIT ?)"
    )


@functools.lru_cache(maxsize=8)
def _insert_sql(columns: tuple[str, ...]) -> str:
    """The insert of a row of these columns (a sync inserts rows of one shape, many times)."""
    return f"INSERT INTO documents({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


class SqliteDocumentRows:
    """:class:`DocumentRowStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def sync_rows(self, collection: str, only: Sequence[str] | None = None) -> list[SyncRow]:
        if only is None:
            cursor = self._conn.execute(_SYNC_SQL, (collection,))
        else:
            cursor = self._conn.execute(
                _SYNC_SQL + " AND rel_path IN (SELECT value FROM json_each(?))",
                (collection, json.dumps(sorted(only))),
            )
        return [
            (
                int(row[0]),
                row[1],
                int(row[2]),
                int(row[3]),
                bool(row[4]),
                bool(row[5]),
                row[6],
                bool(row[7]),
                row[8],
                row[9],
            )
            for row in cursor
        ]

    def fresh_fingerprints(
        self, collection: str, stamps: Sequence[str], piece: int
    ) -> Iterator[list[str]]:
        # SQLite builds each piece without holding the GIL, so a walk can run meanwhile.
        cursor = self._conn.cursor()
        cursor.row_factory = None  # plain tuples, whatever the connection's row factory
        today = [part for stamp in stamps for part in stamp.split("\x01", 1)]
        sql = _fingerprint_sql(len(stamps))
        after = -(2**63)
        while True:
            joined, last = cursor.execute(sql, (collection, after, *today, piece)).fetchone()
            if joined is None:
                return
            yield joined.split("\x00")
            after = last

    def active_paths_of(self, collection: str) -> list[str]:
        rows = self._conn.execute(
            "SELECT rel_path FROM documents WHERE collection = ? AND active = 1", (collection,)
        )
        return [row[0] for row in rows]

    def has_active(self, collection: str) -> bool:
        found = self._conn.execute(
            "SELECT 1 FROM documents WHERE collection = ? AND active = 1", (collection,)
        )
        return found.fetchone() is not None

    def row(self, doc_id: int) -> RowView:
        row: RowView = self._conn.execute(
            "SELECT * FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        return row

    def insert(self, values: Mapping[str, object]) -> int:
        cur = self._conn.execute(_insert_sql(tuple(values)), tuple(values.values()))
        return int(cur.lastrowid or 0)

    def update(self, doc_id: int, values: Mapping[str, object]) -> None:
        assignments = ", ".join(f"{k} = ?" for k in values)
        self._conn.execute(
            f"UPDATE documents SET {assignments} WHERE id = ?", (*values.values(), doc_id)
        )

    def refresh_stat(self, doc_id: int, size: int, mtime: str, mtime_ns: int) -> None:
        self._conn.execute(
            """UPDATE documents SET source_size = ?, source_mtime = ?,
                   source_mtime_ns = ?, last_error_code = NULL,
                   last_error_message = NULL, last_error_at = NULL
               WHERE id = ?""",
            (size, mtime, mtime_ns, doc_id),
        )

    def set_active(self, doc_id: int, active: bool, at: str) -> None:
        self._conn.execute(
            "UPDATE documents SET active = ?, indexed_at = ? WHERE id = ?",
            (int(active), at, doc_id),
        )

    def record_error(self, doc_id: int, code: str, message: str, at: str) -> None:
        self._conn.execute(
            """UPDATE documents SET last_error_code = ?, last_error_message = ?, last_error_at = ?
               WHERE id = ?""",
            (code, message, at, doc_id),
        )

    def delete_collection(self, collection: str) -> None:
        self._conn.execute("DELETE FROM documents WHERE collection = ?", (collection,))

    def of_collection(self, collection: str, batch: int) -> Iterator[list[RowView]]:
        rows = self._conn.execute(
            "SELECT * FROM documents WHERE collection = ? ORDER BY id", (collection,)
        )
        while found := rows.fetchmany(batch):
            yield found

    def move(self, moves: Sequence[tuple[str, str, int]]) -> None:
        self._conn.executemany("UPDATE documents SET collection = ?, uri = ? WHERE id = ?", moves)


__all__ = ["DocumentRowStore", "SqliteDocumentRows", "SyncRow"]
