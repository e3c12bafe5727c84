"""The gateway as one ASGI application: boundary, admission, shared guards, era split.

Per request, in order:

1. the boundary (peer, Host/Origin, rate, bearer, declared length) before any
   body byte is read;
2. routing by path and HTTP method (405 with ``Allow`` for other methods);
3. for a POST: ``Accept`` (406) and ``Content-Type`` (415), then the body under
   the size and time limits (413/408), then one msgspec decode (400 ``-32700``
   for bad JSON, ``-32600`` for batches and non-messages);
4. a transport capacity slot and a runtime admission slot, both given back
   on every exit path, around work that is cancelled when the client
   disconnects (through the connection's
   :class:`~.connections.DisconnectHook`, or under another ASGI server a
   watcher task reading ``receive``);
5. the shared guards: write gate, egress against the actual peer zone (with
   its authorization epoch), identity;
6. the era split: a message claiming 2026-07-28 (envelope key or
   ``MCP-Protocol-Version: 2026-07-28``) goes to :mod:`.modern`, everything
   else to :mod:`.legacy`.

Paths other than ``/mcp`` and the two resident paths go, past the boundary,
to a :data:`~.surfaces.Surface`: ``/api/...`` to the REST API (:mod:`.rest`),
anything else to the pages when the gateway serves some (404 otherwise).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final
from urllib.parse import urlencode

import msgspec
import trio

from gno_trio.errors import GnoError, Kind
from gno_trio.protocol.jsonrpc import DecodeFailure, Incoming, Notification, Request, decode_line
from gno_trio.protocol.names import PROTOCOL_VERSION_HEADER
from gno_trio.protocol.routing import claimed_era
from gno_trio.protocol.subscriptions import SUBSCRIPTIONS_LISTEN
from gno_trio.protocol.versions import Era
from gno_trio.transports.http import legacy, listen, modern, rest
from gno_trio.transports.http.boundary import (
    Boundary,
    Caller,
    ClientGone,
    bearer_identity,
    read_body,
)
from gno_trio.transports.http.connections import DISCONNECT_EXTENSION, DisconnectHook
from gno_trio.transports.http.guards import EgressTicket, egress_guard, write_gate
from gno_trio.transports.http.rest_wire import api_shaped
from gno_trio.transports.http.settings import (
    API_PREFIX,
    MCP_PATH,
    METRICS_PATH,
    SIGNIN_PATH,
    STATUS_PATH,
)
from gno_trio.transports.http.state import Exchange, GatewayState
from gno_trio.transports.http.status import resident_status, transport_metrics
from gno_trio.transports.http.surfaces import HttpCall, Surface, Work
from gno_trio.transports.http.team import change_headers, reach_wanted_change
from gno_trio.transports.http.tokens import TokenFileState
from gno_trio.transports.http.wire import (
    ALLOW_HEADER,
    Message,
    Receive,
    Refused,
    Reply,
    RequestHeaders,
    Scope,
    Send,
    accepts,
    boundary_reply,
    invalid_request_reply,
    is_json_content_type,
    jsonrpc_reply,
    send_reply,
)
from nurseries import AdmissionRefused

logger = logging.getLogger("gno_trio.transports.http")

_json_encoder = msgspec.json.Encoder()
_NO_STORE: Final = ((b"cache-control", b"no-store"),)


Shape = Callable[[Reply], Reply]
"""How one surface words a refusal (the REST API answers its own error body)."""


def _as_is(reply: Reply) -> Reply:
    return reply


class _Progress:
    """Whether the answer has begun (its status sent), whether its last byte has, and the
    connection's hook telling that the client left (None under another ASGI server)."""

    __slots__ = ("answered", "hook", "started")

    def __init__(self, hook: DisconnectHook | None) -> None:
        self.started = False
        self.answered = False
        self.hook = hook


STORE_AWAY: Final = boundary_reply(503, "store", headers=((b"retry-after", b"1"),))
"""The answer to a request the team store could not serve (``STORE_UNAVAILABLE``): retry."""


