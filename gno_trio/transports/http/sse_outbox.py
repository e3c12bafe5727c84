"""What one long-lived SSE stream is waiting to send, and the loop that sends it.

Both long streams (``subscriptions/listen`` and ``/api/events``) hold no
request slot; what bounds them is here: a bounded queue (a producer waits
for room, so a burst reaches a client that reads at the pace it reads, while
a client that stops reading loses its connection at the socket write
deadline and the stream with it), a keep-alive comment on an idle stream
(so a dead connection is found at that deadline too), a server-side
lifetime, and the events that end it early (the gateway draining, the change
feed giving up on a listener that stayed full past its own deadline).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import trio

from gno_trio.transports.http.wire import SSE_KEEPALIVE, Send

QUEUE_CHUNKS: Final = 64
"""Events waiting for one stream; past it a producer waits for the client to read."""


class SseOutbox:
    """A bounded queue of encoded SSE chunks for one stream."""

    def __init__(self, size: int = QUEUE_CHUNKS) -> None:
        self._outbox, self._inbox = trio.open_memory_channel[bytes](size)
        self.dropped = trio.Event()
        """Set when a producer gave up on this stream (its client took nothing for too long)."""

    async def put(self, chunk: bytes) -> None:
        """Queue ``chunk``, waiting while the queue is full.

        Raises ``trio.BrokenResourceError`` once the stream has ended, so a
        producer waiting for room is released with the stream.
        """
        await self._outbox.send(chunk)

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
        :attr:`dropped` or one of ``ends`` is set; ``beside`` run meanwhile."""
        async with self._inbox, trio.open_nursery() as nursery:

            async def end_when(event: trio.Event) -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            for event in (*ends, self.dropped):
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
