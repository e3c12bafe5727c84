"""The 2025-11-25 leg: requests, notifications, GET and DELETE against the session store.

Status codes (MCP-WIRE a.8): a POST without ``Mcp-Session-Id`` that is not
``initialize`` is 400; an unknown or closed session is 404 (``-32001``); a
session used by another identity is closed and answered 403; ``Last-Event-ID``
is 400 (no resumption); an unsupported ``MCP-Protocol-Version`` is 400; a
second GET stream is 409; notifications and client responses are 202. Errors
raised by the handler itself ride in a 200 JSON-RPC error body, as 2025-era
clients expect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import trio

from gno_trio.protocol.connection import INITIALIZE
from gno_trio.protocol.errors import INVALID_REQUEST, ProtocolError
from gno_trio.protocol.jsonrpc import Incoming, Notification, Request, RequestId
from gno_trio.protocol.names import (
    CANCELLED_NOTIFICATION,
    LAST_EVENT_ID_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
)
from gno_trio.protocol.versions import LEGACY_VERSIONS, Era
from gno_trio.server.context import RequestContext
from gno_trio.transports.http.guards import EgressTicket, epoch_guard
from gno_trio.transports.http.identity import session_belongs_to
from gno_trio.transports.http.responder import Responder, dispatch, no_final_check
from gno_trio.transports.http.sessions import (
    SESSION_NOT_FOUND_CODE,
    HttpSession,
    SessionLimit,
    run_get_stream,
)
from gno_trio.transports.http.state import Exchange, GatewayState
from gno_trio.transports.http.wire import (
    Refused,
    Reply,
    accepts,
    boundary_reply,
    empty_reply,
    invalid_request_reply,
    jsonrpc_reply,
    send_reply,
)

SESSIONS_FULL_CODE: Final = -32000


def _message_id(message: Incoming) -> RequestId | None:
    return message.id if isinstance(message, Request) else None


def _check_common(exchange: Exchange) -> None:
    headers = exchange.headers
    if LAST_EVENT_ID_HEADER in headers:
        raise Refused(
            invalid_request_reply(
                400, "Resumption is not supported (Last-Event-ID)", reason="last-event-id"
            )
        )
    version = headers.get(PROTOCOL_VERSION_HEADER)
    if version is not None and version.strip() not in LEGACY_VERSIONS:
        raise Refused(
            invalid_request_reply(
                400, f"Unsupported MCP-Protocol-Version: {version.strip()}", reason="legacy-version"
            )
        )


async def _session_for(
    state: GatewayState, exchange: Exchange, request_id: RequestId | None
) -> HttpSession:
    """The caller's own live session, or the refusal to answer with."""
    headers = exchange.headers
    session_id = headers.get(SESSION_HEADER)
    if session_id is None:
        raise Refused(
            invalid_request_reply(
                400,
                "Mcp-Session-Id header is required; send initialize first",
                reason="session-missing",
            )
        )
    if headers.repeated(SESSION_HEADER):
        raise Refused(
            invalid_request_reply(400, "Mcp-Session-Id sent more than once", reason="session-twice")
        )
    session = await state.sessions.get(session_id.strip())
    if session is None:
        raise Refused(
            jsonrpc_reply(
                404,
                request_id,
                {"code": SESSION_NOT_FOUND_CODE, "message": "Session not found"},
                reason="session-unknown",
            )
        )
    if not session_belongs_to(session.identity, exchange.caller):
        await state.sessions.close(session, "identity")
        raise Refused(boundary_reply(403, "session-identity"))
    return session


async def post(
    state: GatewayState, exchange: Exchange, message: Incoming, ticket: EgressTicket | None
) -> None:
    """Serve one legacy POST body."""
    _check_common(exchange)
    if (
        SESSION_HEADER not in exchange.headers
        and isinstance(message, Request)
        and message.method == INITIALIZE
    ):
        await _initialize(state, exchange, message)
        return
    session = await _session_for(state, exchange, _message_id(message))
    await state.sessions.touch(session)
    if isinstance(message, Request):
        await _serve_request(state, exchange, session, message, ticket)
        return
    if isinstance(message, Notification):
        await _on_notification(state, session, message)
    await send_reply(exchange.send, empty_reply(202, reason="accepted"))


async def _on_notification(
    state: GatewayState, session: HttpSession, message: Notification
) -> None:
    if message.method == CANCELLED_NOTIFICATION:
        params = message.params or {}
        await state.sessions.cancel(session, params.get("requestId"))
        return
    session.protocol.on_notification(message.method)
    state.app.handle_notification(message.method, message.params)


