"""Write transactions of bounded size, as a long sync writes: the store's batching.

A sync writes a collection in many transactions, each at most so many
documents or characters of text (the caller says how many), so memory stays
bounded however large the collection and an interrupted sync leaves a
consistent index the next one carries on from. The batch's queued full-text
rows (:class:`~.fulltext.PendingRows`) are written just before each commit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from gno_trio.engine.store import fulltext


class Batches:
    """Write transactions of bounded size: commit after ``docs`` documents or ``chars`` of text.

    ``pending`` (the batch's queued full-text rows) is written just before
    each commit and dropped on a rollback; ``on_commit`` runs after each
    commit, outside a transaction.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        docs: int,
        chars: int,
        pending: fulltext.PendingRows | None = None,
        on_commit: Callable[[], None] | None = None,
    ) -> None:
        self._conn = conn
        self._pending = pending
        self._on_commit = on_commit
        self._docs_limit = docs
        self._chars_limit = chars
        self._docs = 0
        self._chars = 0

    def __enter__(self) -> Batches:
        self._conn.execute("BEGIN IMMEDIATE")
        return self

    def count(self, chars: int) -> None:
        """One document written, with ``chars`` of text: commit when the batch is full."""
        self._docs += 1
        self._chars += chars
        if self._docs >= self._docs_limit or self._chars >= self._chars_limit:
            self._commit()
            self._conn.execute("BEGIN IMMEDIATE")
            self._docs = self._chars = 0

    def _commit(self) -> None:
        if self._pending is not None:
            self._pending.flush(self._conn)
        self._conn.execute("COMMIT")
        if self._on_commit is not None:
            self._on_commit()

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if error is None:
            self._commit()
            return
        if self._pending is not None:
            self._pending.clear()
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")


def out_of_space(error: sqlite3.Error) -> bool:
    """Whether a write failed because the disk (or the file's size limit) is full."""
    return getattr(error, "sqlite_errorname", "") == "SQLITE_FULL"


__all__ = ["Batches", "out_of_space"]
