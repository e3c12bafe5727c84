"""``subscriptions/listen`` over HTTP (2026-07-28): one POST answered by a notification stream.

The request is validated like any modern request
(:func:`~gno_trio.protocol.connection.admit_modern`), then answered with an
SSE stream whose first event is the acknowledgement; each change the stream
listens for follows, stamped with its subscription id.
The stream holds no capacity or runtime slot; it is bounded instead by the
per-identity count of :class:`~.listen_book.ListenBook` (on all workers), by
a server-side lifetime, by a bounded queue (a burst waits in it for a client
that reads; a client that stops reading loses its connection at the socket
write deadline, and the stream with it),
and by the gateway's drain. When the lifetime is up or the gateway drains,
the stream ends gracefully with the ``complete`` result; a client that
hangs up just ends it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from gno_trio.protocol.connection import admit_modern
from gno_trio.protocol.errors import ProtocolError, method_not_found
from gno_trio.protocol.jsonrpc import Request, encode_answer, encode_notification
from gno_trio.protocol.subscriptions import (
    ListenFilter,
    too_many_listens,
)
from gno_trio.server.change_feed import ChangeFeed
from gno_trio.transports.http import modern
from gno_trio.transports.http.sse_outbox import SseOutbox
from gno_trio.transports.http.state import Exchange, GatewayState
from gno_trio.transports.http.wire import (
    SSE_HEADERS,
    Refused,
    boundary_reply,
    sse_event,
)

logger = logging.getLogger("gno_trio.transports.http")


async def serve(state: GatewayState, exchange: Exchange, request: Request) -> None:
    """Validate, acknowledge, then stream until the client leaves, the lifetime ends or we drain."""
    refusal = modern.session_header_refusal(exchange.headers, request.id)
    if refusal is not None:
        raise Refused(refusal)
    feed = state.app.change_feed
    try:
        admit_modern(
            request.method,
            request.params,
            served=state.app.modern_methods,
            headers=exchange.headers,
        )
        if feed is None:  # the method is served only with a feed; kept for the type checker
            raise method_not_found(request.method)
        listen = ListenFilter(request.id, request.params)
    except ProtocolError as exc:
        raise Refused(modern.error_reply(request, exc)) from None
    book = state.listens
    identity = exchange.caller.identity
    if book.closing.is_set() or state.supervisor.closed:
        raise Refused(boundary_reply(503, "draining"))
    share = await book.take(identity)
    if share is None:
        raise Refused(modern.error_reply(request, too_many_listens()))
    try:
        await _stream(state, exchange, request, listen, feed)
    finally:
        await book.give_back(identity, share)


async def _stream(
    state: GatewayState,
    exchange: Exchange,
    request: Request,
    listen: ListenFilter,
    feed: ChangeFeed,
) -> None:
    send = exchange.send
    outbox = SseOutbox()

    async def deliver(entries: Sequence[Mapping[str, Any]]) -> None:
        for method, params in listen.notices(entries):
            await outbox.put(sse_event(encode_notification(method, params)))

    await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
    stop = await feed.listen(deliver, outbox.dropped.set)  # placed before the acknowledgement
    graceful = True
    try:
        method, params = listen.acknowledgement()
        await send(
            {
                "type": "http.response.body",
                "body": sse_event(encode_notification(method, params)),
                "more_body": True,
            }
        )
        await outbox.pump(
            send,
            keepalive=state.settings.stream_keepalive,
            lifetime=state.settings.stream_lifetime,
            ends=(state.listens.closing,),
        )
    finally:
        stop()
    if outbox.dropped.is_set():
        logger.info("a listen stream whose client stopped reading was dropped")
        graceful = False
    body = sse_event(encode_answer(request.id, listen.completion())) if graceful else b""
    await send({"type": "http.response.body", "body": body, "more_body": False})


__all__ = ["serve"]
