"""The seam between the gateway and its HTTP surfaces other than MCP: the REST API and the pages.

The gateway runs the boundary (peer, Host/Origin, bearer, rate, declared
length) for every request, serves ``/mcp`` and the two resident paths itself,
and hands every other request to a :data:`Surface` as one :class:`HttpCall`:
paths under ``/api/`` to the REST API, every other path to the pages (a 404
when the gateway serves none). A surface reads its body through
:meth:`HttpCall.read_body` (the gateway's size and time limits) and runs its
work through :meth:`HttpCall.admitted`, which holds a transport capacity slot
and a runtime admission slot for exactly that long and cancels the work when
the client hangs up; a surface that streams for a long time (server-sent
events) holds neither while it waits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl

from gno_trio.transports.http.boundary import ClientGone, read_body
from gno_trio.transports.http.state import Exchange, GatewayState
from gno_trio.transports.http.wire import Refused, Reply

Work = Callable[[], Awaitable[None]]


@dataclass(eq=False, slots=True)
class HttpCall:
    """One request past the boundary, for a surface to answer."""

    state: GatewayState
    exchange: Exchange
    method: str
    path: str
    """The path, percent-decoded (as ASGI gives it)."""
    raw_path: str
    """The path as sent, still percent-encoded (for segments holding an encoded ``/``)."""
    query_string: bytes
    admitted: Callable[[Work], Awaitable[None]]
    """Runs work holding a capacity slot and a runtime slot, cancelled when the client
    disconnects; call it after the body is read. A refused admission (busy, draining) is
    answered with its status and ``Retry-After``."""
    send_reply: Callable[[Reply], Awaitable[None]]
    """Sends a whole reply, counting refusals in the transport metrics."""

    def query(self) -> list[tuple[str, str]]:
        """The query string's pairs, in order (blank values kept; bad UTF-8 replaced)."""
        return parse_qsl(self.query_string.decode("utf-8", "replace"), keep_blank_values=True)

    async def read_body(self) -> bytes | None:
        """The whole body under the gateway's limits; ``None`` when the client hung up.

        Raises :class:`Refused` (413 too large, 408 too slow).
        """
        settings = self.state.settings
        try:
            body = await read_body(
                self.exchange.receive,
                max_bytes=settings.limits.max_body_bytes,
                timeout=settings.body_timeout,
            )
        except ClientGone:
            return None
        if isinstance(body, Reply):
            raise Refused(body)
        return body


Surface = Callable[[HttpCall], Awaitable[None]]
"""A set of routes under one part of the path space; raises :class:`Refused` to refuse."""


__all__ = ["HttpCall", "Surface", "Work"]
