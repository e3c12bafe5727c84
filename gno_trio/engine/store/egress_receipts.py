"""Where egress receipts are kept: the statements of the egress audit, behind one protocol.

The egress audit (:mod:`gno_trio.engine.egress.audit`) decides what a
receipt says, how long receipts live and what a page of them looks like;
this module only stores and reads them. :class:`ReceiptStore` is what the
audit asks of any store; :class:`SqliteReceipts` answers it on one SQLite
connection (the engine hands it the connection bound to the running call).
A second database is a second class with these methods.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

from gno_trio.engine.store import pages
from gno_trio.engine.store.database import RowView, write_transaction

RECEIPT_COLUMNS: Final = (
    "audit_id",
    "decision",
    "action",
    "destination_zone",
    "content_class",
    "effective_policy",
    "reason_code",
    "lineage_digest",
    "created_at_ms",
    "expires_at_ms",
    "byte_size",
)
"""A receipt row's columns (what :meth:`ReceiptStore.append` is given, by name)."""
_TABLE: Final = "egress_audit_receipts"


def beyond_caps(
    oldest_first: Iterable[RowView], count: int, size: int, max_receipts: int, max_bytes: int
) -> list[str]:
    """The audit ids to drop, oldest first, until ``count`` receipts of ``size`` bytes fit
    both caps (rows with ``audit_id`` and ``byte_size``)."""
    dropped: list[str] = []
    for row in oldest_first:
        if count <= max_receipts and size <= max_bytes:
            break
        dropped.append(str(row["audit_id"]))
        count, size = count - 1, size - int(row["byte_size"])
    return dropped


class ReceiptStore(Protocol):
    """The stored egress receipts: one row per receipt, keyed by its audit id."""

    def append(
        self,
        make: Callable[[int | None], Mapping[str, Any]],
        *,
        max_age_ms: int,
        max_receipts: int,
        max_bytes: int,
    ) -> None:
        """One receipt, in one write transaction with the retention it calls for.

        ``make(newest)`` gets the newest stored ``created_at_ms`` (None when
        there is none) and gives the row, by column. Then receipts created
        ``max_age_ms`` or more before it go, and the oldest beyond
        ``max_receipts`` and ``max_bytes``.
        """
        ...

    def page(
        self, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[RowView], pages.PageKey | None]:
        """Newest first, and the key of the next page (None at the end)."""
        ...

    def get(self, audit_id: str) -> RowView | None: ...

    def totals(self) -> tuple[int, int, int | None, int | None]:
        """How many receipts, their bytes, the oldest and newest creation times."""
        ...

    def delete(self, audit_id: str) -> dict[str, Any] | None:
        """Delete one receipt, its pages overwritten; the cleanup report, or None if absent."""
        ...

    def delete_all(self) -> tuple[int, dict[str, Any]]:
        """Delete every receipt, pages overwritten: how many, and the cleanup report."""
        ...


class SqliteReceipts:
    """:class:`ReceiptStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def append(
        self,
        make: Callable[[int | None], Mapping[str, Any]],
        *,
        max_age_ms: int,
        max_receipts: int,
        max_bytes: int,
    ) -> None:
        conn = self._conn
        with write_transaction(conn):
            newest = conn.execute(f"SELECT MAX(created_at_ms) FROM {_TABLE}").fetchone()[0]
            row = make(newest)
            marks = ", ".join("?" for _ in RECEIPT_COLUMNS)
            conn.execute(
                f"INSERT INTO {_TABLE} ({', '.join(RECEIPT_COLUMNS)}) VALUES ({marks})",
                tuple(row[column] for column in RECEIPT_COLUMNS),
            )
            self._retain(int(row["created_at_ms"]) - max_age_ms, max_receipts, max_bytes)

    def _retain(self, expired: int, max_receipts: int, max_bytes: int) -> None:
        conn = self._conn
        conn.execute(f"DELETE FROM {_TABLE} WHERE created_at_ms <= ?", (expired,))
        count, size = conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(byte_size), 0) FROM {_TABLE}"
        ).fetchone()
        if count <= max_receipts and size <= max_bytes:
            return
        rows = conn.execute(
            f"SELECT audit_id, byte_size FROM {_TABLE} ORDER BY created_at_ms, audit_id"
        ).fetchall()
        for audit_id in beyond_caps(rows, count, size, max_receipts, max_bytes):
            conn.execute(f"DELETE FROM {_TABLE} WHERE audit_id = ?", (audit_id,))

    def page(
        self, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[RowView], pages.PageKey | None]:
        rows, following = pages.newest_first(
            self._conn, table=_TABLE, id_column="audit_id", limit=limit, after=after
        )
        return list(rows), following

    def get(self, audit_id: str) -> RowView | None:
        row: sqlite3.Row | None = self._conn.execute(
            f"SELECT * FROM {_TABLE} WHERE audit_id = ?", (audit_id,)
        ).fetchone()
        return row

    def totals(self) -> tuple[int, int, int | None, int | None]:
        count, size, oldest, newest = self._conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(byte_size), 0), MIN(created_at_ms), "
            f"MAX(created_at_ms) FROM {_TABLE}"
        ).fetchone()
        return int(count), int(size), oldest, newest

    def delete(self, audit_id: str) -> dict[str, Any] | None:
        conn = self._conn
        with pages.secure_deletion(conn):
            with write_transaction(conn):
                deleted = conn.execute(
                    f"DELETE FROM {_TABLE} WHERE audit_id = ?", (audit_id,)
                ).rowcount
            if deleted == 0:
                return None
            return pages.physical_cleanup(conn)

    def delete_all(self) -> tuple[int, dict[str, Any]]:
        conn = self._conn
        with pages.secure_deletion(conn):
            with write_transaction(conn):
                deleted = conn.execute(f"DELETE FROM {_TABLE}").rowcount
            return int(deleted), pages.physical_cleanup(conn)


__all__ = ["RECEIPT_COLUMNS", "ReceiptStore", "SqliteReceipts", "beyond_caps"]
