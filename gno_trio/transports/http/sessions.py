"""2025-11-25 sessions: the store, the idle reaper, and the GET stream of a session.

A session is born from a successful ``initialize`` POST that names no session;
its id (visible ASCII, 256 random bits) comes back in ``Mcp-Session-Id`` and must
accompany every later request. A session is bound to the security identity
that created it: another identity presenting the id gets 403, and the session
is closed (an id that leaked is dead). Unknown or closed ids get 404, so a
client knows to start over. Resumption is not offered (``Last-Event-ID`` is 400).

At most one GET stream per session (409 for a second), claimed in the store
before its headers go out (a shared store makes that hold across processes). It runs as a
supervised task, so DELETE, the idle reaper, credential rotation and shutdown
can end it from outside; it carries only server-initiated messages and
keep-alive comments. Before each keep-alive it checks that its caller's
credentials still hold (a rotated or deleted token file ends it then), and it
ends by itself after one idle timeout: an open stream alone never keeps a
session alive for longer than a client that re-opens it would.
"""

from __future__ import annotations

import enum
import logging
import math
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import trio

from gno_trio.protocol.connection import LEGACY_REQUEST_METHODS, LegacySession
from gno_trio.protocol.jsonrpc import RequestId, encode_notification
from gno_trio.protocol.names import SESSION_HEADER
from gno_trio.protocol.subscriptions import (
    RESOURCES_SUBSCRIBE,
    ResourceSubscriptions,
    SubscriptionBook,
)
from gno_trio.transports.http.boundary import BEARER_PREFIX
from gno_trio.transports.http.metrics import TransportMetrics
from gno_trio.transports.http.wire import (
    SSE_HEADERS,
    SSE_KEEPALIVE,
    Header,
    Receive,
    Send,
    sse_event,
)
from nurseries import Supervisor, TaskHandle

logger = logging.getLogger("gno_trio.transports.http")

SESSION_NOT_FOUND_CODE: Final = -32001
_OUTBOX_SIZE: Final = 64
_SETTLE_SECONDS: Final = 10.0
"""At most this long to record a GET stream's end in the store, even while shutting down."""


def new_session_id() -> str:
    """256 random bits as URL-safe base64: 43 visible ASCII characters."""
    return secrets.token_urlsafe(32)


class HttpSession:
    """One 2025-era conversation over HTTP."""

    __slots__ = (
        "_outbox",
        "closed",
        "id",
        "identity",
        "in_flight",
        "inbox",
        "last_seen",
        "protocol",
        "stream",
        "stream_claim",
        "subscriptions",
    )

    def __init__(
        self,
        session_id: str,
        identity: str,
        now: float,
        legacy_methods: frozenset[str] = LEGACY_REQUEST_METHODS,
        book: SubscriptionBook | None = None,
    ) -> None:
        """``book`` keeps the subscribed URIs where every worker sees them (default: here)."""
        self.id = session_id
        self.identity = identity
        self.protocol = LegacySession(legacy_methods)
        # The documents this session listens to (None: subscriptions are not offered).
        self.subscriptions = (
            ResourceSubscriptions(book=book) if RESOURCES_SUBSCRIBE in legacy_methods else None
        )
        self.last_seen = now
        self.in_flight: dict[RequestId, trio.CancelScope] = {}
        self.stream: TaskHandle | None = None
        # Set from the moment a GET stream is claimed until it has ended.
        self.stream_claim: str | None = None
        self.closed = False
        self._outbox, self.inbox = trio.open_memory_channel[bytes](_OUTBOX_SIZE)

    @property
    def authenticated(self) -> bool:
        return self.identity.startswith(BEARER_PREFIX)

    def push(self, line: bytes) -> bool:
        """Queue a server-initiated message for the GET stream; False when none can take it."""
        if self.stream is None or self.closed:
            return False
        try:
            self._outbox.send_nowait(line)
        except trio.WouldBlock:
            return False
        return True

    def notify_changes(
        self, entries: Sequence[Mapping[str, Any]], subscribed: frozenset[str] | None = None
    ) -> None:
        """Queue what ``entries`` mean for this session's subscriptions on its GET stream.

        ``subscribed``: the session's URIs when the caller already read them
        (a shared store reads them off the event loop).

        Never waits: with no stream open the notices are not kept (the spec
        lets a server send them only where a stream is), and a stream whose
        client stopped reading fills its bounded queue and then loses them
        until the socket's write deadline closes it.
        """
        if self.subscriptions is None or self.stream is None or not self.protocol.initialized:
            return
        for method, params in self.subscriptions.notices(entries, subscribed=subscribed):
            self.push(encode_notification(method, params))

    def cancel_request(self, request_id: object) -> None:
        """``notifications/cancelled``: stop that request (unknown ids are ignored)."""
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return
        scope = self.in_flight.get(request_id)
        if scope is not None:
            scope.cancel()


