"""2025-11-25 sessions shared by several gateway processes.

With ``--workers N`` the kernel hands each new connection to any worker, so a
session created on one worker must be usable on every other; in team mode the
same holds across hosts. The record that matters across processes (who
created the session, what ``initialize`` negotiated, when it was last used,
which documents it subscribed to) lives in a :class:`SessionRegistry`: one
SQLite file in WAL mode per host (:class:`FileSessionRegistry`), or the
PostgreSQL store's session tables (``TeamSessions``). Each process keeps a
local :class:`HttpSession` as a cache of it, holding what cannot cross a
process (in-flight cancel scopes, the GET stream).

Every lookup re-reads the row, so a DELETE, an identity mismatch, a
credential rotation or the idle reaper on any worker ends the session
everywhere on the next request. The session limits (in all and per
identity) are counted in the table inside one write transaction. A GET
stream stays with the worker that opened it; a session ended elsewhere stops
that stream at the next reaper pass, or at once in team mode, where the
store announces every ended session (:meth:`SharedSessionStore.ended_elsewhere`).
The stream's process reads the session's subscriptions from the registry for
each batch of changes, so a subscription made or dropped through any process
counts there.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol

import msgspec

from gno_trio.protocol.connection import LEGACY_REQUEST_METHODS
from gno_trio.protocol.envelope import Implementation
from gno_trio.transports.http.boundary import bearer_identity
from gno_trio.transports.http.metrics import TransportMetrics
from gno_trio.transports.http.sessions import (
    HttpSession,
    SessionLimit,
    SessionStore,
    new_session_id,
)
from gno_trio.transports.http.tokens import read_token_file

_BUSY_TIMEOUT_MS: Final = 5000
_TOUCH_EVERY: Final = 1.0
"""At most this many seconds between writes of ``last_seen`` for a busy session.

Never more than a tenth of the idle timeout, so a session in use stays far
from the reaper's deadline; lookups still read the row on every request.
"""

_SCHEMA: Final = (
    """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    protocol TEXT,
    last_seen REAL NOT NULL
)
""",
    """
