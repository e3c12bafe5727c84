"""2025-11-25 sessions shared by several gateway processes.

With ``--workers N`` the kernel hands each new connection to any worker, so a
session created on one worker must be usable on every other; in team mode the
same holds across hosts. The record that matters across processes (who
created the session, what ``initialize`` negotiated, when it was last used,
which documents it subscribed to) lives in a :class:`SessionRegistry`: one
SQLite file in WAL mode per host (``FileSessionRegistry``), or the
PostgreSQL store's session tables (``TeamSessions``). Each process keeps a
local :class:`HttpSession` as a cache of it, holding what cannot cross a
process (in-flight cancel scopes, the GET stream).

Every lookup re-reads the row, so a DELETE, an identity mismatch, a
credential rotation or the idle reaper on any worker ends the session
everywhere on the next request. The session limits (in all and per
identity) are counted in the table inside one write transaction. A GET
stream stays with the worker that opened it, and is one per session across
every process: it is claimed in the registry before it opens, and its claim
is renewed on each reaper pass, so a claim left by a worker that died lapses
after :attr:`SharedSessionStore.stream_lease`. A session ended elsewhere stops
that stream at the next reaper pass, or at once in team mode, where the
store announces every ended session (:meth:`SharedSessionStore.ended_elsewhere`).
The stream's process reads the session's subscriptions from the registry for
each batch of changes, so a subscription made or dropped through any process
counts there.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec
import trio

from gno_trio.engine import SessionRegistry
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

REGISTRY_THREADS: Final = 4
"""Registry calls one gateway process runs at once (each in a worker thread)."""
_LEASE_REAPS: Final = 3
"""Reaper passes a GET stream's claim survives unrenewed: a worker that died frees it then."""
_T = TypeVar("_T")
_TOUCH_EVERY: Final = 1.0
"""At most this many seconds between writes of ``last_seen`` for a busy session.

Never more than a tenth of the idle timeout, so a session in use stays far
from the reaper's deadline; lookups still read the row on every request.
"""


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
    """One session's subscribed URIs, kept in the registry so every process hears them.

    Its calls block: the request that subscribes runs them in a worker thread
    (see the server's dispatch), and the GET stream's batches read the URIs
    through :meth:`SharedSessionStore.notify_changes`, also off the loop.
    """

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


class _RegistryLedger:
    """The :class:`~.listen_book.StreamLedger` of a shared store: shares kept in its registry.

    The store's reaper renews every share handed out here, so a process that
    dies leaves its shares to lapse after one stream lease.
    """

    def __init__(self, store: SharedSessionStore) -> None:
        self._store = store
        self.held: set[str] = set()

    async def take(self, kind: str, identity: str, limit: int) -> str | None:
        store = self._store
        claim = secrets.token_hex(16)
        now = store.wall_clock()
        until = now + store.stream_lease
        self.held.add(claim)  # renewed from now on, should the answer come late
        try:
            taken = await store.write(
                store.registry.take_share, kind, identity, claim, now, until, limit
            )
        except BaseException:
            self.held.discard(claim)
            raise
        if not taken:
            self.held.discard(claim)
            return None
        return claim

    async def give_back(self, claim: str) -> None:
        self.held.discard(claim)
        await self._store.write(self._store.registry.release_share, claim)


