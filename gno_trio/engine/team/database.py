"""Opening a PostgreSQL store: the driver, a connection pool and our numbered migrations.

psycopg 3 is used synchronously, as SQLite is: the runtime already runs
engine work in worker threads, and psycopg's async API is asyncio-only. A
statement that must stop early is cancelled through its connection
(:func:`cancel`), the counterpart of SQLite's ``interrupt()``.

Migrations are ``migrations/NNN_name.sql`` files applied in order, each in
its own transaction, under a transaction-level advisory lock so two hosts
starting at once never apply one twice; ``gno_team_migrations`` records
what ran.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.store.binding import interruptible
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

CONNECT_TIMEOUT_SECONDS: Final = 5
POOL_SIZE: Final = 4
SPARE_SESSIONS: Final = 2
"""Session-level connections (lease holders) kept for reuse by one process."""
PROCESS_CONNECTIONS: Final = POOL_SIZE + SPARE_SESSIONS + 1
"""The connections to budget for one gno-trio process: its pool, lease spares, a listener."""
_KEEPALIVES: Final = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
"""A host that vanishes without closing its socket is noticed within about 25 s."""


def advisory_key(purpose: str) -> int:
    """A stable signed 64-bit advisory lock key for ``purpose`` (the same on every host)."""
    digest = hashlib.sha256(f"gno-trio:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_MIGRATION_KEY: Final = advisory_key("migrations")


def holder_name() -> str:
    """Who this process is, as other hosts see it (``application_name``, 63 bytes at most)."""
    return f"gno-trio:{os.getpid()}@{socket.gethostname()}"[:63]


def _driver() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise GnoError(
            "RUNTIME",
            "A PostgreSQL store needs psycopg: install gno-trio[postgres]",
        ) from exc
    return psycopg


def _unreachable(store: TeamStore, exc: Exception) -> GnoError:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return GnoError("RUNTIME", f"Cannot open the store {store.shown}: {reason}")


def connect(store: TeamStore, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """One connection of its own (the lease's, a listener's); ``RUNTIME`` if unreachable."""
    driver = _driver()
    try:
        conn: psycopg.Connection[Any] = driver.connect(
            store.url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name=holder_name(),
            **_KEEPALIVES,
        )
    except driver.Error as exc:
        raise _unreachable(store, exc) from exc
    return conn


_LOST_STATES: Final = frozenset({"57P01", "57P02", "57P03"})
"""Server-side ends of a session: terminated by an administrator, crash, starting up/down."""


def store_failure(store: TeamStore | None, exc: Exception, doing: str | None = None) -> GnoError:
    """What a driver failure in a statement means to the caller.

    The database out of reach (the connection dropped or was ended by the
    server, no pooled connection could be made in time) is
    ``STORE_UNAVAILABLE``: the same request may work when tried again, and
    the pool replaces the lost connection by then. A cancelled statement is
    ``CANCELLED``; anything else is a ``RUNTIME`` failure naming it. ``doing``
    says what the caller was doing when it failed.
    """
    diagnosis = getattr(exc, "diag", None)
    primary = getattr(diagnosis, "message_primary", None)  # without the statement's text
    reason = " ".join(str(primary or exc).split()) or type(exc).__name__
    sqlstate = getattr(exc, "sqlstate", None)
    while_doing = f" while {doing}" if doing else ""
    if sqlstate == "57014":
        return GnoError(
            "CANCELLED", f"The statement on the store was cancelled{while_doing} ({reason})"
        )
    if _is_unreachable(exc, sqlstate):
        named = f" {store.shown}" if store is not None else ""
        return GnoError(
            "STORE_UNAVAILABLE",
            f"The store{named} is unavailable{while_doing} ({reason}); try again",
            details={"retryable": True},
        )
    return GnoError("RUNTIME", f"The shared store failed{while_doing}: {reason}")


def _is_unreachable(exc: Exception, sqlstate: str | None) -> bool:
    import psycopg
    import psycopg_pool

    if isinstance(exc, psycopg_pool.PoolTimeout):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    # No SQLSTATE: the client lost the socket (a closed connection, a reset, a timeout).
    return sqlstate is None or sqlstate.startswith("08") or sqlstate in _LOST_STATES


def cancel(conn: psycopg.Connection[Any]) -> None:
    """Stop the statement running on ``conn`` from another thread (never raises)."""
    with contextlib.suppress(Exception):
        conn.cancel_safe(timeout=CONNECT_TIMEOUT_SECONDS)


def _migrations() -> list[tuple[int, str, str]]:
    folder = resources.files("gno_trio.engine.team") / "migrations"
    found = []
    for entry in folder.iterdir():
        name = entry.name
        if name.endswith(".sql"):
            found.append((int(name.split("_", 1)[0]), name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def known_versions() -> set[int]:
    """The migration versions this build carries."""
    return {version for version, _, _ in _migrations()}


def migrate(conn: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations this database lacks, in order; the names applied.

    A store already up to date is only read: a role that may read and write
    our tables but not create any (the gateways' role, see the README) opens
    it; one with migrations to apply needs the role that owns the tables.
    """
    applied: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_KEY,))
        found = conn.execute("SELECT to_regclass('gno_team_migrations') IS NOT NULL").fetchone()
        if found is None or not found[0]:
            conn.execute(
                "CREATE TABLE gno_team_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
        done = {row[0] for row in conn.execute("SELECT version FROM gno_team_migrations")}
        for version, name, script in _migrations():
            if version in done:
                continue
            conn.execute(script.encode())
            conn.execute(
                "INSERT INTO gno_team_migrations (version, name) VALUES (%s, %s)", (version, name)
            )
            applied.append(name)
    return applied


class TeamDatabase:
    """An opened PostgreSQL store: its URL and a small pool of autocommit connections."""

    def __init__(self, store: TeamStore, pool: psycopg_pool.ConnectionPool[Any]) -> None:
        self.store = store
        self._pool = pool
        self._spare: list[psycopg.Connection[Any]] = []
        self._spare_lock = threading.Lock()

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for the block; ``STORE_UNAVAILABLE`` when the server is away.

        Lent inside an engine call, the connection's running statement is
        cancelled when the call is (:func:`~gno_trio.engine.store.binding.interruptible`),
        and it goes back to the pool once the statement has stopped.
        """
        driver = _driver()
        import psycopg_pool

        try:
            with self._pool.connection() as conn, interruptible(partial(cancel, conn)):
                yield conn
        except (driver.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise store_failure(self.store, exc) from exc

    def dedicated(self) -> psycopg.Connection[Any]:
        """A connection outside the pool, for state tied to one session (locks, LISTEN)."""
        return connect(self.store)

    @contextlib.contextmanager
    def session(self) -> Iterator[SessionConnection]:
        """A connection of the block's own, for session-level state (an advisory lock).

        Connecting costs more than most statements (about 15 ms on a loaded
        host), so a connection the block hands back clean (``reusable`` left
        True: no session state left behind) is kept for the next block; one
        marked otherwise, or broken, is closed, which ends whatever its
        session held. At most :data:`SPARE_SESSIONS` are kept.
        """
        conn: psycopg.Connection[Any] | None = None
        with self._spare_lock:
            if self._spare:
                conn = self._spare.pop()
        if conn is not None:
            try:
                conn.execute("")  # still connected? (a restart drops idle connections)
            except Exception:
                conn.close()
                conn = None
        handle = SessionConnection(conn if conn is not None else self.dedicated())
        try:
            yield handle
        finally:
            kept = False
            if handle.reusable and not handle.conn.closed and not handle.conn.broken:
                with self._spare_lock:
                    if len(self._spare) < SPARE_SESSIONS:
                        self._spare.append(handle.conn)
                        kept = True
            if not kept:
                handle.conn.close()

    def close(self) -> None:
        with self._spare_lock:
            spare, self._spare = self._spare, []
        for conn in spare:
            conn.close()
        self._pool.close()


class SessionConnection:
    """A connection lent by :meth:`TeamDatabase.session`; clear ``reusable`` to have it closed."""

    __slots__ = ("conn", "reusable")

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.reusable = True


def open_team(store: TeamStore, *, pool_size: int = POOL_SIZE) -> TeamDatabase:
    """Connect, bring the schema up to date and open a pool; ``RUNTIME`` naming the cause."""
    _driver()
    try:
        import psycopg_pool
    except ImportError as exc:
        raise GnoError(
            "RUNTIME", "A PostgreSQL store needs psycopg-pool: install gno-trio[postgres]"
        ) from exc
    with connect(store) as conn:
        try:
            migrate(conn)
        except Exception as exc:
            raise GnoError(
                "RUNTIME", f"Cannot prepare the store {store.shown}: {' '.join(str(exc).split())}"
            ) from exc
    pool: psycopg_pool.ConnectionPool[Any] = psycopg_pool.ConnectionPool(
        store.url,
        min_size=1,
        max_size=pool_size,
        kwargs={"autocommit": True, "application_name": holder_name(), **_KEEPALIVES},
        timeout=CONNECT_TIMEOUT_SECONDS,
        # A connection the server dropped (restart, failover, idle cut) is replaced when it
        # is next handed out, instead of failing the request it was handed to.
        check=psycopg_pool.ConnectionPool.check_connection,
        name="gno-trio",
        open=True,
    )
    return TeamDatabase(store, pool)


__all__ = [
    "PROCESS_CONNECTIONS",
    "TeamDatabase",
    "advisory_key",
    "cancel",
    "connect",
    "holder_name",
    "known_versions",
    "migrate",
    "open_team",
    "store_failure",
]
