"""Admission control: at most N requests active, at most M waiting, the rest refused.

A server that accepts every request under load only turns overload into
timeouts for everyone.  The gate keeps a fixed number of requests running,
lets a short FIFO queue absorb bursts, and refuses the excess at once so the
client hears "try later" (429) instead of waiting blind.  During shutdown it
refuses with a distinct reason (503) so clients can tell "busy" from "going
away".

Correctness rules the implementation keeps, because a leaked slot is a
permanent loss of capacity:

* A slot is released on every exit path of ``async with gate.slot()``:
  normal exit, exception, or cancellation.
* A waiter cancelled while queued is removed from the queue at once (trio
  calls our abort function synchronously) and never receives a slot.
* A released slot is handed directly to the oldest waiter while the releasing
  task still runs.  Once handed over, trio guarantees the waiter resumes with
  it even if the waiter is cancelled a moment later; the cancellation then
  surfaces inside the ``async with`` body and ``__aexit__`` gives the slot
  back.  So a slot is never "in flight" where nobody owns it.

The fast path (slot free) spawns nothing and allocates only the small context
object; acquire and release are O(1), including removal of a cancelled waiter
from the middle of the queue.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import ClassVar, NoReturn

import outcome
import trio

__all__ = [
    "AdmissionGate",
    "AdmissionRefused",
    "AdmissionStats",
    "Draining",
    "Overloaded",
]


class AdmissionRefused(Exception):
    """The gate did not admit the request; ``http_status`` says how to answer."""

    http_status: ClassVar[int] = 503
    reason: ClassVar[str] = "refused"


class Overloaded(AdmissionRefused):
    """Every active slot is busy and the waiting queue is full."""

    http_status: ClassVar[int] = 429
    reason: ClassVar[str] = "overloaded"


class Draining(AdmissionRefused):
    """The gate is shutting down and admits nobody any more."""

    http_status: ClassVar[int] = 503
    reason: ClassVar[str] = "draining"


@dataclass(frozen=True, slots=True)
class AdmissionStats:
    """A point-in-time snapshot of the gate's occupancy and lifetime counters."""

    active: int
    queued: int
    admitted_total: int
    refused_overloaded: int
    refused_draining: int
    peak_active: int
    cancelled_while_queued: int


class AdmissionGate:
    """Bounded concurrency with a bounded FIFO queue in front of it.

    Use ``async with gate.slot():`` around the work of one request.  Construct
    the gate inside or outside ``trio.run``; it only touches trio when a task
    actually waits.
    """

    __slots__ = (
        "_active",
        "_admitted_total",
        "_cancelled_while_queued",
        "_draining",
        "_idle",
        "_max_active",
        "_max_queued",
        "_peak_active",
        "_refused_draining",
        "_refused_overloaded",
        "_waiters",
    )

    def __init__(self, max_active: int, max_queued: int) -> None:
        if max_active < 1:
            raise ValueError(f"max_active must be at least 1, got {max_active}")
        if max_queued < 0:
            raise ValueError(f"max_queued must not be negative, got {max_queued}")
        self._max_active = max_active
        self._max_queued = max_queued
        self._active = 0
        # OrderedDict rather than deque: FIFO pop from the front *and* O(1)
        # removal of a cancelled waiter from anywhere in the queue.
        self._waiters: collections.OrderedDict[trio.lowlevel.Task, None] = collections.OrderedDict()
        self._draining = False
        self._idle: trio.Event | None = None
        self._admitted_total = 0
        self._refused_overloaded = 0
        self._refused_draining = 0
        self._peak_active = 0
        self._cancelled_while_queued = 0

    @property
    def max_active(self) -> int:
        return self._max_active

    @property
    def max_queued(self) -> int:
        return self._max_queued

    @property
    def draining(self) -> bool:
        """True once :meth:`drain` has been called; the gate never reopens."""
        return self._draining

    def slot(self) -> _Slot:
        """An async context manager holding one active slot for its body.

        Raises :class:`Overloaded` or :class:`Draining` on entry when the
        request is not admitted.
        """
        return _Slot(self)

    def stats(self) -> AdmissionStats:
        return AdmissionStats(
            active=self._active,
            queued=len(self._waiters),
            admitted_total=self._admitted_total,
            refused_overloaded=self._refused_overloaded,
            refused_draining=self._refused_draining,
            peak_active=self._peak_active,
            cancelled_while_queued=self._cancelled_while_queued,
        )

    async def drain(self, timeout: float | None) -> bool:
        """Stop admitting and wait for active requests to finish.

        Queued waiters are woken with :class:`Draining`.  Returns True when no
        request is active any more, False when ``timeout`` seconds passed
        first (``None`` waits without limit).  Safe to call more than once.
        """
        self._draining = True
        while self._waiters:
            task, _ = self._waiters.popitem(last=False)
            self._refused_draining += 1
            trio.lowlevel.reschedule(task, outcome.Error(Draining("server is shutting down")))
        if self._active == 0:
            await trio.lowlevel.checkpoint()
            return True
        if self._idle is None:
            self._idle = trio.Event()
        idle = self._idle
        if timeout is None:
            await idle.wait()
        else:
            with trio.move_on_after(timeout):
                await idle.wait()
        return self._active == 0

    async def _acquire(self) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._draining:
            self._refused_draining += 1
            raise Draining("server is shutting down")
        if self._active < self._max_active:
            # A free slot implies an empty queue (release hands slots to
            # waiters directly), so taking it here cannot jump the queue.
            # No schedule point either: a request reaches the gate right after
            # reading its body (which yielded), and a trip through the
            # scheduler here cost a small request a tenth of its gateway time.
            self._grant()
            return
        if len(self._waiters) >= self._max_queued:
            self._refused_overloaded += 1
            raise Overloaded(f"{self._max_active} requests active and {self._max_queued} queued")
        task = trio.lowlevel.current_task()
        self._waiters[task] = None

        def abort(_: Callable[[], NoReturn]) -> trio.lowlevel.Abort:
            # Runs synchronously when the waiter is cancelled before anyone
            # rescheduled it, so the entry is still ours to remove.
            del self._waiters[task]
            self._cancelled_while_queued += 1
            return trio.lowlevel.Abort.SUCCEEDED

        # On success the releasing task already counted this slot as ours.
        await trio.lowlevel.wait_task_rescheduled(abort)

    def _grant(self) -> None:
        self._active += 1
        self._admitted_total += 1
        if self._active > self._peak_active:
            self._peak_active = self._active

    def _release(self) -> None:
        if self._waiters:
            # The slot passes straight to the oldest waiter: ``active`` stays
            # the same and no newcomer can take the slot in between.
            task, _ = self._waiters.popitem(last=False)
            self._admitted_total += 1
            trio.lowlevel.reschedule(task, outcome.Value(None))
            return
        self._active -= 1
        if self._active == 0 and self._idle is not None:
            self._idle.set()


class _Slot:
    """The context object returned by :meth:`AdmissionGate.slot`."""

    __slots__ = ("_gate",)

    def __init__(self, gate: AdmissionGate) -> None:
        self._gate = gate

    async def __aenter__(self) -> None:
        await self._gate._acquire()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._gate._release()
