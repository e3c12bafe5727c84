"""Stand-ins for the ``time`` module in engine code that waits in a thread.

Engine code never runs under trio, so trio's ``MockClock`` cannot drive its
waits (a lease queue, a poll loop). A test swaps the module's ``time`` for a
:class:`SteppedClock`: every ``sleep`` advances ``monotonic`` at once and is
recorded, so a wait of seconds takes no time and its length is exact.
"""

from __future__ import annotations

import threading
import time


class SteppedClock:
    """``monotonic`` and ``sleep`` only; sleeping moves the clock forward instantly."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class QueueProbe:
    """Real time for a module's ``time``, telling when a waiter first pauses in its queue.

    Engine code queueing for the write lease polls it, sleeping between tries;
    the first of those sleeps means the waiter is in the queue. A test waits
    on :attr:`queued` instead of guessing how long getting there takes.
    """

    def __init__(self) -> None:
        self.queued = threading.Event()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        self.queued.set()
        time.sleep(seconds)
