"""The rows every gateway process shares about 2025-era sessions; the per-host file of them.

A :class:`SessionRegistry` is the source of truth for sessions served by
several processes (``serve --workers N``, or every gateway of a team): one
row per live session (its identity, negotiated protocol, last use), the
documents it subscribed to, and which process holds its GET stream. Its
calls are blocking (a file lock, a network round trip): the session store
makes them from worker threads, never on the event loop.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Final, Protocol

_BUSY_TIMEOUT_MS: Final = 5000

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
    """
CREATE TABLE IF NOT EXISTS shares (
    claim TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    identity TEXT NOT NULL,
    until REAL NOT NULL
)
""",
    """
CREATE TABLE IF NOT EXISTS streams (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    claim TEXT NOT NULL,
    until REAL NOT NULL
) WITHOUT ROWID
""",
)


class SessionRegistry(Protocol):
    """The shared rows: one per live session, the source of truth for every process.

    ``now``, ``deadline`` and ``until`` are the store's wall clock (seconds);
    ``reserve`` answers the name of the session limit that refused (``total`` or
    ``per-identity``, the gateway's ``SessionLimit`` values), or None
    once the row is in. ``subscribe`` keeps a document URI for a live session
    unless it holds ``limit`` already, counted and written in one transaction
    so processes subscribing at once never overshoot; True when kept (or
    already kept, or the session just ended: nothing to refuse). A session's
    subscriptions go with its row.

    ``claim_stream`` takes a live session's one GET stream for the holder of
    ``claim`` until ``until``, unless another claim still holds it (a claim
    whose lease ran out, because its process died, no longer does); the
    holder keeps it with ``renew_streams`` and lets go with ``release_stream``.

    ``take_share`` counts one more long-lived stream (``kind``: listen or
    events) of ``identity`` unless ``limit`` unexpired shares are held, in
    one transaction; shares are renewed and let go the same way as claims.
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
    def claim_stream(self, session_id: str, claim: str, now: float, until: float) -> bool: ...
    def renew_streams(self, claims: list[tuple[str, str]], until: float) -> None: ...
    def release_stream(self, session_id: str, claim: str) -> None: ...
    def take_share(
        self, kind: str, identity: str, claim: str, now: float, until: float, limit: int
    ) -> bool: ...
    def renew_shares(self, claims: list[str], until: float) -> None: ...
    def release_share(self, claim: str) -> None: ...
    def announce_cancel(self, session_id: str, request_id: str | int) -> None:
        """Tell the other processes to stop a request of this session they may be running."""
        ...

    def close(self) -> None: ...


class FileSessionRegistry:
    """The registry of one host: a SQLite file in WAL mode beside the data directory.

    One connection, used from whichever worker thread calls; a lock keeps
    one call (and its transaction) at a time on it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            path,
            timeout=_BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
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
        registry._db.execute("DELETE FROM shares")
        return registry

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def reserve(
        self, session_id: str, identity: str, now: float, limit: int, per_identity: int
    ) -> str | None:
        """Insert a row unless a limit is reached (atomic across workers); None when inserted."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                (count, held) = db.execute(
                    "SELECT count(*), count(*) FILTER (WHERE identity = ?) FROM sessions",
                    (identity,),
                ).fetchone()
                if count >= limit:
                    return "total"
                if held >= per_identity:
                    return "per-identity"
                db.execute(
                    "INSERT INTO sessions (id, identity, last_seen) VALUES (?, ?, ?)",
                    (session_id, identity, now),
                )
                return None
            finally:
                db.execute("COMMIT")

    def lookup(self, session_id: str) -> tuple[str, str | None] | None:
        """``(identity, protocol JSON)`` of a live session, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT identity, protocol FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def record_protocol(self, session_id: str, protocol: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE sessions SET protocol = ? WHERE id = ?", (protocol, session_id)
            )

    def touch(self, session_ids: list[str], now: float) -> None:
        with self._lock:
            self._db.executemany(
                "UPDATE sessions SET last_seen = max(last_seen, ?) WHERE id = ?",
                [(now, session_id) for session_id in session_ids],
            )

    def remove(self, session_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def expire(self, deadline: float) -> list[str]:
        """Delete rows idle since before ``deadline``; returns their ids."""
        with self._lock:
            rows = self._db.execute(
                "DELETE FROM sessions WHERE last_seen < ? RETURNING id", (deadline,)
            ).fetchall()
        return [row[0] for row in rows]

    def revoke_bearer_except(self, keep_identity: str | None) -> list[str]:
        """Delete authenticated sessions not created with the current token."""
        with self._lock:
            rows = self._db.execute(
                "DELETE FROM sessions WHERE identity LIKE 'bearer:%' AND identity IS NOT ? "
                "RETURNING id",
                (keep_identity,),
            ).fetchall()
        return [row[0] for row in rows]

    def live_ids(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT id FROM sessions")}

    def subscribe(self, session_id: str, uri: str, limit: int) -> bool:
        with self._lock:
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
        with self._lock:
            self._db.execute(
                "DELETE FROM subscriptions WHERE session_id = ? AND uri = ?", (session_id, uri)
            )

    def subscriptions(self, session_id: str) -> frozenset[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT uri FROM subscriptions WHERE session_id = ?", (session_id,)
            ).fetchall()
        return frozenset(row[0] for row in rows)

    def claim_stream(self, session_id: str, claim: str, now: float, until: float) -> bool:
        """Take the session's GET stream unless a live claim holds it (one statement: atomic)."""
        with self._lock:
            row = self._db.execute(
                "INSERT INTO streams (session_id, claim, until) "
                "SELECT id, ?, ? FROM sessions WHERE id = ? "
                "ON CONFLICT (session_id) DO UPDATE SET claim = excluded.claim, "
                "until = excluded.until WHERE streams.until < ? "
                "RETURNING claim",
                (claim, until, session_id, now),
            ).fetchone()
        return row is not None

    def renew_streams(self, claims: list[tuple[str, str]], until: float) -> None:
        with self._lock:
            self._db.executemany(
                "UPDATE streams SET until = max(until, ?) WHERE session_id = ? AND claim = ?",
                [(until, session_id, claim) for session_id, claim in claims],
            )

    def release_stream(self, session_id: str, claim: str) -> None:
        with self._lock:
            self._db.execute(
                "DELETE FROM streams WHERE session_id = ? AND claim = ?", (session_id, claim)
            )

    def take_share(
        self, kind: str, identity: str, claim: str, now: float, until: float, limit: int
    ) -> bool:
        """Count one more stream of ``identity`` unless ``limit`` are held (lapsed ones go)."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM shares WHERE until < ?", (now,))
                (held,) = db.execute(
                    "SELECT count(*) FROM shares WHERE kind = ? AND identity = ?",
                    (kind, identity),
                ).fetchone()
                if held >= limit:
                    return False
                db.execute(
                    "INSERT INTO shares (claim, kind, identity, until) VALUES (?, ?, ?, ?)",
                    (claim, kind, identity, until),
                )
                return True
            finally:
                db.execute("COMMIT")

    def renew_shares(self, claims: list[str], until: float) -> None:
        with self._lock:
            self._db.executemany(
                "UPDATE shares SET until = max(until, ?) WHERE claim = ?",
                [(until, claim) for claim in claims],
            )

    def release_share(self, claim: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM shares WHERE claim = ?", (claim,))

    def count(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM sessions").fetchone()
        return int(count)

    def announce_cancel(self, session_id: str, request_id: str | int) -> None:
        """Not carried between the workers of one host: only the worker running it can stop it."""


__all__ = ["FileSessionRegistry", "SessionRegistry"]
