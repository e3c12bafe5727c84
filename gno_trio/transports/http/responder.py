"""Answering one JSON-RPC request over HTTP: a JSON body, or SSE when notifications come first.

A request's answer starts out as a plain ``application/json`` reply. Only when
the handler emits a notification that belongs to the request (progress) does
the :class:`Responder` switch to ``text/event-stream``: it sends the SSE
headers, then each notification as an event, then the response as the last
event, and ends the stream. Clients must accept both forms, and most requests
never pay for a stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from gno_trio.protocol.jsonrpc import Request, encode_notification
from gno_trio.protocol.routing import http_status
from gno_trio.protocol.versions import Era
from gno_trio.server.context import RequestContext
from gno_trio.server.dispatch import McpApp
from gno_trio.transports.answering import answer
from gno_trio.transports.deadlines import InFlightDeadlines
from gno_trio.transports.http.wire import SSE_HEADERS, Header, Reply, Send, send_reply, sse_event

FinalCheck = Callable[[], Awaitable[Reply | None]]
"""Run after the handler and before the answer is committed; a Reply replaces the answer."""


async def no_final_check() -> None:
    """The :data:`FinalCheck` of a request no guard judged."""
    return None


class Responder:
    """The one way a request's answer reaches the client."""

    __slots__ = ("_headers", "_send", "committed", "streaming")

    def __init__(self, send: Send, headers: tuple[Header, ...] = ()) -> None:
        self._send = send
        self._headers = headers
        self.streaming = False
        self.committed = False

    async def _open_stream(self) -> None:
        self.streaming = True
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*SSE_HEADERS, *self._headers],
            }
        )

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        """Send a request-scoped notification, switching to SSE on the first one."""
        if self.committed:
            return
        if not self.streaming:
            await self._open_stream()
        line = encode_notification(method, params)
        await self._send({"type": "http.response.body", "body": sse_event(line), "more_body": True})

    async def answer(self, status: int, line: bytes) -> None:
        """Send the final message (result or error) and end the exchange."""
        self.committed = True
        if self.streaming:
            await self._send(
                {"type": "http.response.body", "body": sse_event(line), "more_body": False}
            )
        else:
            await send_reply(self._send, Reply(status=status, body=line, headers=self._headers))

    async def refuse(self, reply: Reply) -> None:
        """Replace the answer with a refusal (as a last SSE event once streaming)."""
        if self.streaming:
            await self.answer(reply.status, reply.body)
        else:
            self.committed = True
            await send_reply(self._send, reply)

    async def end_without_answer(self) -> None:
        """Close the exchange sending no JSON-RPC response (the request was cancelled)."""
        if self.committed:
            return
        self.committed = True
        if not self.streaming:
            await self._open_stream()
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def dispatch(
    app: McpApp,
    request: Request,
    context: RequestContext,
    responder: Responder,
    *,
    era: Era,
    final_check: FinalCheck,
    deadlines: InFlightDeadlines,
) -> None:
    """Answer ``request`` (:func:`~gno_trio.transports.answering.answer`) through ``responder``.

    A plain JSON error reply takes the HTTP status ``era`` gives its code. Once
    the gateway drains, the request's own deadline bounds it (see
    :mod:`~gno_trio.transports.deadlines`): past it, the answer is an error.
    """
    with deadlines.track() as deadline, deadline.sending:
        try:
            answered = await answer(app, request, context, deadline)
        finally:
            context.finish()
        refusal = await final_check()
        if refusal is not None:
            await responder.refuse(refusal)
            return
        code = answered.error_code
        await responder.answer(200 if code is None else http_status(code, era), answered.line)


__all__ = ["FinalCheck", "Responder", "dispatch", "no_final_check"]