async def _watch_disconnect(
    receive: Receive, progress: _Progress, on_gone: Callable[[], None]
) -> None:
    """Cancel the request when its client hangs up before the answer is complete.

    hypercorn also sends ``http.disconnect`` right after the final body, while
    it is still closing or recycling the connection inside that same ``send``
    call; cancelling then would abort its clean-up (leaving the socket open
    and the keep-alive timer unstarted), so that one is ignored.
    """
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            if not progress.answered:
                on_gone()
            return


def _is_page_read(path: str, method: str) -> bool:
    """A browser asking for a page (not ``/mcp``, not the API)."""
    return method == "GET" and path != MCP_PATH and not path.startswith(API_PREFIX)


def _signin_redirect(path: str, query: bytes) -> Reply:
    """A browser without the session cookie goes to sign in, then comes back."""
    back = path + ("?" + query.decode("latin-1") if query else "")
    location = SIGNIN_PATH + "?" + urlencode({"next": back})
    return Reply(
        status=303,
        headers=((b"location", location.encode("ascii")), *_NO_STORE),
        content_type=None,
        reason="signin",
    )


class GatewayApp:
    """The ASGI callable hypercorn serves."""

    def __init__(
        self,
        state: GatewayState,
        *,
        token_state: TokenFileState | None,
        pages: Surface | None = None,
    ) -> None:
        """``pages``: what answers paths outside ``/mcp`` and ``/api/`` (404 when None)."""
        self.state = state
        self.api: Surface = rest.serve
        self.pages = pages
        self.boundary = Boundary(
            state.listener,
            token_state=token_state,
            on_credentials_changed=self._credentials_changed,
        )

    def count_write_timeout(self) -> None:
        """A connection was closed because its client stopped reading."""
        self.state.metrics.refusals["write-timeout"] += 1

    def _still_authorized(self, caller: Caller) -> bool:
        """Whether the token ``caller`` authenticated with is still the one in the token file.

        Re-reading the file also revokes sessions when it changed, which ends
        their streams from outside.
        """
        if not caller.authenticated:
            return True
        digest = self.boundary.current_digest()
        return digest is not None and caller.identity == bearer_identity(digest)

    def _credentials_changed(self) -> None:
        self.state.metrics.refusals["credentials_changed"] += 1
        try:  # the store may have to ask a shared registry: not on this request's path
            self.state.supervisor.start_soon(self._revoke, name="revoke-sessions")
        except RuntimeError:  # shutting down: every session ends anyway
            logger.debug("token file changed while the gateway shuts down")

    async def _revoke(self) -> None:
        closed = await self.state.sessions.revoke_authenticated()
        if closed:
            logger.warning("token file changed: closed %d authenticated session(s)", closed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:
            raise ValueError(f"unsupported ASGI scope type {kind!r}")

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a WebSocket upgrade with a plain HTTP answer, after the boundary checks.

        MCP is served over Streamable HTTP only. The boundary runs first, so a
        forged Host or a missing token is refused exactly as on a POST.
        """
        self.state.metrics.requests["websocket"] += 1
        verdict = self.boundary.check(scope, RequestHeaders(scope["headers"]))
        reply = (
            verdict
            if isinstance(verdict, Reply)
            else invalid_request_reply(
                400,
                f"WebSocket is not supported; MCP is served over Streamable HTTP (POST {MCP_PATH})",
                reason="websocket",
            )
        )
        if reply.status >= 400:
            self.state.metrics.refusals[reply.reason or str(reply.status)] += 1
        self.state.metrics.statuses[reply.status] += 1
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})  # the server answers 403
            return

        async def as_websocket_rejection(message: Message) -> None:
            await send({**message, "type": "websocket." + message["type"]})

        await send_reply(as_websocket_rejection, reply)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _reply(self, send: Send, reply: Reply) -> None:
        if reply.status >= 400:
            self.state.metrics.refusals[reply.reason or str(reply.status)] += 1
        await send_reply(send, reply)

    async def _http(self, scope: Scope, receive: Receive, raw_send: Send) -> None:
        statuses = self.state.metrics.statuses
        memory = self.state.memory
        progress = _Progress(scope.get("extensions", {}).get(DISCONNECT_EXTENSION))

        path: str = scope["path"]
        stamped = path == MCP_PATH or path.startswith(API_PREFIX)

        async def send(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                statuses[message["status"]] += 1
                progress.started = True
                if stamped and (change := change_headers(self.state.team)):
                    message = {**message, "headers": [*message.get("headers", ()), *change]}
            elif kind == "http.response.body":
                memory.answered(len(message.get("body", b"")))
                if not message.get("more_body", False):
                    progress.answered = True
            await raw_send(message)

        method: str = scope["method"]
        shape = self._shape_for(path)
        headers = RequestHeaders(scope["headers"])
        verdict = self.boundary.check(scope, headers)
        if isinstance(verdict, Reply):
            if verdict.status == 401 and self.pages is not None and _is_page_read(path, method):
                verdict = _signin_redirect(path, scope.get("query_string", b""))
            await self._reply(send, shape(verdict))
            return
        exchange = Exchange(receive, send, headers, verdict)
        try:
            if stamped:
                await reach_wanted_change(self.state.team, headers)
            if path == MCP_PATH:
                if method == "POST":
                    await self._post(exchange, progress)
                elif method == "GET":
                    self.state.metrics.requests["legacy_get"] += 1
                    await legacy.get(
                        self.state, exchange, lambda: self._still_authorized(exchange.caller)
                    )
                elif method == "DELETE":
                    self.state.metrics.requests["legacy_delete"] += 1
                    await self._admitted(lambda: legacy.delete(self.state, exchange), send)
                else:
                    raise Refused(
                        invalid_request_reply(
                            405, "Method not allowed", reason="method", headers=(ALLOW_HEADER,)
                        )
                    )
            elif path in (STATUS_PATH, METRICS_PATH):
                if method != "GET":
                    raise Refused(
                        invalid_request_reply(
                            405,
                            "Method not allowed",
                            reason="method",
                            headers=((b"allow", b"GET"),),
                        )
                    )
                self.state.metrics.requests["status"] += 1
                sessions = await self.state.sessions.count()  # a shared count: off the loop
                document = (
                    resident_status(self.state, sessions)
                    if path == STATUS_PATH
                    else transport_metrics(self.state, sessions)
                )
                await self._reply(
                    send, Reply(status=200, body=_json_encoder.encode(document), headers=_NO_STORE)
                )
            elif path.startswith(API_PREFIX):
                await self.api(self._call(exchange, scope, progress, shape))
            elif self.pages is not None:
                await self.pages(self._call(exchange, scope, progress, shape))
            else:
                raise Refused(invalid_request_reply(404, "Not found", reason="path"))
        except Refused as refused:
            await self._reply(send, shape(refused.reply))
        except GnoError as exc:
            await self._store_away(send, progress, shape, exc)

    async def _store_away(
        self, send: Send, progress: _Progress, shape: Shape, exc: GnoError
    ) -> None:
        """503 with ``Retry-After`` when the team store was away (nothing sent yet); else raise.

        A tool's own call reports ``STORE_UNAVAILABLE`` in its result; this is
        for the gateway's own use of the store (2025-era session rows).
        """
        if exc.kind is not Kind.UNAVAILABLE or progress.started:
            raise exc
        logger.warning("answered 503, the store is away: %s", exc.message)
        await self._reply(send, shape(STORE_AWAY))

    def _shape_for(self, path: str) -> Shape:
        """How refusals of ``path`` are worded: the REST error body under ``/api/``."""
        if path.startswith(API_PREFIX) and path not in (STATUS_PATH, METRICS_PATH):
            return api_shaped
        return _as_is

    def _call(
        self, exchange: Exchange, scope: Scope, progress: _Progress, shape: Shape
    ) -> HttpCall:
        async def admitted(work: Work) -> None:
            await self._watched(
                exchange, progress, lambda: self._admitted(work, exchange.send, shape), shape
            )

        async def reply(answer: Reply) -> None:
            await self._reply(exchange.send, shape(answer))

        return HttpCall(
            state=self.state,
            exchange=exchange,
            method=scope["method"],
            path=scope["path"],
            raw_path=(scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1"),
            query_string=scope.get("query_string", b""),
            admitted=admitted,
            send_reply=reply,
        )

    async def _watched(
        self, exchange: Exchange, progress: _Progress, work: Work, shape: Shape = _as_is
    ) -> None:
        """Run ``work`` (after the body was read), cancelling it if the client hangs up."""
        hook = progress.hook
        if hook is None:  # another ASGI server: a watcher task reads ``receive``
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    _watch_disconnect, exchange.receive, progress, nursery.cancel_scope.cancel
                )
                try:
                    await self._answered(exchange, progress, work, shape)
                finally:
                    nursery.cancel_scope.cancel()
            return
        with trio.CancelScope() as watched:

            def gone() -> None:
                if not progress.answered:  # see _watch_disconnect
                    watched.cancel()

            hook.on_gone = gone
            if hook.gone:
                watched.cancel()
            try:
                await self._answered(exchange, progress, work, shape)
            finally:
                hook.on_gone = None

    async def _answered(
        self, exchange: Exchange, progress: _Progress, work: Work, shape: Shape
    ) -> None:
        """Run ``work``, answering the refusal it raises or the store's absence."""
        try:
            await work()
        except Refused as refused:
            await self._reply(exchange.send, shape(refused.reply))
        except GnoError as exc:
            await self._store_away(exchange.send, progress, shape, exc)

    async def _admitted(
        self, work: Callable[[], Awaitable[None]], send: Send, shape: Shape = _as_is
    ) -> None:
        """Run ``work`` holding a capacity slot and a runtime admission slot."""
        try:
            async with self.state.capacity.slot():
                with self.state.readers:
                    await work()
        except AdmissionRefused as refused:
            # A shed client that honours Retry-After backs off instead of
            # re-queueing at once, which is what keeps admitted latency low.
            await self._reply(
                send,
                shape(
                    boundary_reply(
                        refused.http_status, refused.reason, headers=((b"retry-after", b"1"),)
                    )
                ),
            )

    async def _post(self, exchange: Exchange, progress: _Progress) -> None:
        headers = exchange.headers
        if not accepts(headers.get("accept"), "application/json", "text/event-stream"):
            raise Refused(
                invalid_request_reply(
                    406,
                    "Accept must include application/json and text/event-stream",
                    reason="accept",
                )
            )
        if not is_json_content_type(headers.get("content-type")):
            raise Refused(
                invalid_request_reply(
                    415, "Content-Type must be application/json", reason="content-type"
                )
            )
        settings = self.state.settings
        try:
            body = await read_body(
                exchange.receive,
                max_bytes=settings.limits.max_body_bytes,
                timeout=settings.body_timeout,
            )
        except ClientGone:
            return
        if isinstance(body, Reply):
            raise Refused(body)
        message = decode_line(body)
        if isinstance(message, DecodeFailure):
            raise Refused(
                jsonrpc_reply(
                    400,
                    message.id,
                    {"code": message.code, "message": message.message},
                    reason=f"decode-{message.code}",
                )
            )
        params = message.params if isinstance(message, Request | Notification) else None
        is_modern = claimed_era(params, headers.get(PROTOCOL_VERSION_HEADER)) is Era.MODERN
        self.state.metrics.requests["modern" if is_modern else "legacy"] += 1
        # A listen stream is served but not admitted: it would hold a slot for its whole life.
        streams = (
            is_modern
            and isinstance(message, Request)
            and message.method == SUBSCRIPTIONS_LISTEN
            and SUBSCRIPTIONS_LISTEN in self.state.app.modern_methods
        )
        if streams:
            assert isinstance(message, Request)
            request = message
            await self._watched(
                exchange, progress, lambda: listen.serve(self.state, exchange, request)
            )
        else:
            await self._watched(
                exchange,
                progress,
                lambda: self._admitted(
                    lambda: self._guarded(exchange, message, is_modern), exchange.send
                ),
            )

    async def _guarded(self, exchange: Exchange, message: Incoming, is_modern: bool) -> None:
        ticket: EgressTicket | None = None
        if isinstance(message, Request):
            refusal = write_gate(
                message,
                write_enabled=self.state.settings.enable_write,
                write_tools=self.state.app.write_tools,
            )
            if refusal is not None:
                raise Refused(refusal)
            verdict = egress_guard(
                message, exchange.caller, self.state.policies, self.state.app.content_classes
            )
            if isinstance(verdict, Reply):
                raise Refused(verdict)
            ticket = verdict
        if is_modern:
            await modern.post(self.state, exchange, message, ticket)
        else:
            await legacy.post(self.state, exchange, message, ticket)


__all__ = ["GatewayApp"]
