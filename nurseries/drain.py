"""Signal-driven graceful drain: the first SIGINT or SIGTERM becomes an event, then an orderly stop.

The server stops accepting, lets its admission gate drain within a grace
period and shuts its supervisor down (:func:`drain_and_shutdown`); a second
signal gets the default behaviour again, so an operator can still force a
stop. Kept apart from the supervisor because it is about the process's
lifetime, not about any one task.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import trio

from nurseries.supervisor import Supervisor

__all__ = ["DrainOutcome", "GracefulDrain", "SupportsDrain", "drain_and_shutdown"]


class GracefulDrain:
    """The "please stop" flag of a server, raised by a signal or by code.

    Run :meth:`watch_signals` in a nursery (``await nursery.start(...)``) and
    wait on :attr:`event`.  The watcher returns after the first signal and
    gives the signals back to their default handlers, so a second Ctrl-C
    interrupts a drain that hangs.
    """

    __slots__ = ("_event", "signal_number")

    def __init__(self) -> None:
        self._event = trio.Event()
        self.signal_number: int | None = None

    @property
    def event(self) -> trio.Event:
        """Set once a stop was requested."""
        return self._event

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def trigger(self, signal_number: int | None = None) -> None:
        """Request a stop; the first request wins, later ones change nothing."""
        if self._event.is_set():
            return
        self.signal_number = signal_number
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()

    async def watch_signals(
        self,
        signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM),
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Trigger on the first of ``signals``; report started once they are caught."""
        with trio.open_signal_receiver(*signals) as received:
            task_status.started()
            async for signal_number in received:
                self.trigger(signal_number)
                return


class SupportsDrain(Protocol):
    """Anything that can stop admitting work and wait for it to finish."""

    async def drain(self, timeout: float | None) -> bool: ...


@dataclass(frozen=True, slots=True)
class DrainOutcome:
    """Whether each stage of a shutdown finished within its time budget."""

    requests_drained: bool
    tasks_stopped: bool


async def drain_and_shutdown(
    gate: SupportsDrain,
    supervisor: Supervisor,
    *,
    drain_timeout: float | None,
    grace: float,
) -> DrainOutcome:
    """Let in-flight requests finish (refusing new ones), then stop background tasks.

    Requests go first because some of them may be reading from background
    tasks (a stream fed by a job, say).
    """
    drained = await gate.drain(drain_timeout)
    stopped = await supervisor.shutdown(grace)
    return DrainOutcome(requests_drained=drained, tasks_stopped=stopped)