class SharedSessionStore(SessionStore):
    """A :class:`SessionStore` whose truth is a :class:`SessionRegistry` shared by workers.

    Every registry call runs in a worker thread (at most
    :data:`REGISTRY_THREADS` at once), so a slow registry (a PostgreSQL round
    trip, a busy SQLite file) delays only the requests that need it, never the
    event loop. Reads are abandoned when their request is cancelled; writes
    finish (their answer matters to the row's other readers).
    """

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
        self.registry = registry
        self._threads = trio.CapacityLimiter(REGISTRY_THREADS)
        self._token_file = token_file
        self.wall_clock = wall_clock
        self._touched: dict[str, float] = {}
        self._touch_every = min(_TOUCH_EVERY, idle_timeout / 10)
        self.stream_lease = _LEASE_REAPS * self.reap_every
        """Seconds a GET stream's claim outlives its last renewal (a dead worker's, no more)."""
        self._known = 0
        self.ledger = _RegistryLedger(self)
        """Listen and REST event streams per identity, counted across every process."""

    async def _read(self, fn: Callable[..., _T], *args: Any) -> _T:
        """A registry read in a worker thread, abandoned if the caller is cancelled."""
        return await trio.to_thread.run_sync(
            fn, *args, limiter=self._threads, abandon_on_cancel=True
        )

    async def write(self, fn: Callable[..., _T], *args: Any) -> _T:
        """A registry write in a worker thread; the caller waits for it even when cancelled."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self._threads)

    def __len__(self) -> int:
        """The count last read from the registry (never a blocking read: see :meth:`count`).

        Read by every reaper pass and every status request, and moved by this
        process's own opens and closes in between.
        """
        return self._known

    async def count(self) -> int:
        self._known = await self._read(self.registry.count)
        return self._known

    async def open(self, identity: str) -> HttpSession | SessionLimit:
        session_id = new_session_id()
        refused = await self.write(
            self.registry.reserve,
            session_id,
            identity,
            self.wall_clock(),
            self.max_sessions,
            self.max_per_identity,
        )
        if refused is not None:
            return SessionLimit(refused)
        session = self._local(session_id, identity)
        self._metrics.sessions["opened"] += 1
        self._known += 1
        return session

    def _local(self, session_id: str, identity: str) -> HttpSession:
        """This process's cache of a registry row (its subscriptions stay in the registry)."""
        session = HttpSession(
            session_id,
            identity,
            self._clock(),
            self.legacy_methods,
            book=_RegistryBook(self.registry, session_id),
        )
        self._sessions[session_id] = session
        return session

    async def record(self, session: HttpSession) -> None:
        await self.write(self.registry.record_protocol, session.id, _encode_protocol(session))

    async def get(self, session_id: str) -> HttpSession | None:
        row = await self._read(self.registry.lookup, session_id)
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

    async def touch(self, session: HttpSession) -> None:
        await super().touch(session)
        now = self.wall_clock()
        if now - self._touched.get(session.id, float("-inf")) >= self._touch_every:
            self._touched[session.id] = now
            await self.write(self.registry.touch, [session.id], now)

    async def claim_stream(self, session: HttpSession) -> bool:
        """Take the session's one GET stream across every process (409 for a second one)."""
        if not await super().claim_stream(session):
            return False
        assert session.stream_claim is not None
        now = self.wall_clock()
        claimed = await self.write(
            self.registry.claim_stream,
            session.id,
            session.stream_claim,
            now,
            now + self.stream_lease,
        )
        if not claimed:
            await super().release_stream(session)
        return claimed

    async def release_stream(self, session: HttpSession) -> None:
        claim = session.stream_claim
        await super().release_stream(session)
        if claim is not None:
            await self.write(self.registry.release_stream, session.id, claim)

    async def notify_changes(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Hand changes to the sessions streaming here, reading their subscriptions off the loop."""
        for session in list(self._sessions.values()):
            if session.subscriptions is None or session.stream is None:
                continue
            subscribed = await self._read(self.registry.subscriptions, session.id)
            session.notify_changes(entries, subscribed)

    async def close(self, session: HttpSession, reason: str) -> None:
        await self.write(self.registry.remove, session.id)
        self._known = max(0, self._known - 1)
        self._forget(session, reason)

    async def cancel(self, session: HttpSession, request_id: object) -> None:
        """Stop the request here if it runs here, else ask the process that runs it."""
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return
        if request_id in session.in_flight:
            session.cancel_request(request_id)
        else:
            await self.write(self.registry.announce_cancel, session.id, request_id)

    def cancelled_elsewhere(self, session_id: str, request_id: object) -> None:
        """A cancel announced by another process: stop the request if it runs here."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel_request(request_id)

    async def ended_elsewhere(self, session_ids: list[str]) -> None:
        """The store announced these sessions ended: end what this process holds of them.

        A GET stream of one of them stops now rather than at the next reaper
        pass. An id that is somehow still in the table is left alone.
        """
        held = [self._sessions[i] for i in session_ids if i in self._sessions]
        for session in held:  # only the ones held here: one row read each, not the table
            if await self._read(self.registry.lookup, session.id) is None:
                self._forget(session, "elsewhere")

    def _forget(self, session: HttpSession, reason: str) -> None:
        self._touched.pop(session.id, None)
        self._drop(session, reason)

    async def revoke_authenticated(self) -> int:
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
        revoked = set(await self.write(self.registry.revoke_bearer_except, keep))
        local = self.close_where(lambda s: s.authenticated and s.identity != keep, "credentials")
        return max(local, len(revoked))

    async def reap(self) -> int:
        """Keep sessions and streams in use here alive, expire idle rows, drop ended sessions."""
        now = self.wall_clock()
        busy = [s.id for s in self._sessions.values() if s.in_flight or s.stream is not None]
        if busy:
            await self.write(self.registry.touch, busy, now)
        claims = [
            (s.id, s.stream_claim) for s in self._sessions.values() if s.stream_claim is not None
        ]
        if claims:
            await self.write(self.registry.renew_streams, claims, now + self.stream_lease)
        if self.ledger.held:
            shares = list(self.ledger.held)
            await self.write(self.registry.renew_shares, shares, now + self.stream_lease)
        expired = await self.write(self.registry.expire, now - self.idle_timeout)
        live = await self._read(self.registry.live_ids)
        self._known = len(live)
        for session in [s for s in self._sessions.values() if s.id not in live]:
            self._forget(session, "idle" if session.id in expired else "elsewhere")
        return len(expired)


__all__ = ["REGISTRY_THREADS", "SharedSessionStore"]
