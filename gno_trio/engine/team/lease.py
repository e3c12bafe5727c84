"""The write lease in team mode: a PostgreSQL session-level advisory lock.

The lock is taken on a connection of its own, opened for the hold and
closed after it, so it lives exactly as long as the holder's session: a
holder that dies (or whose host vanishes: TCP keepalives end its session
within about 25 s) loses it, with nothing to clean up. Two holders in one
process contend like two processes do, as with the embedded ``flock``.

A writer that gives up names the holder. Each gno-trio connection carries
``gno-trio:<pid>@<host>`` as its ``application_name``, which
``pg_stat_activity`` shows beside the lock in ``pg_locks``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.store.lease import (
    DEFAULT_WAIT_SECONDS,
    LOCKED_MESSAGE,
    HeldLease,
    stopped_waiting,
    wait_from_env,
)
from gno_trio.engine.team.database import TeamDatabase, advisory_key
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import psycopg

_POLL_SECONDS: Final = 0.02

_HOLDER_QUERY: Final = """
SELECT a.application_name
FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid
"""


def _lock_parts(key: int) -> tuple[int, int]:
    """``pg_locks``' two 32-bit halves (``classid``, ``objid``) of a bigint lock key."""
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    return unsigned >> 32, unsigned & 0xFFFF_FFFF


def _holder(name: str) -> tuple[int | None, str | None]:
    """``(pid, host)`` from ``gno-trio:<pid>@<host>``; ``(None, None)`` for anything else."""
    if not name.startswith("gno-trio:"):
        return None, None
    pid_text, _, host = name.removeprefix("gno-trio:").partition("@")
    return (int(pid_text) if pid_text.isdigit() else None), (host or None)


def lease_holder(conn: psycopg.Connection[Any], key: int) -> tuple[int | None, str | None] | None:
    """``(pid, host)`` of whoever holds lock ``key`` (either may be unknown), or None if free."""
    row = conn.execute(_HOLDER_QUERY, _lock_parts(key)).fetchone()
    return None if row is None else _holder(row[0] or "")


class AdvisoryLease:
    """The write lease of one index of a PostgreSQL store."""

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self._database = database
        self._key = self.key_for(index_name)
        self._where = f"{database.store.shown}#write-lease:{index_name}"

    @staticmethod
    def key_for(index_name: str) -> int:
        """The advisory lock key of ``index_name``'s write lease (the same on every host)."""
        return advisory_key(f"write-lease:{index_name}")

    @property
    def where(self) -> str:
        return self._where

    @contextlib.contextmanager
    def hold(
        self,
        *,
        wait_seconds: float | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[HeldLease]:
        """Hold the lock for the block, waiting as the embedded lease waits."""
        with self.holding(
            wait_seconds=wait_seconds,
            busy_code=busy_code,
            busy_message=busy_message,
            should_stop=should_stop,
        ) as (held, _):
            yield held

    @contextlib.contextmanager
    def holding(
        self,
        *,
        wait_seconds: float | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[HeldLease, psycopg.Connection[Any]]]:
        """:meth:`hold`, also lending the connection that holds the lock.

        A write made on that connection commits only while the lock is held
        (if the session ends, the lock goes with it): fencing by construction.
        """
        wait = wait_from_env(DEFAULT_WAIT_SECONDS) if wait_seconds is None else wait_seconds
        with self._database.session() as lent:
            conn = lent.conn
            deadline = time.monotonic() + wait
            lent.reusable = False  # until the lock is known not held by this connection
            while not self._try(conn):
                lent.reusable = True
                if should_stop is not None and should_stop():
                    raise stopped_waiting(busy_code)
                if time.monotonic() >= deadline:
                    raise self._busy(conn, busy_code, busy_message)
                time.sleep(_POLL_SECONDS)
                lent.reusable = False
            held = HeldLease(self._where)
            try:
                yield held, conn
            finally:
                held.active = False
                with contextlib.suppress(Exception):  # else closing the connection unlocks
                    row = conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,)).fetchone()
                    lent.reusable = bool(row is not None and row[0])

    def _try(self, conn: psycopg.Connection[Any]) -> bool:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
        return bool(row is not None and row[0])

    def _busy(self, conn: psycopg.Connection[Any], code: str, message: str) -> GnoError:
        pid, host = lease_holder(conn, self._key) or (None, None)
        if pid is None:
            return GnoError(code, message)
        where = f" on {host}" if host is not None else ""
        return GnoError(
            code,
            f"{message} (the write lease is held by process {pid}{where})",
            details={"holderPid": pid, "holderHost": host},
        )

    def is_held(self) -> bool:
        """Whether any session holds the lock right now (a look at ``pg_locks``, no attempt)."""
        with self._database.connection() as conn:
            return lease_holder(conn, self._key) is not None


__all__ = ["AdvisoryLease", "lease_holder"]
