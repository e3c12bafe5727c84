"""Supervision of long-lived background tasks.

A server keeps tasks that outlive any one request: streams held open for a
client, a reaper that closes idle sessions, background jobs.  In a bare trio
nursery one crashing task cancels all of its siblings, which is right for the
parts of a single request but wrong for independent background work.  The
supervisor wraps each task so that a crash is logged (logger
``nurseries.supervisor``) and the rest carry on, gives each task a handle to
cancel or await it on its own, and stops everything when its ``async with``
block ends. Signal-driven graceful drain lives in :mod:`nurseries.drain`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVarTuple, Unpack

import trio

__all__ = [
    "CrashPolicy",
    "Supervisor",
    "TaskHandle",
    "open_supervisor",
]

logger = logging.getLogger("nurseries.supervisor")

CrashPolicy = Literal["log", "raise"]
"""``"log"``: a crash is logged and siblings keep running.
``"raise"``: a crash propagates and tears the whole supervisor down."""

_CRASH_POLICIES: frozenset[str] = frozenset({"log", "raise"})

PosArgsT = TypeVarTuple("PosArgsT")


class TaskHandle:
    """One supervised task: cancel it, ask whether it finished, or wait for it."""

    __slots__ = ("_done", "_exception", "_finished", "_scope", "_started_value", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._scope = trio.CancelScope()
        self._finished = trio.Event()
        self._done = False
        self._exception: BaseException | None = None
        self._started_value: object = None

    def __repr__(self) -> str:
        state = "done" if self._done else "running"
        return f"<TaskHandle {self.name!r} {state}>"

    @property
    def done(self) -> bool:
        """True once the task has returned, crashed or been cancelled."""
        return self._done

    @property
    def cancel_called(self) -> bool:
        """True if :meth:`cancel` was called (the task may still be cleaning up)."""
        return self._scope.cancel_called

    @property
    def exception(self) -> BaseException | None:
        """The exception the task crashed with, if it crashed."""
        return self._exception

    @property
    def started_value(self) -> object:
        """The value a task launched by :meth:`Supervisor.start` passed to ``started()``."""
        return self._started_value

    def cancel(self) -> None:
        """Cancel this task only; safe to call at any time, including after it ended."""
        self._scope.cancel()

    async def wait(self) -> None:
        """Return once the task has finished, however it finished."""
        await self._finished.wait()

    def _finish(self) -> None:
        self._done = True
        self._finished.set()


class _StartedRelay:
    """Passed to a task as ``task_status``: forwards ``started()`` and records it."""

    __slots__ = ("_handle", "_inner", "has_started")

    def __init__(self, inner: trio.TaskStatus[Any], handle: TaskHandle) -> None:
        self._inner = inner
        self._handle = handle
        self.has_started = False

    def started(self, value: object = None) -> None:
        self._inner.started(value)
        self._handle._started_value = value
        self.has_started = True


class Supervisor:
    """Runs background tasks in a nursery it does not let one crash destroy.

    Usually obtained from :func:`open_supervisor`; construct it directly to
    supervise tasks in a nursery you already own.
    """

    def __init__(self, nursery: trio.Nursery, crash_policy: CrashPolicy = "log") -> None:
        if crash_policy not in _CRASH_POLICIES:
            raise ValueError(f"unknown crash_policy {crash_policy!r}")
        self._nursery = nursery
        self._crash_policy: CrashPolicy = crash_policy
        # A dict used as an ordered set: names() reports tasks in start order.
        self._handles: dict[TaskHandle, None] = {}
        self._closed = False
        self._all_finished: trio.Event | None = None

    @property
    def closed(self) -> bool:
        """True once shutdown began; new tasks are refused from then on."""
        return self._closed

    def active_count(self) -> int:
        """Tasks started and not yet finished."""
        return len(self._handles)

    def names(self) -> tuple[str, ...]:
        """Names of unfinished tasks, in the order they were started."""
        return tuple(handle.name for handle in self._handles)

    def start_soon(
        self,
        fn: Callable[[Unpack[PosArgsT]], Awaitable[object]],
        *args: *PosArgsT,
        name: str | None = None,
    ) -> TaskHandle:
        """Schedule ``fn(*args)`` and return its handle at once."""
        handle = self._register(fn, name)
        try:
            self._nursery.start_soon(self._run, handle, fn, args, name=handle.name)
        except BaseException:
            self._forget(handle)
            raise
        return handle

    async def start(
        self,
        fn: Callable[..., Awaitable[object]],
        *args: object,
        name: str | None = None,
    ) -> TaskHandle:
        """Run ``fn(*args, task_status=...)`` until it calls ``started()``.

        Like ``trio.Nursery.start``: an exception raised before ``started()``
        propagates to the caller instead of being logged.  The value passed
        to ``started()`` is available as ``handle.started_value``.
        """
        handle = self._register(fn, name)
        try:
            await self._nursery.start(self._run_started, handle, fn, args, name=handle.name)
        except BaseException:
            # If start() fails, the task has already ended (and forgotten
            # itself) unless it never got to run at all.
            if not handle.done:
                self._forget(handle)
            raise
        return handle

    def every(
        self,
        interval: float,
        fn: Callable[[], object],
        *,
        name: str | None = None,
    ) -> TaskHandle:
        """Call ``fn()`` (sync or async) every ``interval`` seconds until cancelled.

        The first call happens one interval after this one.  A run that
        fails is logged and the schedule continues (under the ``"log"``
        policy).  A run that overruns skips the ticks it missed instead of
        firing them in a burst.
        """
        if not interval > 0:
            raise ValueError(f"interval must be positive, got {interval}")
        return self.start_soon(self._repeat, interval, fn, name=name or _describe(fn))

    async def shutdown(self, grace: float) -> bool:
        """Cancel every task and wait up to ``grace`` seconds for them to finish.

        Returns True when all tasks finished in time.  Tasks still running
        (in shielded clean-up) are waited for when the supervisor's block
        exits.
        """
        self._closed = True
        for handle in list(self._handles):
            handle.cancel()
        if self._handles:
            if self._all_finished is None:
                self._all_finished = trio.Event()
            with trio.move_on_after(grace):
                await self._all_finished.wait()
        else:
            await trio.lowlevel.checkpoint()
        return not self._handles

    def _close(self) -> None:
        self._closed = True
        self._nursery.cancel_scope.cancel()

    def _register(self, fn: Callable[..., object], name: str | None) -> TaskHandle:
        if self._closed:
            raise RuntimeError("supervisor is shut down; no new tasks")
        handle = TaskHandle(name or _describe(fn))
        self._handles[handle] = None
        return handle

    def _forget(self, handle: TaskHandle) -> None:
        del self._handles[handle]
        handle._finish()
        if not self._handles and self._all_finished is not None:
            self._all_finished.set()

    async def _run(
        self,
        handle: TaskHandle,
        fn: Callable[..., Awaitable[object]],
        args: tuple[object, ...],
    ) -> None:
        try:
            with handle._scope:
                await fn(*args)
        except BaseException as exc:
            self._contain(handle, exc)
        finally:
            self._forget(handle)

    async def _run_started(
        self,
        handle: TaskHandle,
        fn: Callable[..., Awaitable[object]],
        args: tuple[object, ...],
        task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        relay = _StartedRelay(task_status, handle)
        try:
            with handle._scope:
                await fn(*args, task_status=relay)
        except BaseException as exc:
            if not relay.has_started:
                # Still running under start(): its caller gets the error.
                if isinstance(exc, Exception):
                    handle._exception = exc
                raise
            self._contain(handle, exc)
        finally:
            self._forget(handle)

    def _contain(self, handle: TaskHandle, exc: BaseException) -> None:
        """Keep a task's crash away from its siblings; let control flow through.

        Only ``Exception`` counts as a crash.  Cancellation, KeyboardInterrupt
        and the like must keep propagating, including when they arrive in one
        exception group together with a crash (a task whose own nursery failed
        while the supervisor was being cancelled).
        """
        crash: BaseException | None
        passthrough: BaseException | None
        if isinstance(exc, BaseExceptionGroup):
            crash, passthrough = exc.split(Exception)
        elif isinstance(exc, Exception):
            crash, passthrough = exc, None
        else:
            crash, passthrough = None, exc
        if crash is not None:
            handle._exception = crash
            if self._crash_policy == "raise":
                raise exc
            logger.error("supervised task %r crashed", handle.name, exc_info=crash)
        if passthrough is exc:
            raise exc
        if passthrough is not None:
            raise passthrough from None

    async def _repeat(self, interval: float, fn: Callable[[], object]) -> None:
        deadline = trio.current_time() + interval
        while True:
            await trio.sleep_until(deadline)
            try:
                result = fn()
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                if self._crash_policy == "raise":
                    raise
                logger.error(
                    "periodic task %s failed; keeping schedule", _describe(fn), exc_info=exc
                )
            now = trio.current_time()
            deadline += interval
            if deadline <= now:
                deadline = now + interval


@asynccontextmanager
async def open_supervisor(crash_policy: CrashPolicy = "log") -> AsyncIterator[Supervisor]:
    """Own a nursery of supervised tasks; leaving the block cancels those still running.

    As with any trio nursery, an exception leaving the block arrives wrapped
    in an ``ExceptionGroup``.
    """
    async with trio.open_nursery() as nursery:
        supervisor = Supervisor(nursery, crash_policy)
        try:
            yield supervisor
        finally:
            supervisor._close()


def _describe(fn: Callable[..., object]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