CREATE TABLE IF NOT EXISTS subscriptions (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    uri TEXT NOT NULL,
    PRIMARY KEY (session_id, uri)
) WITHOUT ROWID
""",
)


class SessionRegistry(Protocol):
    """The shared rows: one per live session, the source of truth for every process.

    ``now`` and ``deadline`` are the store's wall clock (seconds); ``reserve``
    answers the :class:`SessionLimit` value that refused, or None once the row
    is in. ``subscribe`` keeps a document URI for a live session unless it
    holds ``limit`` already, counted and written in one transaction so
    processes subscribing at once never overshoot; True when kept (or already
    kept, or the session just ended: nothing to refuse). A session's
    subscriptions go with its row.
    """

    def reserve(
        self, session_id: str, identity: str, now: float, limit: int, per_identity: int
    ) -> str | None: ...
    def lookup(self, session_id: str) -> tuple[str, str | None] | None: ...
    def record_protocol(self, session_id: str, protocol: str) -> None: ...
    def touch(self, session_ids: list[str], now: float) -> None: ...
    def remove(self, session_id: str) -> None: ...
    def expire(self, deadline: float) -> list[str]: ...
    def revoke_bearer_except(self, keep_identity: str | None) -> list[str]: ...
    def live_ids(self) -> set[str]: ...
    def count(self) -> int: ...
    def subscribe(self, session_id: str, uri: str, limit: int) -> bool: ...
    def unsubscribe(self, session_id: str, uri: str) -> None: ...
    def subscriptions(self, session_id: str) -> frozenset[str]: ...
    def announce_cancel(self, session_id: str, request_id: str | int) -> None:
        """Tell the other processes to stop a request of this session they may be running."""
        ...

    def close(self) -> None: ...


class FileSessionRegistry:
    """The registry of one host: a SQLite file in WAL mode beside the data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA foreign_keys = ON")  # a session's subscriptions end with it
        for statement in _SCHEMA:
            self._db.execute(statement)

    @classmethod
    def create_fresh(cls, path: Path) -> FileSessionRegistry:
        """Start a gateway run: no session from an earlier run survives."""
        registry = cls(path)
        registry._db.execute("DELETE FROM sessions")
        return registry

    def close(self) -> None:
        self._db.close()

    def reserve(
        self, session_id: str, identity: str, now: float, limit: int, per_identity: int
    ) -> str | None:
        """Insert a row unless a limit is reached (atomic across workers); None when inserted."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            (count, held) = db.execute(
                "SELECT count(*), count(*) FILTER (WHERE identity = ?) FROM sessions", (identity,)
            ).fetchone()
            if count >= limit:
                return SessionLimit.TOTAL.value
            if held >= per_identity:
                return SessionLimit.PER_IDENTITY.value
            db.execute(
                "INSERT INTO sessions (id, identity, last_seen) VALUES (?, ?, ?)",
                (session_id, identity, now),
            )
            return None
        finally:
            db.execute("COMMIT")

    def lookup(self, session_id: str) -> tuple[str, str | None] | None:
        """``(identity, protocol JSON)`` of a live session, or None."""
        row = self._db.execute(
            "SELECT identity, protocol FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def record_protocol(self, session_id: str, protocol: str) -> None:
        self._db.execute("UPDATE sessions SET protocol = ? WHERE id = ?", (protocol, session_id))

    def touch(self, session_ids: list[str], now: float) -> None:
        self._db.executemany(
            "UPDATE sessions SET last_seen = max(last_seen, ?) WHERE id = ?",
            [(now, session_id) for session_id in session_ids],
        )

    def remove(self, session_id: str) -> None:
        self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def expire(self, deadline: float) -> list[str]:
        """Delete rows idle since before ``deadline``; returns their ids."""
        rows = self._db.execute(
            "DELETE FROM sessions WHERE last_seen < ? RETURNING id", (deadline,)
        ).fetchall()
        return [row[0] for row in rows]

    def revoke_bearer_except(self, keep_identity: str | None) -> list[str]:
        """Delete authenticated sessions not created with the current token."""
        rows = self._db.execute(
            "DELETE FROM sessions WHERE identity LIKE 'bearer:%' AND identity IS NOT ? "
            "RETURNING id",
            (keep_identity,),
        ).fetchall()
        return [row[0] for row in rows]

    def live_ids(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT id FROM sessions")}

    def subscribe(self, session_id: str, uri: str, limit: int) -> bool:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            (held, kept) = db.execute(
                "SELECT count(*), count(*) FILTER (WHERE uri = ?) FROM subscriptions "
                "WHERE session_id = ?",
                (uri, session_id),
            ).fetchone()
            if kept:
                return True
            if held >= limit:
                return False
            db.execute(
                "INSERT INTO subscriptions (session_id, uri) "
                "SELECT id, ? FROM sessions WHERE id = ?",
                (uri, session_id),
            )
            return True
        finally:
            db.execute("COMMIT")

    def unsubscribe(self, session_id: str, uri: str) -> None:
        self._db.execute(
            "DELETE FROM subscriptions WHERE session_id = ? AND uri = ?", (session_id, uri)
        )

    def subscriptions(self, session_id: str) -> frozenset[str]:
        rows = self._db.execute(
            "SELECT uri FROM subscriptions WHERE session_id = ?", (session_id,)
        ).fetchall()
        return frozenset(row[0] for row in rows)

    def count(self) -> int:
        (count,) = self._db.execute("SELECT count(*) FROM sessions").fetchone()
        return int(count)

    def announce_cancel(self, session_id: str, request_id: str | int) -> None:
        """Not carried between the workers of one host: only the worker running it can stop it."""


def _encode_protocol(session: HttpSession) -> str:
    protocol = session.protocol
    info = msgspec.to_builtins(protocol.client_info) if protocol.client_info is not None else None
    return json.dumps(
        {
            "version": protocol.protocol_version,
            "clientInfo": info,
            "capabilities": protocol.client_capabilities,
            "ready": protocol.client_ready,
        }
    )


def _restore_protocol(session: HttpSession, encoded: str) -> None:
    document: dict[str, Any] = json.loads(encoded)
    protocol = session.protocol
    protocol.protocol_version = document["version"]
    info = document["clientInfo"]
    protocol.client_info = msgspec.convert(info, Implementation) if info is not None else None
    protocol.client_capabilities = document["capabilities"]
    protocol.client_ready = bool(document["ready"])


class _RegistryBook:
    """One session's subscribed URIs, kept in the registry so every process hears them."""

    __slots__ = ("_registry", "_session_id")

    def __init__(self, registry: SessionRegistry, session_id: str) -> None:
        self._registry = registry
        self._session_id = session_id

    def add(self, uri: str, limit: int) -> bool:
        return self._registry.subscribe(self._session_id, uri, limit)

    def discard(self, uri: str) -> None:
        self._registry.unsubscribe(self._session_id, uri)

    def uris(self) -> frozenset[str]:
        return self._registry.subscriptions(self._session_id)


