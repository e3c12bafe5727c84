"""A capacity limiter whose tokens after the first open only behind a slow holder.

Work that holds one process-wide lock while it computes (CPython's GIL) runs
slower side by side than one call after another: two quick calls at once
each pay for the lock passing back and forth between their threads, so
together they finish later and burn more CPU than in turn. Yet a slow call
must not hold quick ones back behind it. :class:`StaggeredLimiter` lets one
holder run at a time while calls are quick and opens one more token only
once every holder has held its token for ``stagger`` seconds (a slow call is
running), up to ``total_tokens``. Waiters are served in arrival order.

Its surface is the part of :class:`trio.CapacityLimiter` a worker-thread
runner uses (``acquire_on_behalf_of``, its ``_nowait`` form,
``release_on_behalf_of``, ``borrowed_tokens``, ``total_tokens``,
``statistics()``), so either can bound the same threads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import trio


@dataclass(frozen=True, slots=True)
class StaggerStatistics:
    borrowed_tokens: int
    total_tokens: int
    tasks_waiting: int


class StaggeredLimiter:
    """At most ``total_tokens`` holders; a second or later one only while every
    holder has held its token for at least ``stagger`` seconds."""

    def __init__(self, total_tokens: int, stagger: float) -> None:
        if total_tokens < 1:
            raise ValueError("total_tokens must be at least 1")
        if not stagger >= 0:
            raise ValueError("stagger must be zero or more seconds")
        self._total = total_tokens
        self._stagger = stagger
        self._held: dict[object, float] = {}  # borrower -> when it took its token
        self._turn = trio.Lock()  # fair: the first waiter alone watches for a token
        self._released = trio.Event()
        self._waiting = 0

    @property
    def total_tokens(self) -> int:
        return self._total

    @property
    def borrowed_tokens(self) -> int:
        return len(self._held)

    def statistics(self) -> StaggerStatistics:
        return StaggerStatistics(len(self._held), self._total, self._waiting)

    def _opens_at(self) -> float:
        """When a token may next be taken: at once when none is held, never while all
        are, else once the youngest holder has held its token for ``stagger``."""
        if not self._held:
            return -math.inf
        if len(self._held) >= self._total:
            return math.inf
        return max(self._held.values()) + self._stagger

    def _take(self, borrower: object) -> None:
        if borrower in self._held:
            raise RuntimeError("this borrower already holds a token")
        self._held[borrower] = trio.current_time()

    def acquire_on_behalf_of_nowait(self, borrower: object) -> None:
        """Take a token now, or raise :class:`trio.WouldBlock` (also while others wait)."""
        if self._turn.locked() or self._opens_at() > trio.current_time():
            raise trio.WouldBlock
        self._take(borrower)

    async def acquire_on_behalf_of(self, borrower: object) -> None:
        """Wait for a token, after those who came before."""
        self._waiting += 1
        try:
            async with self._turn:
                while (opens := self._opens_at()) > trio.current_time():
                    released = self._released
                    with trio.move_on_at(opens):
                        await released.wait()
                self._take(borrower)
        finally:
            self._waiting -= 1

    def release_on_behalf_of(self, borrower: object) -> None:
        if self._held.pop(borrower, None) is None:
            raise RuntimeError("this borrower holds no token")
        self._released.set()
        self._released = trio.Event()


__all__ = ["StaggerStatistics", "StaggeredLimiter"]
