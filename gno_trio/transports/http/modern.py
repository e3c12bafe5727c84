"""The sessionless 2026-07-28 leg: strict validation, then one dispatch per request.

Nothing here touches the session store. A request is validated in this order
(each failure is a JSON-RPC error echoing the request id):

1. no ``Mcp-Session-Id`` (``-32600``, 400): sessions are 2025-era only;
2. the ``params._meta`` envelope is present and well formed (``-32602``, 400);
3. routing headers agree with the body (``-32020`` HeaderMismatch, 400: the
   rules are :mod:`gno_trio.protocol.routing`'s);
4. the revision is served (``-32022``, 400, ``data.supported``/``data.requested``);
5. the method is served (``-32601``, 404); ``subscriptions/listen`` is served
   only with subscriptions switched on, as a stream (:mod:`.listen`).

Steps 2-5 are :func:`gno_trio.protocol.connection.admit_modern` given the
request's headers; each error's status is :func:`gno_trio.protocol.routing.http_status`.
"""

from __future__ import annotations

from typing import Any

from gno_trio.protocol import routing
from gno_trio.protocol.connection import admit_modern
from gno_trio.protocol.errors import ProtocolError
from gno_trio.protocol.jsonrpc import Incoming, Notification, Request
from gno_trio.protocol.routing import http_status
from gno_trio.protocol.versions import Era
from gno_trio.server.context import RequestContext
from gno_trio.transports.http.guards import EgressTicket, epoch_guard
from gno_trio.transports.http.responder import Responder, dispatch
from gno_trio.transports.http.state import Exchange, GatewayState
from gno_trio.transports.http.wire import (
    Refused,
    Reply,
    RequestHeaders,
    empty_reply,
    invalid_request_reply,
    jsonrpc_reply,
    send_reply,
)


def session_header_refusal(headers: RequestHeaders, request_id: Any) -> Reply | None:
    """Step 1: a modern message naming a session is refused before any lookup."""
    refusal = routing.session_header_refusal(headers)
    if refusal is None:
        return None
    return jsonrpc_reply(
        http_status(refusal.code, Era.MODERN),
        request_id,
        refusal.to_error_object(),
        reason="modern-session-id",
    )


def error_reply(request: Request, exc: ProtocolError) -> Reply:
    """The JSON-RPC error reply for a refused modern request, at the status its code maps to."""
    return jsonrpc_reply(
        http_status(exc.code, Era.MODERN),
        request.id,
        exc.to_error_object(),
        reason=f"modern-{exc.code}",
    )


async def post(
    state: GatewayState, exchange: Exchange, message: Incoming, ticket: EgressTicket | None
) -> None:
    """Serve one modern POST body: validate, dispatch once, answer."""
    request_id = message.id if isinstance(message, Request) else None
    refusal = session_header_refusal(exchange.headers, request_id)
    if refusal is not None:
        raise Refused(refusal)
    if isinstance(message, Notification):
        state.app.handle_notification(message.method, message.params)
        await send_reply(exchange.send, empty_reply(202, reason="accepted"))
        return
    if not isinstance(message, Request):
        raise Refused(
            invalid_request_reply(
                400, "A 2026-07-28 client sends requests and notifications only", reason="response"
            )
        )
    try:
        # subscriptions/listen never comes here (it is a stream: see .listen).
        admission = admit_modern(message.method, message.params, headers=exchange.headers)
    except ProtocolError as exc:
        raise Refused(error_reply(message, exc)) from None
    responder = Responder(exchange.send)
    context = RequestContext.from_admission(
        admission,
        session_id=state.labels.label(exchange.caller.identity),
        request_id=message.id,
        send_notification=responder.notify,
    )
    await dispatch(
        state.app,
        message,
        context,
        responder,
        era=Era.MODERN,
        final_check=lambda: epoch_guard(message, ticket, state.policies),
        deadlines=state.deadlines,
    )


__all__ = ["error_reply", "post", "session_header_refusal"]
