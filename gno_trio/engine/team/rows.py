"""Statements of one index's shared aggregate on a PostgreSQL store, and their transactions.

The egress receipts and the retrieval traces of team mode
(:mod:`.receipts`, :mod:`.traces`) read and write rows the same way, which
lives here once:

* every row carries its index's name, so several indexes share a database;
* a statement outside a transaction borrows a pooled connection for itself;
  :meth:`IndexRows.writing` holds one connection and one transaction for the
  block, and first takes a transaction-level advisory lock of the aggregate
  and index, so writers on every host run one at a time (as ``BEGIN
  IMMEDIATE`` makes writers of one SQLite file do) and a rule that reads
  before it writes (the newest creation time, a trace's record count) sees
  what the previous writer committed;
* rows are read by column name; a failure of the database becomes the
  error it means (``STORE_UNAVAILABLE`` when trying again can work, else
  ``RUNTIME``);
* pages are newest first by ``(created_at_ms, id)``, keyed as the embedded
  index keys them, so cursors read the same on both stores;
* a deletion cannot promise that the bytes left the disk: PostgreSQL frees
  a deleted row's space at its next ``VACUUM`` and keeps the row in its
  write-ahead log until the log is recycled, both the server's business. So
  the cleanup report says ``wal_busy``: the rows are gone for every reader,
  their physical erasure is not confirmed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.store import pages
from gno_trio.engine.team.database import TeamDatabase, advisory_key, store_failure

if TYPE_CHECKING:
    import psycopg

UNCONFIRMED_CLEANUP: Final = {
    "physicalCleanup": "wal_busy",
    "checkpointedFrames": 0,
    "remainingWalFrames": 0,
}
"""The cleanup report of a deletion on a PostgreSQL store (see the module's docstring)."""


class IndexRows:
    """The statements of one aggregate (``purpose``) of one index on a shared store."""

    __slots__ = ("_database", "_held", "_key", "index_name")

    def __init__(self, database: TeamDatabase, index_name: str, purpose: str) -> None:
        self._database = database
        self.index_name = index_name
        self._key = advisory_key(f"{purpose}:{index_name}")
        self._held: psycopg.Connection[Any] | None = None

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self._held is not None:
            yield self._held
            return
        with self._database.connection() as conn:
            yield conn

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One transaction for the block, writers of this aggregate and index one at a time."""
        if self._held is not None:
            raise RuntimeError("a write transaction is already open on this store")
        with self._failures(), self._database.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._key,))
            self._held = conn
            try:
                yield
            finally:
                self._held = None

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Every row of a query, by column name."""
        from psycopg.rows import dict_row

        with self._failures(), self._connection() as conn:
            cursor = conn.cursor(row_factory=dict_row)
            return list(cursor.execute(sql, params).fetchall())

    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The first row of a query, or None."""
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """A statement that changes rows; how many it changed."""
        with self._failures(), self._connection() as conn:
            return int(conn.execute(sql, params).rowcount)

    def run_many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        with self._failures(), self._connection() as conn, conn.cursor() as cursor:
            cursor.executemany(sql, params)

    def newest_first(
        self, table: str, id_column: str, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[dict[str, Any]], pages.PageKey | None]:
        """One page of ``table`` (this package's identifier) newest first, and the next key."""
        order = f"ORDER BY created_at_ms DESC, {id_column} DESC LIMIT %s"
        if after is None:
            rows = self.all(
                f"SELECT * FROM {table} WHERE index_name = %s {order}",
                (self.index_name, limit + 1),
            )
        else:
            rows = self.all(
                f"SELECT * FROM {table} WHERE index_name = %s AND (created_at_ms < %s "
                f"OR (created_at_ms = %s AND {id_column} < %s)) {order}",
                (
                    self.index_name,
                    after.created_at_ms,
                    after.created_at_ms,
                    after.row_id,
                    limit + 1,
                ),
            )
        page = rows[:limit]
        last = page[-1] if len(rows) > limit and page else None
        following = (
            pages.PageKey(int(last["created_at_ms"]), str(last[id_column])) if last else None
        )
        return page, following

    @contextlib.contextmanager
    def _failures(self) -> Iterator[None]:
        """A database failure inside the block is the error it means (:func:`store_failure`)."""
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise store_failure(self._database.store, exc) from exc


__all__ = ["UNCONFIRMED_CLEANUP", "IndexRows"]
