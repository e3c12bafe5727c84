"""What one long-lived SSE stream is waiting to send, and the loop that sends it.

Both long streams (``subscriptions/listen`` and ``/api/events``) hold no
request slot; what bounds them is here: a bounded queue (a client that
stops reading loses its stream once the queue is full), a keep-alive
comment on an idle stream (so a dead connection is found at the socket
write deadline), a server-side lifetime, and the events that end it early
(the gateway draining, the overflow itself).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import trio

from gno_trio.transports.http.wire import SSE_KEEPALIVE, Send

QUEUE_CHUNKS: Final = 64
"""Events waiting for one slow stream; past it the stream is dropped."""


class SseOutbox:
    """A bounded queue of encoded SSE chunks for one stream."""

    def __init__(self, size: int = QUEUE_CHUNKS) -> None:
        self._outbox, self._inbox = trio.open_memory_channel[bytes](size)
        self.overflowed = trio.Event()
        """Set when a chunk found the queue full: the client stopped reading."""

    def offer(self, chunk: bytes) -> bool:
        """Queue ``chunk``; False (and :attr:`overflowed` set) when the queue is full."""
        try:
            self._outbox.send_nowait(chunk)
        except trio.WouldBlock:
            self.overflowed.set()
            return False
        return True

    async def pump(
        self,
        send: Send,
        *,
        keepalive: float,
        lifetime: float,
        ends: Sequence[trio.Event] = (),
        beside: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> None:
        """Send each queued chunk (a keep-alive comment when idle) until ``lifetime`` is up,
        the queue overflows or one of ``ends`` is set; ``beside`` run meanwhile."""
        async with trio.open_nursery() as nursery:

            async def end_when(event: trio.Event) -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            for event in (*ends, self.overflowed):
                nursery.start_soon(end_when, event)
            for task in beside:
                nursery.start_soon(task)
            with trio.move_on_after(lifetime):
                while True:
                    chunk = SSE_KEEPALIVE
                    with trio.move_on_after(keepalive):
                        chunk = await self._inbox.receive()
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            nursery.cancel_scope.cancel()


__all__ = ["QUEUE_CHUNKS", "SseOutbox"]
