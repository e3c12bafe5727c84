"""Behaviour of the supervisor, periodic jobs and the signal-driven drain."""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import ParamSpec

import pytest
import trio
import trio.testing

from nurseries import (
    AdmissionGate,
    DrainOutcome,
    GracefulDrain,
    Supervisor,
    TaskHandle,
    drain_and_shutdown,
    open_supervisor,
)

SUPERVISOR_LOGGER = "nurseries.supervisor"

# Virtual seconds on the autojump clock (real ones where a test uses real
# time): a task that never stops fails its test instead of spinning forever.
STUCK_AFTER = 1000.0

P = ParamSpec("P")


def fails_if_stuck(test: Callable[P, Awaitable[None]]) -> Callable[P, Awaitable[None]]:
    @functools.wraps(test)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        with trio.fail_after(STUCK_AFTER):
            await test(*args, **kwargs)

    return guarded


async def crash_after(seconds: float, message: str) -> None:
    await trio.sleep(seconds)
    raise RuntimeError(message)


async def tick_forever(ticks: list[float], interval: float) -> None:
    while True:
        await trio.sleep(interval)
        ticks.append(trio.current_time())


def crash_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == SUPERVISOR_LOGGER and r.levelno >= logging.ERROR]


# -- starting, tracking, finishing ---------------------------------------------------


@fails_if_stuck
async def test_tasks_run_and_are_tracked_by_name(autojump_clock: trio.testing.MockClock) -> None:
    results: list[str] = []

    async def job(tag: str, seconds: float) -> None:
        await trio.sleep(seconds)
        results.append(tag)

    async with open_supervisor() as sup:
        short = sup.start_soon(job, "short", 1.0, name="short-job")
        long = sup.start_soon(job, "long", 5.0, name="long-job")
        unnamed = sup.start_soon(job, "unnamed", 2.0)
        assert sup.active_count() == 3
        assert sup.names() == ("short-job", "long-job", unnamed.name)
        assert "job" in unnamed.name
        await short.wait()
        assert short.done and not long.done
        assert sup.names() == ("long-job", unnamed.name)
        await long.wait()
        assert sup.active_count() == 0
    assert results == ["short", "unnamed", "long"]
    assert short.exception is None