class SessionLimit(enum.Enum):
    """Which bound refused a new session."""

    TOTAL = "total"
    """``maxSessions``: every session of the gateway."""
    PER_IDENTITY = "per-identity"
    """``maxSessionsPerIdentity``: the sessions of the caller's security identity."""


class SessionStore:
    """Live sessions by id, bounded in all and per identity, with idle reaping."""

    def __init__(
        self,
        *,
        max_sessions: int,
        idle_timeout: float,
        metrics: TransportMetrics,
        max_per_identity: int | None = None,
        clock: Callable[[], float] = trio.current_time,
        legacy_methods: frozenset[str] = LEGACY_REQUEST_METHODS,
    ) -> None:
        self._sessions: dict[str, HttpSession] = {}
        # What each session's 2025-era conversation serves (the app's choice).
        self.legacy_methods = legacy_methods
        self.max_sessions = max_sessions
        self.max_per_identity = min(max_per_identity or max_sessions, max_sessions)
        self.idle_timeout = idle_timeout
        self._metrics = metrics
        self._clock = clock

    def __len__(self) -> int:
        return len(self._sessions)

    async def count(self) -> int:
        """Live sessions of the gateway (every process's, for a shared store)."""
        return len(self._sessions)

    @property
    def reap_every(self) -> float:
        """Seconds between reaper passes: a quarter of the idle timeout, within [0.25, 30]."""
        return max(0.25, min(30.0, self.idle_timeout / 4))

    async def open(self, identity: str) -> HttpSession | SessionLimit:
        """Reserve a new session for an ``initialize`` in progress, or name the limit it hits."""
        if len(self._sessions) >= self.max_sessions:
            return SessionLimit.TOTAL
        held = sum(1 for s in self._sessions.values() if s.identity == identity)
        if held >= self.max_per_identity:
            return SessionLimit.PER_IDENTITY
        session = HttpSession(new_session_id(), identity, self._clock(), self.legacy_methods)
        self._sessions[session.id] = session
        self._metrics.sessions["opened"] += 1
        return session

    async def get(self, session_id: str) -> HttpSession | None:
        return self._sessions.get(session_id)

    async def touch(self, session: HttpSession) -> None:
        session.last_seen = self._clock()

    async def record(self, session: HttpSession) -> None:
        """Hook: the handshake of ``session`` is settled (a shared store persists it)."""

    async def claim_stream(self, session: HttpSession) -> bool:
        """Take the session's one GET stream; False when one is open (or opening) already."""
        if session.stream is not None or session.stream_claim is not None:
            return False
        session.stream_claim = secrets.token_hex(16)
        return True

    async def release_stream(self, session: HttpSession) -> None:
        """The GET stream of ``session`` ended: another may open."""
        session.stream_claim = None

    async def notify_changes(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Hand document changes to every session this process holds (a change feed listener)."""
        for session in list(self._sessions.values()):
            session.notify_changes(entries)

    async def revoke_authenticated(self) -> int:
        """The token file changed: close every authenticated session."""
        return self.close_where(lambda s: s.authenticated, "credentials")

    async def cancel(self, session: HttpSession, request_id: object) -> None:
        """``notifications/cancelled`` for ``session``: stop that request where it runs."""
        session.cancel_request(request_id)

    async def close(self, session: HttpSession, reason: str) -> None:
        """End the session: its id answers 404 from now on, everywhere."""
        self._drop(session, reason)

    def _drop(self, session: HttpSession, reason: str) -> None:
        """Forget the session here and end its GET stream."""
        if self._sessions.pop(session.id, None) is None:
            return
        session.closed = True
        if session.stream is not None:
            session.stream.cancel()
        self._metrics.sessions[f"closed_{reason}"] += 1

    def close_where(self, predicate: Callable[[HttpSession], bool], reason: str) -> int:
        """Close every session ``predicate`` selects; returns how many were closed."""
        doomed = [s for s in self._sessions.values() if predicate(s)]
        for session in doomed:
            self._drop(session, reason)
        return len(doomed)

    def retry_after(self, identity: str | None = None) -> int:
        """Seconds until the longest-idle session (of ``identity``) can be reaped (a hint)."""
        seen = [s.last_seen for s in self._sessions.values() if identity in (None, s.identity)]
        if not seen:
            return 1
        oldest = min(seen)
        return max(1, math.ceil(oldest + self.idle_timeout - self._clock()))

    async def reap(self) -> int:
        """Close sessions idle for longer than the timeout.

        A session with requests in flight or an open GET stream is in use,
        not idle; its clock restarts when the last of them ends.
        """
        deadline = self._clock() - self.idle_timeout
        return self.close_where(
            lambda s: s.last_seen < deadline and not s.in_flight and s.stream is None, "idle"
        )


async def _stream_events(
    session: HttpSession,
    send: Send,
    keepalive: float,
    metrics: TransportMetrics,
    still_authorized: Callable[[], bool],
    lifetime: float,
) -> None:
    """The supervised body of a GET stream: queued messages, else a keep-alive comment.

    Returns (ending the stream) when the caller's credentials no longer hold
    or after ``lifetime`` seconds.
    """
    metrics.streams["opened"] += 1
    try:
        with trio.move_on_after(lifetime) as lived:
            while still_authorized():
                chunk = SSE_KEEPALIVE
                with trio.move_on_after(keepalive):
                    chunk = sse_event(await session.inbox.receive())
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            metrics.streams["ended_credentials"] += 1
        if lived.cancelled_caught:
            metrics.streams["ended_lifetime"] += 1
    finally:
        metrics.streams["closed"] += 1


async def _cancel_on_disconnect(receive: Receive, handle: TaskHandle) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            handle.cancel()
            return


async def _serve_stream(
    session: HttpSession,
    receive: Receive,
    send: Send,
    supervisor: Supervisor,
    keepalive: float,
    metrics: TransportMetrics,
    store: SessionStore,
    still_authorized: Callable[[], bool],
) -> None:
    headers: list[Header] = [*SSE_HEADERS, (SESSION_HEADER.encode(), session.id.encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    try:
        handle = supervisor.start_soon(
            _stream_events,
            session,
            send,
            keepalive,
            metrics,
            still_authorized,
            store.idle_timeout,
            name="legacy-get-stream",
        )
    except RuntimeError:  # the server began shutting down while the headers went out
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    session.stream = handle
    try:
        async with trio.open_nursery() as watcher:
            watcher.start_soon(_cancel_on_disconnect, receive, handle)
            await handle.wait()
            watcher.cancel_scope.cancel()
    finally:
        handle.cancel()
        if session.stream is handle:
            session.stream = None
    try:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except Exception:  # the client is already gone
        logger.debug("GET stream for a session ended after its client left")


async def run_get_stream(
    session: HttpSession,
    receive: Receive,
    send: Send,
    *,
    supervisor: Supervisor,
    keepalive: float,
    metrics: TransportMetrics,
    store: SessionStore,
    still_authorized: Callable[[], bool],
) -> None:
    """Serve a claimed GET stream until the client leaves, the session/server ends it, or it ends.

    ``still_authorized`` is asked before every keep-alive; the stream lives
    at most the store's idle timeout. The claim (``store.claim_stream``) is
    given back however the stream ends.
    """
    try:
        await _serve_stream(
            session, receive, send, supervisor, keepalive, metrics, store, still_authorized
        )
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(_SETTLE_SECONDS):
            await store.release_stream(session)
            await store.touch(session)


__all__ = [
    "SESSION_HEADER",
    "SESSION_NOT_FOUND_CODE",
    "HttpSession",
    "SessionLimit",
    "SessionStore",
    "new_session_id",
    "run_get_stream",
]
