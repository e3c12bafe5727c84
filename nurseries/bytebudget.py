"""A budget of bytes held in a queue, so a reader that stops reading stops its producers.

A memory channel bounds how many items wait, not how large they are: 256
queued answers of 16 MiB each are 4 GiB. :class:`ByteBudget` bounds their
total size instead. A producer ``await``\\ s :meth:`ByteBudget.acquire` for the
size of what it is about to queue and the consumer calls
:meth:`ByteBudget.release` once the bytes are written. One item larger than
the whole budget is still let through, but only when nothing else is held, so
every item can make progress and the bound is ``max(capacity, largest item)``.
"""

from __future__ import annotations

from collections import deque

import trio


class ByteBudget:
    """At most ``capacity`` bytes held at once (one oversized item alone excepted).

    Waiters are served in arrival order, so a large item is never starved by
    a stream of small ones.
    """

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.held = 0
        self._queue: deque[tuple[int, trio.Event]] = deque()

    def _fits(self, size: int) -> bool:
        return self.held == 0 or self.held + size <= self.capacity

    def try_acquire(self, size: int) -> bool:
        """Hold ``size`` more bytes now if they fit and nobody waits ahead; False otherwise."""
        if self._queue or not self._fits(size):
            return False
        self.held += size
        return True

    async def acquire(self, size: int) -> None:
        """Wait until ``size`` more bytes fit, then hold them."""
        if not self._queue and self._fits(size):
            await trio.lowlevel.checkpoint_if_cancelled()
            self.held += size
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        granted = trio.Event()
        entry = (size, granted)
        self._queue.append(entry)
        try:
            await granted.wait()
        except BaseException:
            if granted.is_set():  # granted and cancelled in the same instant
                self.release(size)
            else:
                self._queue.remove(entry)
                self._grant()
            raise

    def release(self, size: int) -> None:
        """Give back ``size`` bytes taken by :meth:`acquire`."""
        if size > self.held:
            raise RuntimeError("released more bytes than are held")
        self.held -= size
        self._grant()

    def _grant(self) -> None:
        while self._queue and self._fits(self._queue[0][0]):
            size, granted = self._queue.popleft()
            self.held += size
            granted.set()


__all__ = ["ByteBudget"]