class SharedSessionStore(SessionStore):
    """A :class:`SessionStore` whose truth is a :class:`SessionRegistry` shared by workers."""

    def __init__(
        self,
        registry: SessionRegistry,
        *,
        max_sessions: int,
        idle_timeout: float,
        metrics: TransportMetrics,
        token_file: Path | None,
        max_per_identity: int | None = None,
        wall_clock: Callable[[], float] = time.monotonic,
        legacy_methods: frozenset[str] = LEGACY_REQUEST_METHODS,
    ) -> None:
        super().__init__(
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
            metrics=metrics,
            max_per_identity=max_per_identity,
            legacy_methods=legacy_methods,
        )
        self._registry = registry
        self._token_file = token_file
        self._wall_clock = wall_clock
        self._touched: dict[str, float] = {}
        self._touch_every = min(_TOUCH_EVERY, idle_timeout / 10)

    def __len__(self) -> int:
        return self._registry.count()

    def open(self, identity: str) -> HttpSession | SessionLimit:
        session_id = new_session_id()
        refused = self._registry.reserve(
            session_id, identity, self._wall_clock(), self.max_sessions, self.max_per_identity
        )
        if refused is not None:
            return SessionLimit(refused)
        session = self._local(session_id, identity)
        self._metrics.sessions["opened"] += 1
        return session

    def _local(self, session_id: str, identity: str) -> HttpSession:
        """This process's cache of a registry row (its subscriptions stay in the registry)."""
        session = HttpSession(
            session_id,
            identity,
            self._clock(),
            self.legacy_methods,
            book=_RegistryBook(self._registry, session_id),
        )
        self._sessions[session_id] = session
        return session

    def record(self, session: HttpSession) -> None:
        self._registry.record_protocol(session.id, _encode_protocol(session))

    def get(self, session_id: str) -> HttpSession | None:
        row = self._registry.lookup(session_id)
        local = self._sessions.get(session_id)
        if row is None:
            if local is not None:
                self._forget(local, "elsewhere")
            return None
        if local is None:
            identity, protocol = row
            local = self._local(session_id, identity)
            if protocol is not None:
                _restore_protocol(local, protocol)
        return local

    def touch(self, session: HttpSession) -> None:
        super().touch(session)
        now = self._wall_clock()
        if now - self._touched.get(session.id, float("-inf")) >= self._touch_every:
            self._touched[session.id] = now
            self._registry.touch([session.id], now)

    def close(self, session: HttpSession, reason: str) -> None:
        self._registry.remove(session.id)
        self._forget(session, reason)

    def cancel(self, session: HttpSession, request_id: object) -> None:
        """Stop the request here if it runs here, else ask the process that runs it."""
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return
        if request_id in session.in_flight:
            session.cancel_request(request_id)
        else:
            self._registry.announce_cancel(session.id, request_id)

    def cancelled_elsewhere(self, session_id: str, request_id: object) -> None:
        """A cancel announced by another process: stop the request if it runs here."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel_request(request_id)

    def ended_elsewhere(self, session_ids: list[str]) -> None:
        """The store announced these sessions ended: end what this process holds of them.

        A GET stream of one of them stops now rather than at the next reaper
        pass. An id that is somehow still in the table is left alone.
        """
        held = [self._sessions[i] for i in session_ids if i in self._sessions]
        for session in held:  # only the ones held here: one row read each, not the table
            if self._registry.lookup(session.id) is None:
                self._forget(session, "elsewhere")

    def _forget(self, session: HttpSession, reason: str) -> None:
        self._touched.pop(session.id, None)
        super().close(session, reason)

    def revoke_authenticated(self) -> int:
        """Token rotation: end sessions of every identity but the current token's.

        Each worker notices the rotation on its own next request; keeping the
        current token's sessions means a late worker never ends a session
        created after the rotation.
        """
        keep: str | None = None
        if self._token_file is not None:
            current = read_token_file(self._token_file)
            if current.transient:  # unknowable right now; revoke nothing rather than all
                return 0
            if current.digest is not None:
                keep = bearer_identity(current.digest)
        revoked = set(self._registry.revoke_bearer_except(keep))
        local = self.close_where(lambda s: s.authenticated and s.identity != keep, "credentials")
        return max(local, len(revoked))

    def reap(self) -> int:
        """Keep sessions in use here alive, expire idle rows, drop what ended elsewhere."""
        now = self._wall_clock()
        busy = [s.id for s in self._sessions.values() if s.in_flight or s.stream is not None]
        if busy:
            self._registry.touch(busy, now)
        expired = self._registry.expire(now - self.idle_timeout)
        live = self._registry.live_ids()
        for session in [s for s in self._sessions.values() if s.id not in live]:
            self._forget(session, "idle" if session.id in expired else "elsewhere")
        return len(expired)


__all__ = ["FileSessionRegistry", "SessionRegistry", "SharedSessionStore"]
