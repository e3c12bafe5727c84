"""Giving memory back to the OS once a burst of large answers is over.

Answers of a few megabytes are built as Python objects, encoded, and copied
on their way to the socket; with dozens in flight the process grows by
hundreds of megabytes. When they are freed, glibc's allocator keeps most of
those pages for reuse (per thread arena, and above its adaptive mmap
threshold), so the process would stay large long after the load left.

:class:`MemoryReturn` counts the bytes the gateway answered; when at least
``threshold`` bytes went out since the last release and no request is
running, it asks glibc to return free pages (:func:`~gno_trio.heap.trim_heap`),
in a worker thread. On a C library without ``malloc_trim`` it does nothing.
"""

from __future__ import annotations

import logging
from typing import Final

import trio

from gno_trio.heap import CAN_TRIM, trim_heap

logger = logging.getLogger("gno_trio.transports.http")

RELEASE_AFTER_BYTES: Final = 16 * 1024 * 1024


class MemoryReturn:
    """Counts answered bytes; :meth:`maybe_release` trims the heap after a large idle burst."""

    def __init__(self, threshold: int = RELEASE_AFTER_BYTES) -> None:
        self.threshold = threshold
        self.pending = 0
        self.releases = 0

    def answered(self, size: int) -> None:
        """``size`` bytes of an answer were handed to the server."""
        self.pending += size

    async def maybe_release(self, idle: bool) -> bool:
        """Trim the heap when enough went out since the last time and nothing is running."""
        if not idle or self.pending < self.threshold or not CAN_TRIM:
            return False
        self.pending = 0
        self.releases += 1
        await trio.to_thread.run_sync(trim_heap)
        logger.debug("returned free heap pages to the OS")
        return True


__all__ = ["RELEASE_AFTER_BYTES", "MemoryReturn"]