def _sessions_full(
    state: GatewayState, identity: str, limit: SessionLimit, request_id: RequestId
) -> Reply:
    """The 429 for an ``initialize`` refused by ``limit``, naming that limit."""
    store = state.sessions
    if limit is SessionLimit.TOTAL:
        retry = store.retry_after()
        message = f"All {store.max_sessions} sessions are in use"
        data: dict[str, int] = {"maxSessions": store.max_sessions}
    else:
        retry = store.retry_after(identity)
        message = (
            f"This caller already holds {store.max_per_identity} sessions, the most one caller "
            "may hold (gateway.limits.maxSessionsPerIdentity)"
        )
        data = {"maxSessionsPerIdentity": store.max_per_identity}
    return jsonrpc_reply(
        429,
        request_id,
        {
            "code": SESSIONS_FULL_CODE,
            "message": f"{message}; retry in {retry} s, or end unused sessions with DELETE",
            "data": {**data, "retryAfter": retry},
        },
        reason="sessions-full" if limit is SessionLimit.TOTAL else "sessions-full-identity",
        headers=((b"retry-after", str(retry).encode("ascii")),),
    )


async def _initialize(state: GatewayState, exchange: Exchange, request: Request) -> None:
    session = await state.sessions.open(exchange.caller.identity)
    if isinstance(session, SessionLimit):
        raise Refused(_sessions_full(state, exchange.caller.identity, session, request.id))
    try:
        admission = session.protocol.admit(request.method, request.params)
    except ProtocolError as exc:
        await state.sessions.close(session, "failed")
        raise Refused(
            jsonrpc_reply(400, request.id, exc.to_error_object(), reason="initialize-invalid")
        ) from None
    await state.sessions.record(session)
    responder = Responder(exchange.send, ((SESSION_HEADER.encode(), session.id.encode()),))
    context = RequestContext.from_admission(
        admission,
        session_id=session.id,
        request_id=request.id,
        send_notification=responder.notify,
    )
    try:
        await dispatch(
            state.app,
            request,
            context,
            responder,
            era=Era.LEGACY,
            final_check=no_final_check,
            deadlines=state.deadlines,
        )
    finally:
        if not responder.committed:
            with trio.CancelScope(shield=True):
                await state.sessions.close(session, "failed")


async def _serve_request(
    state: GatewayState,
    exchange: Exchange,
    session: HttpSession,
    request: Request,
    ticket: EgressTicket | None,
) -> None:
    if request.method == INITIALIZE:
        raise Refused(
            jsonrpc_reply(
                400,
                request.id,
                {"code": INVALID_REQUEST, "message": "This session is already initialized"},
                reason="initialize-again",
            )
        )
    if request.id in session.in_flight:
        raise Refused(
            jsonrpc_reply(
                400,
                request.id,
                {"code": INVALID_REQUEST, "message": "Request id is already in use"},
                reason="id-in-use",
            )
        )
    responder = Responder(exchange.send)
    try:
        admission = session.protocol.admit(request.method, request.params)
    except ProtocolError as exc:
        await send_reply(
            exchange.send,
            jsonrpc_reply(200, request.id, exc.to_error_object(), reason="legacy-admit"),
        )
        return
    context = RequestContext.from_admission(
        admission,
        session_id=session.id,
        request_id=request.id,
        send_notification=responder.notify,
        subscriptions=session.subscriptions,
    )
    scope = trio.CancelScope()
    session.in_flight[request.id] = scope
    try:
        with scope:
            await dispatch(
                state.app,
                request,
                context,
                responder,
                era=Era.LEGACY,
                final_check=lambda: epoch_guard(request, ticket, state.policies),
                deadlines=state.deadlines,
            )
        if scope.cancelled_caught:
            context.cancellation.cancel()
            await responder.end_without_answer()
    finally:
        session.in_flight.pop(request.id, None)
        with trio.CancelScope(shield=True):
            await state.sessions.touch(session)


def _always() -> bool:
    return True


async def get(
    state: GatewayState, exchange: Exchange, still_authorized: Callable[[], bool] = _always
) -> None:
    """Open the session's server-to-client stream (``still_authorized``: see run_get_stream)."""
    if state.capacity.draining or state.supervisor.closed:
        raise Refused(boundary_reply(503, "draining"))
    if not accepts(exchange.headers.get("accept"), "text/event-stream"):
        raise Refused(
            invalid_request_reply(406, "Accept must include text/event-stream", reason="accept")
        )
    _check_common(exchange)
    session = await _session_for(state, exchange, None)
    if not await state.sessions.claim_stream(session):
        raise Refused(
            invalid_request_reply(
                409, "A GET stream is already open for this session", reason="stream-twice"
            )
        )
    await run_get_stream(
        session,
        exchange.receive,
        exchange.send,
        supervisor=state.supervisor,
        keepalive=state.settings.stream_keepalive,
        metrics=state.metrics,
        store=state.sessions,
        still_authorized=still_authorized,
    )


async def delete(state: GatewayState, exchange: Exchange) -> None:
    """End a session: its id answers 404 from now on."""
    _check_common(exchange)
    session = await _session_for(state, exchange, None)
    await state.sessions.close(session, "deleted")
    await send_reply(exchange.send, empty_reply(204, reason="deleted"))


__all__ = ["delete", "get", "post"]
