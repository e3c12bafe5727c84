"""A per-key fixed-window rate limiter with a hard cap on tracked keys.

Each key (typically a peer address) may make ``limit`` requests per window of
``window_seconds``; its window opens with its first request and a fresh one
opens with the first request after it closes.  The limiter is synchronous and
O(1) amortised per call so it can sit in front of every request, before any
body parsing.

Memory is bounded by ``max_keys``: a flood of distinct peers must not grow the
table without limit.  Entries are kept in order of window start.  All windows
have the same length, so that order is also expiry order: expired entries form
a prefix and are dropped from the front as they are passed, and when the table
is full of live windows the oldest one is evicted.  An evicted key starts a
fresh window on its next request; that is the price of bounded memory, and it
only happens while more than ``max_keys`` peers are active within one window.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import trio

__all__ = ["FixedWindowRateLimiter", "RateDecision"]

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class RateDecision:
    """Whether one request may proceed.

    ``remaining`` is how many more requests the key may make in its current
    window after this one; ``retry_after`` is the number of seconds until the
    window resets when refused (0.0 when allowed).
    """

    allowed: bool
    remaining: int
    retry_after: float


class _Window:
    __slots__ = ("count", "started_at")

    def __init__(self, started_at: float) -> None:
        self.started_at = started_at
        self.count = 0


def _trio_or_monotonic() -> Clock:
    """Trio's clock inside a run (so mock clocks apply), the OS one outside."""
    return trio.current_time if trio.lowlevel.in_trio_run() else time.monotonic


class FixedWindowRateLimiter:
    """Allow ``limit`` requests per ``window_seconds`` per key.

    ``clock`` must be monotonic.  Without one, the limiter binds on its first
    check to ``trio.current_time`` when called inside ``trio.run`` and to
    ``time.monotonic`` otherwise, and keeps that choice (the two clocks have
    different origins, so mixing them would corrupt windows).
    """

    __slots__ = ("_clock", "_limit", "_max_keys", "_window_seconds", "_windows")

    def __init__(
        self,
        limit: int,
        window_seconds: float,
        max_keys: int,
        clock: Clock | None = None,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if not window_seconds > 0:
            raise ValueError(f"window_seconds must be positive, got {window_seconds}")
        if max_keys < 1:
            raise ValueError(f"max_keys must be at least 1, got {max_keys}")
        self._limit = limit
        self._window_seconds = float(window_seconds)
        self._max_keys = max_keys
        self._clock = clock
        self._windows: collections.OrderedDict[Hashable, _Window] = collections.OrderedDict()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def window_seconds(self) -> float:
        return self._window_seconds

    def tracked_keys(self) -> int:
        """How many keys currently hold a window (always <= ``max_keys``)."""
        return len(self._windows)

    def check(self, key: Hashable) -> RateDecision:
        """Count one request for ``key`` and say whether it may proceed.

        A refused request is not counted, so a client that keeps hammering
        past its limit does not push its own reset further away.
        """
        if self._clock is None:
            self._clock = _trio_or_monotonic()
        now = self._clock()
        self._drop_expired(now)
        window = self._windows.get(key)
        if window is None:
            if len(self._windows) >= self._max_keys:
                self._windows.popitem(last=False)
            window = _Window(now)
            self._windows[key] = window
        if window.count >= self._limit:
            retry_after = window.started_at + self._window_seconds - now
            # Clamped: float rounding can push the sum a hair past the window.
            retry_after = min(max(retry_after, 0.0), self._window_seconds)
            return RateDecision(allowed=False, remaining=0, retry_after=retry_after)
        window.count += 1
        return RateDecision(allowed=True, remaining=self._limit - window.count, retry_after=0.0)

    def _drop_expired(self, now: float) -> None:
        # Expired windows sit at the front; each key is removed at most once
        # per insertion, which keeps this amortised O(1).
        windows = self._windows
        horizon = now - self._window_seconds
        while windows:
            oldest = next(iter(windows.values()))
            if oldest.started_at > horizon:
                return
            windows.popitem(last=False)
