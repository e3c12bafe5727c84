"""The one object a server process builds at startup and passes down.

It owns the opened engine and the identity of this server instance, and it
is the only bridge from async code to the synchronous engine: every engine
call runs in a worker thread on the pooled connection the engine binds to
it, and a cancelled request interrupts that call's running statement
instead of letting it run to completion. The runtime never touches the
connection itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Final, NoReturn, Protocol, TypeVar

import trio

from gno_trio.collector import collect_young
from gno_trio.engine import Engine, JobManager
from gno_trio.engine.vocabulary import JOB_RETENTION_COUNT
from nurseries.stagger import StaggeredLimiter

if TYPE_CHECKING:
    import outcome

T = TypeVar("T")


class _Waiting(Protocol):
    @property
    def tasks_waiting(self) -> int: ...


class ThreadLimiter(Protocol):
    """What bounds the engine's worker threads (:class:`trio.CapacityLimiter` or
    :class:`nurseries.stagger.StaggeredLimiter`)."""

    @property
    def borrowed_tokens(self) -> int: ...

    @property
    def total_tokens(self) -> int | float: ...

    def statistics(self) -> _Waiting: ...

    def acquire_on_behalf_of_nowait(self, borrower: object) -> None: ...

    async def acquire_on_behalf_of(self, borrower: object) -> None: ...

    def release_on_behalf_of(self, borrower: object) -> None: ...


@trio.lowlevel.enable_ki_protection
async def _in_worker_thread(fn: Callable[[], T], limiter: ThreadLimiter) -> T:
    """``fn()`` in one of trio's cached worker threads, holding a ``limiter`` token meanwhile.

    What ``trio.to_thread.run_sync(fn, abandon_on_cancel=True, limiter=limiter)``
    does, less what engine calls never use and pay for on every call: the
    thread gets a fresh, empty ``contextvars`` context instead of a copy of the
    task's, cannot call back into trio (``trio.from_thread``), and keeps its
    OS thread name (trio renames the thread before and after each call, which
    hands the GIL back and forth while the event loop waits for the result). A
    free token is also taken without the scheduler round
    ``CapacityLimiter.acquire_on_behalf_of`` makes; when none is free the call
    waits in the limiter's queue, in arrival order.

    Cancellation returns at once and abandons the thread; its token is given
    back only when ``fn`` has really returned, so the limiter bounds the
    threads actually running.
    """
    await trio.lowlevel.checkpoint_if_cancelled()
    borrower = object()
    try:
        limiter.acquire_on_behalf_of_nowait(borrower)
    except trio.WouldBlock:
        await limiter.acquire_on_behalf_of(borrower)
    token = trio.lowlevel.current_trio_token()
    waiting: list[trio.lowlevel.Task | None] = [trio.lowlevel.current_task()]

    def report(result: outcome.Outcome[T]) -> None:  # in the event loop's thread
        limiter.release_on_behalf_of(borrower)
        task = waiting[0]
        if task is not None:
            trio.lowlevel.reschedule(task, result)

    def deliver(result: outcome.Outcome[T]) -> None:  # in the worker thread
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(report, result)

    try:
        trio.lowlevel.start_thread_soon(lambda: contextvars.Context().run(fn), deliver)
    except BaseException:
        limiter.release_on_behalf_of(borrower)
        raise

    def abandon(raise_cancel: Callable[[], NoReturn]) -> trio.lowlevel.Abort:
        waiting[0] = None  # the result, when it comes, is dropped
        return trio.lowlevel.Abort.SUCCEEDED

    result: T = await trio.lowlevel.wait_task_rescheduled(abandon)
    return result


class Lifecycle:
    """This process's resident status, as reported by whatever serves it.

    A process with no listener (stdio, the CLI) has no report attached and
    surfaces describe it as standalone; the HTTP gateway attaches its
    ``resident-status`` snapshot once it listens, so ``gno_status`` over HTTP
    tells the truth about the gateway it came through.
    """

    __slots__ = ("_counters", "_report")

    def __init__(self) -> None:
        self._report: Callable[[], dict[str, Any]] | None = None
        self._counters: Callable[[], dict[str, Any]] | None = None

    def attach(self, report: Callable[[], dict[str, Any]]) -> None:
        self._report = report

    def snapshot(self) -> dict[str, Any] | None:
        return None if self._report is None else self._report()

    def count_with(self, counters: Callable[[], dict[str, Any]]) -> None:
        self._counters = counters

    def counters(self) -> dict[str, Any]:
        """This process's own ``models`` and ``jobs`` blocks (empty: nothing counts them).

        The listener reports its transport; the model loads and the jobs are
        the serving process's, so every status surface takes them from here.
        """
        return {} if self._counters is None else self._counters()


ENGINE_THREADS: Final = max(2, min(8, os.cpu_count() or 2))
"""Engine calls running at once in worker threads, per process (each holds a pooled
connection): one per core. More only contend for the GIL: on two cores, 32 concurrent
searches do 0.4x the searches per second of two, at 2.4x the CPU each."""
REST_AFTER_S: Final = 1.0
"""Seconds without an engine call after which a serving process gives back what the calls
left resident (:meth:`Runtime.rest_when_idle`)."""
ENGINE_STAGGER: Final = 0.010
"""Seconds every running engine call must have run before another starts beside it.
Quick calls (a search on the held index: 1-2 ms) then run one at a time instead of
contending for the GIL (at 32 connections on two cores, the gateway spent about 5 %
less CPU per search and served about 6 % more), while a slow one (a sync, a long
filtered search) holds the others back by at most this long."""


@dataclass(eq=False)
class Runtime:
    engine: Engine
    write_enabled: bool = False
    tool_profile: str = "full"
    instance_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    limiter: ThreadLimiter = field(
        default_factory=lambda: StaggeredLimiter(ENGINE_THREADS, ENGINE_STAGGER)
    )
    # Background jobs (gno_add_collection, gno_sync); close() it before the engine.
    jobs: JobManager = field(default_factory=JobManager)
    lifecycle: Lifecycle = field(default_factory=Lifecycle)

    _running: int = field(default=0, init=False, repr=False)
    _finished: int = field(default=0, init=False, repr=False)
    _ran: trio.Event = field(default_factory=trio.Event, init=False, repr=False)

    def __post_init__(self) -> None:
        self.lifecycle.count_with(self.process_counters)

    async def rest_when_idle(self) -> None:
        """Background task of a serving process: after each burst of engine calls, once
        none ran for :data:`REST_AFTER_S`, the engine gives back the memory they left
        resident (:meth:`~gno_trio.engine.Engine.rest`).

        A server mostly waits; what it holds while waiting is what it costs the
        machine, multiplied by every client session's own ``gno-trio mcp``. It
        sleeps on an event while nothing runs, so an idle server never wakes.
        """
        while True:
            await self._ran.wait()
            self._ran = trio.Event()
            while True:
                seen = self._finished
                await trio.sleep(REST_AFTER_S)
                if self._running == 0 and self._finished == seen:
                    break
            await trio.to_thread.run_sync(self._rest)

    def _rest(self) -> None:
        # Young cycles first: what they free is then among the pages the engine gives back.
        collect_young()
        self.engine.rest()

    def process_counters(self) -> dict[str, Any]:
        """``resident-status``'s ``models`` and ``jobs`` blocks: this process's own counts."""
        listing = self.jobs.listing(JOB_RETENTION_COUNT)
        return {
            "models": self.engine.vectors.model_loads(),
            "jobs": {
                "active": len(listing["active"]),
                "recent": len(listing["recent"]),
                "failed": sum(1 for job in listing["recent"] if job["status"] == "failed"),
            },
        }

    async def run(self, work: Callable[[], T]) -> T:
        """Run ``work()`` (engine calls) in a worker thread; cancellation interrupts SQLite.

        The engine binds one pooled connection to the whole call, taken inside
        the thread (:meth:`Engine.call_slot`), so at most ``limiter``
        connections are in use however many calls are queued. On cancellation
        the call returns at once: the thread is abandoned after its statement
        is interrupted and gives its connection back to the pool itself once
        the statement has unwound, so a connection is never shared by two
        threads. A call cancelled before its thread started never takes a
        connection.
        """
        slot = self.engine.call_slot()
        self._running += 1
        try:
            return await _in_worker_thread(partial(slot.run, work), self.limiter)
        except BaseException:
            # Cancelled, or failed before the thread could run: no statement may
            # keep running for a caller that is gone.
            slot.cancel()
            raise
        finally:
            self._running -= 1
            self._finished += 1
            self._ran.set()
