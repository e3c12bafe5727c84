"""The egress receipts of team mode: one index's audit on a PostgreSQL store.

:class:`TeamReceipts` answers :class:`~gno_trio.engine.store.egress_receipts.ReceiptStore`
on the shared store, so every gateway of the index writes to and lists one
audit. The audit's rules (:mod:`gno_trio.engine.egress.audit`) are the
embedded index's; only the statements differ. An append and its retention
run in one transaction under the aggregate's advisory lock, so receipts
written on two hosts at once still get strictly increasing creation times
and the caps hold across hosts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from gno_trio.engine.store import pages
from gno_trio.engine.store.database import RowView
from gno_trio.engine.store.egress_receipts import RECEIPT_COLUMNS, beyond_caps
from gno_trio.engine.team.database import TeamDatabase
from gno_trio.engine.team.rows import UNCONFIRMED_CLEANUP, IndexRows

_TABLE: Final = "gno_egress_receipts"


class TeamReceipts:
    """:class:`~gno_trio.engine.store.egress_receipts.ReceiptStore` of one index, shared."""

    __slots__ = ("_rows",)

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self._rows = IndexRows(database, index_name, "egress-receipts")

    def append(
        self,
        make: Callable[[int | None], Mapping[str, Any]],
        *,
        max_age_ms: int,
        max_receipts: int,
        max_bytes: int,
    ) -> None:
        rows = self._rows
        with rows.writing():
            newest = rows.one(
                f"SELECT MAX(created_at_ms) AS newest FROM {_TABLE} WHERE index_name = %s",
                (rows.index_name,),
            )
            row = make(newest["newest"] if newest is not None else None)
            marks = ", ".join("%s" for _ in RECEIPT_COLUMNS)
            rows.run(
                f"INSERT INTO {_TABLE} (index_name, {', '.join(RECEIPT_COLUMNS)}) "
                f"VALUES (%s, {marks})",
                (rows.index_name, *(row[column] for column in RECEIPT_COLUMNS)),
            )
            self._retain(int(row["created_at_ms"]) - max_age_ms, max_receipts, max_bytes)

    def _retain(self, expired: int, max_receipts: int, max_bytes: int) -> None:
        rows = self._rows
        rows.run(
            f"DELETE FROM {_TABLE} WHERE index_name = %s AND created_at_ms <= %s",
            (rows.index_name, expired),
        )
        count, size = self._count_and_size()
        if count <= max_receipts and size <= max_bytes:
            return
        oldest_first = rows.all(
            f"SELECT audit_id, byte_size FROM {_TABLE} WHERE index_name = %s "
            "ORDER BY created_at_ms, audit_id",
            (rows.index_name,),
        )
        for audit_id in beyond_caps(oldest_first, count, size, max_receipts, max_bytes):
            rows.run(
                f"DELETE FROM {_TABLE} WHERE index_name = %s AND audit_id = %s",
                (rows.index_name, audit_id),
            )

    def _count_and_size(self) -> tuple[int, int]:
        found = self._rows.one(
            f"SELECT COUNT(*) AS n, COALESCE(SUM(byte_size), 0)::bigint AS size "
            f"FROM {_TABLE} WHERE index_name = %s",
            (self._rows.index_name,),
        )
        assert found is not None
        return int(found["n"]), int(found["size"])

    def page(
        self, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[RowView], pages.PageKey | None]:
        found, following = self._rows.newest_first(_TABLE, "audit_id", limit=limit, after=after)
        return list(found), following

    def get(self, audit_id: str) -> RowView | None:
        return self._rows.one(
            f"SELECT * FROM {_TABLE} WHERE index_name = %s AND audit_id = %s",
            (self._rows.index_name, audit_id),
        )

    def totals(self) -> tuple[int, int, int | None, int | None]:
        found = self._rows.one(
            f"SELECT COUNT(*) AS n, COALESCE(SUM(byte_size), 0)::bigint AS size, "
            f"MIN(created_at_ms) AS oldest, MAX(created_at_ms) AS newest "
            f"FROM {_TABLE} WHERE index_name = %s",
            (self._rows.index_name,),
        )
        assert found is not None
        return int(found["n"]), int(found["size"]), found["oldest"], found["newest"]

    def delete(self, audit_id: str) -> dict[str, Any] | None:
        rows = self._rows
        with rows.writing():
            deleted = rows.run(
                f"DELETE FROM {_TABLE} WHERE index_name = %s AND audit_id = %s",
                (rows.index_name, audit_id),
            )
        return None if deleted == 0 else dict(UNCONFIRMED_CLEANUP)

    def delete_all(self) -> tuple[int, dict[str, Any]]:
        rows = self._rows
        with rows.writing():
            deleted = rows.run(f"DELETE FROM {_TABLE} WHERE index_name = %s", (rows.index_name,))
        return deleted, dict(UNCONFIRMED_CLEANUP)


__all__ = ["TeamReceipts"]