@fails_if_stuck
async def test_crash_is_logged_and_siblings_keep_running(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    ticks: list[float] = []
    async with open_supervisor() as sup:
        ticker = sup.start_soon(tick_forever, ticks, 1.0, name="ticker")
        crasher = sup.start_soon(crash_after, 2.5, "disk on fire", name="crasher")
        await crasher.wait()
        await trio.sleep(3.0)
        assert not ticker.done
        assert sup.names() == ("ticker",)
        # The supervisor still takes new work after a crash.
        later = sup.start_soon(trio.sleep, 1.0, name="later")
        await later.wait()
        assert later.exception is None
    assert isinstance(crasher.exception, RuntimeError)
    assert len(ticks) >= 5
    [record] = crash_records(caplog)
    assert "crasher" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[1] is crasher.exception


@fails_if_stuck
async def test_raise_policy_tears_everything_down(autojump_clock: trio.testing.MockClock) -> None:
    cancelled: list[str] = []

    async def sibling() -> None:
        try:
            await trio.sleep_forever()
        finally:
            cancelled.append("sibling")

    with pytest.RaisesGroup(pytest.RaisesExc(RuntimeError, match="fatal")):
        async with open_supervisor(crash_policy="raise") as sup:
            sup.start_soon(sibling)
            sup.start_soon(crash_after, 1.0, "fatal")
            await trio.sleep_forever()
    assert cancelled == ["sibling"]


@fails_if_stuck
async def test_unknown_crash_policy_is_rejected() -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(ValueError):
            Supervisor(nursery, crash_policy="ignore")  # type: ignore[arg-type]


@fails_if_stuck
async def test_handle_cancels_only_its_own_task(autojump_clock: trio.testing.MockClock) -> None:
    ticks_a: list[float] = []
    ticks_b: list[float] = []
    async with open_supervisor() as sup:
        a = sup.start_soon(tick_forever, ticks_a, 1.0, name="a")
        b = sup.start_soon(tick_forever, ticks_b, 1.0, name="b")
        await trio.sleep(2.5)
        a.cancel()
        assert a.cancel_called
        await a.wait()
        assert a.done and a.exception is None
        await trio.sleep(2.0)
        assert not b.done
        assert sup.names() == ("b",)
        a.cancel()  # cancelling a finished task is harmless
    assert len(ticks_a) == 2
    assert len(ticks_b) == 4


@fails_if_stuck
async def test_cancel_before_the_task_runs_stops_it_at_its_first_checkpoint(
    autojump_clock: trio.testing.MockClock,
) -> None:
    reached: list[str] = []

    async def job() -> None:
        reached.append("started")
        await trio.sleep(1.0)
        reached.append("finished")

    async with open_supervisor() as sup:
        handle = sup.start_soon(job)
        handle.cancel()
        await handle.wait()
    assert "finished" not in reached


@fails_if_stuck
async def test_leaving_the_block_cancels_remaining_tasks(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cleaned_up: list[str] = []

    async def stream(name: str) -> None:
        try:
            await trio.sleep_forever()
        finally:
            cleaned_up.append(name)

    handles: list[TaskHandle] = []
    with trio.fail_after(1):
        async with open_supervisor() as sup:
            handles = [sup.start_soon(stream, f"s{i}", name=f"s{i}") for i in range(3)]
            await trio.sleep(0.5)
    assert sorted(cleaned_up) == ["s0", "s1", "s2"]
    assert all(h.done and h.exception is None for h in handles)
    with pytest.raises(RuntimeError):
        sup.start_soon(stream, "too-late")


@fails_if_stuck
async def test_a_crash_during_shutdown_is_contained_too(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    # The task's own nursery reports the crash together with the
    # cancellations of its other children; only the crash may be swallowed.
    async def fails_on_cleanup() -> None:
        try:
            await trio.sleep_forever()
        finally:
            raise RuntimeError("could not flush")

    async def job() -> None:
        async with trio.open_nursery() as inner:
            inner.start_soon(fails_on_cleanup)
            inner.start_soon(trio.sleep_forever)

    with trio.fail_after(5):
        async with open_supervisor() as sup:
            handle = sup.start_soon(job, name="job")
            await trio.sleep(1.0)
    assert isinstance(handle.exception, ExceptionGroup)
    assert handle.exception.subgroup(RuntimeError) is not None
    [record] = crash_records(caplog)
    assert "job" in record.getMessage()


@fails_if_stuck
async def test_refuses_work_when_its_nursery_is_closed() -> None:
    async with trio.open_nursery() as nursery:
        pass
    sup = Supervisor(nursery)
    with pytest.raises(RuntimeError):
        sup.start_soon(trio.sleep, 1.0)
    with pytest.raises(RuntimeError):
        await sup.start(trio.sleep, 1.0)
    assert sup.active_count() == 0


# -- start() -------------------------------------------------------------------------


@fails_if_stuck
async def test_start_returns_once_the_task_is_ready(autojump_clock: trio.testing.MockClock) -> None:
    async def listener(port: int, *, task_status: trio.TaskStatus[int]) -> None:
        await trio.sleep(1.0)  # binding takes a while
        task_status.started(port + 1)
        await trio.sleep_forever()

    async with open_supervisor() as sup:
        before = trio.current_time()
        handle = await sup.start(listener, 8000, name="listener")
        assert trio.current_time() - before == pytest.approx(1.0)
        assert handle.started_value == 8001
        assert sup.names() == ("listener",)
        handle.cancel()


@fails_if_stuck
async def test_start_failure_before_ready_goes_to_the_caller(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*, task_status: trio.TaskStatus[None]) -> None:
        raise OSError("address in use")

    async with open_supervisor() as sup:
        with pytest.raises(OSError, match="address in use"):
            await sup.start(broken, name="broken")
        assert sup.active_count() == 0
        ok = sup.start_soon(trio.sleep, 1.0)
        await ok.wait()
    assert crash_records(caplog) == []


@fails_if_stuck
async def test_start_failure_after_ready_is_logged(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def flaky(*, task_status: trio.TaskStatus[None]) -> None:
        task_status.started()
        await trio.sleep(1.0)
        raise ValueError("lost connection")

    async with open_supervisor() as sup:
        handle = await sup.start(flaky, name="flaky")
        await handle.wait()
        assert isinstance(handle.exception, ValueError)
    assert len(crash_records(caplog)) == 1


# -- shutdown ------------------------------------------------------------------------


@fails_if_stuck
async def test_shutdown_cancels_everything_within_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_supervisor() as sup:
        for index in range(5):
            sup.start_soon(trio.sleep_forever, name=f"stream-{index}")
        await trio.sleep(1.0)
        assert await sup.shutdown(grace=2.0) is True
        assert sup.active_count() == 0
        assert sup.closed
        with pytest.raises(RuntimeError):
            sup.start_soon(trio.sleep, 1.0)


@fails_if_stuck
async def test_shutdown_reports_tasks_that_outlive_the_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow_cleanup() -> None:
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await trio.sleep(10.0)

    async with open_supervisor() as sup:
        handle = sup.start_soon(slow_cleanup, name="slow")
        await trio.sleep(0.1)
        before = trio.current_time()
        assert await sup.shutdown(grace=2.0) is False
        assert trio.current_time() - before == pytest.approx(2.0)
        assert sup.names() == ("slow",)
    assert handle.done


@fails_if_stuck
async def test_shutdown_of_empty_supervisor_is_immediate() -> None:
    async with open_supervisor() as sup:
        with trio.fail_after(1):
            assert await sup.shutdown(grace=60.0) is True


# -- every() -------------------------------------------------------------------------


@fails_if_stuck
async def test_every_runs_sync_and_async_callables_on_schedule(
    autojump_clock: trio.testing.MockClock,
) -> None:
    sync_runs: list[float] = []
    async_runs: list[float] = []

    def reap() -> None:
        sync_runs.append(trio.current_time())

    async def reap_async() -> None:
        await trio.sleep(0.1)
        async_runs.append(trio.current_time())

    async with open_supervisor() as sup:
        start = trio.current_time()
        sup.every(10.0, reap, name="reaper")
        sup.every(10.0, reap_async)
        await trio.sleep(35.0)
        assert "reaper" in sup.names()
    assert [t - start for t in sync_runs] == pytest.approx([10.0, 20.0, 30.0])
    assert [t - start for t in async_runs] == pytest.approx([10.1, 20.1, 30.1])


@fails_if_stuck
async def test_every_survives_a_failing_run(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    runs: list[int] = []

    def sometimes_fails() -> None:
        runs.append(len(runs))
        if len(runs) == 2:
            raise LookupError("session vanished")

    async with open_supervisor() as sup:
        sup.every(1.0, sometimes_fails, name="reaper")
        await trio.sleep(4.5)
    assert runs == [0, 1, 2, 3]
    assert len(crash_records(caplog)) == 1


@fails_if_stuck
async def test_every_skips_ticks_missed_by_a_slow_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    started: list[float] = []

    async def slow() -> None:
        started.append(trio.current_time())
        await trio.sleep(2.5 if len(started) == 1 else 0.0)

    async with open_supervisor() as sup:
        start = trio.current_time()
        sup.every(1.0, slow)
        await trio.sleep(6.0)
    # First run at 1.0 overran until 3.5; the ticks at 2 and 3 are dropped,
    # not fired in a burst, and the next run is a full interval later.
    assert [t - start for t in started] == pytest.approx([1.0, 4.5, 5.5])


@fails_if_stuck
async def test_every_rejects_non_positive_interval() -> None:
    async with open_supervisor() as sup:
        with pytest.raises(ValueError):
            sup.every(0.0, lambda: None)


# -- graceful drain ------------------------------------------------------------------


@fails_if_stuck
async def test_drain_trigger_is_sticky_and_first_wins() -> None:
    drain = GracefulDrain()
    assert not drain.requested
    drain.trigger(signal.SIGTERM)
    drain.trigger(signal.SIGINT)
    assert drain.requested and drain.event.is_set()
    assert drain.signal_number == signal.SIGTERM
    with trio.fail_after(1):
        await drain.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signal delivery")
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
@fails_if_stuck
async def test_a_real_signal_requests_the_drain(signal_number: signal.Signals) -> None:
    drain = GracefulDrain()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(drain.watch_signals)
            os.kill(os.getpid(), signal_number)
            await drain.wait()
        # Leaving the nursery proves the watcher returned after one signal,
        # handing the signals back to their default handlers.
    assert drain.signal_number == signal_number


@fails_if_stuck
async def test_drain_and_shutdown_finishes_requests_before_stopping_tasks(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=2, max_queued=0)
    timeline: list[tuple[str, float]] = []

    async def request() -> None:
        async with gate.slot():
            await trio.sleep(3.0)
            timeline.append(("request done", trio.current_time()))

    async def background() -> None:
        try:
            await trio.sleep_forever()
        finally:
            timeline.append(("background stopped", trio.current_time()))

    drain = GracefulDrain()
    async with open_supervisor() as sup, trio.open_nursery() as requests:
        sup.start_soon(background)
        requests.start_soon(request)
        await trio.sleep(1.0)
        drain.trigger()
        await drain.wait()
        outcome = await drain_and_shutdown(gate, sup, drain_timeout=10.0, grace=5.0)
    assert outcome == DrainOutcome(requests_drained=True, tasks_stopped=True)
    assert [event for event, _ in timeline] == ["request done", "background stopped"]


@fails_if_stuck
async def test_drain_and_shutdown_reports_a_stuck_request(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)

    async def stuck_request() -> None:
        async with gate.slot():
            await trio.sleep_forever()

    async with open_supervisor() as sup, trio.open_nursery() as requests:
        requests.start_soon(stuck_request)
        await trio.sleep(0.1)
        outcome = await drain_and_shutdown(gate, sup, drain_timeout=2.0, grace=1.0)
        requests.cancel_scope.cancel()
    assert outcome == DrainOutcome(requests_drained=False, tasks_stopped=True)
