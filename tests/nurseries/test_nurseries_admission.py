"""Behaviour of the admission gate: capacity, FIFO queue, refusal, drain, leaks."""

from __future__ import annotations

import dataclasses
import functools
import gc
import itertools
import os
import random
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import ParamSpec

import pytest
import trio
import trio.testing

from nurseries import AdmissionGate, AdmissionRefused, Draining, Overloaded


async def hold_slot(
    gate: AdmissionGate, release: trio.Event, admitted: list[str], tag: str
) -> None:
    async with gate.slot():
        admitted.append(tag)
        await release.wait()


# The tests run on trio's autojump clock, so when every task is blocked this
# many virtual seconds pass at once: a lost wake-up fails the test quickly
# instead of hanging the run.
DEADLOCK_GUARD = 1e10


P = ParamSpec("P")


def fails_if_stuck(test: Callable[P, Awaitable[None]]) -> Callable[P, Awaitable[None]]:
    @functools.wraps(test)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        with trio.fail_after(DEADLOCK_GUARD):
            await test(*args, **kwargs)

    return guarded


def assert_idle(gate: AdmissionGate) -> None:
    stats = gate.stats()
    assert (stats.active, stats.queued) == (0, 0), stats


# -- configuration --------------------------------------------------------------------


@pytest.mark.parametrize(("max_active", "max_queued"), [(0, 1), (-1, 0), (1, -1)])
def test_rejects_nonsensical_limits(max_active: int, max_queued: int) -> None:
    with pytest.raises(ValueError):
        AdmissionGate(max_active, max_queued)


def test_stats_snapshot_is_frozen() -> None:
    stats = AdmissionGate(1, 1).stats()
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.active = 5  # type: ignore[misc]


def test_refusals_carry_http_status() -> None:
    assert Overloaded.http_status == 429
    assert Draining.http_status == 503
    assert issubclass(Overloaded, AdmissionRefused)
    assert issubclass(Draining, AdmissionRefused)


# -- admitting, queueing, refusing -----------------------------------------------------


@fails_if_stuck
async def test_admits_up_to_max_active_without_waiting(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=2, max_queued=0)
    release = trio.Event()
    admitted: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, admitted, "a")
        nursery.start_soon(hold_slot, gate, release, admitted, "b")
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(admitted) == ["a", "b"]
        stats = gate.stats()
        assert (stats.active, stats.queued, stats.admitted_total, stats.peak_active) == (2, 0, 2, 2)
        release.set()
    assert_idle(gate)
    assert gate.stats().peak_active == 2


@fails_if_stuck
async def test_full_queue_refuses_at_once_with_overloaded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=1)
    release = trio.Event()
    admitted: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, admitted, "holder")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(hold_slot, gate, release, admitted, "queued")
        await trio.testing.wait_all_tasks_blocked()
        assert gate.stats().queued == 1
        # Nothing will free a slot, so only an immediate refusal meets the deadline.
        with trio.fail_after(1), pytest.raises(Overloaded):
            async with gate.slot():
                pytest.fail("admitted past a full queue")
        assert gate.stats().refused_overloaded == 1
        release.set()
    assert admitted == ["holder", "queued"]
    assert_idle(gate)


@fails_if_stuck
async def test_zero_queue_refuses_as_soon_as_slots_are_busy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)
    release = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, [], "holder")
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(Overloaded):
            async with gate.slot():
                pass
        release.set()
    async with gate.slot():
        assert gate.stats().active == 1


@fails_if_stuck
async def test_waiters_are_admitted_in_arrival_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=2, max_queued=10)
    holders_release = [trio.Event(), trio.Event()]
    waiter_release = [trio.Event() for _ in range(6)]
    admitted: list[str] = []
    async with trio.open_nursery() as nursery:
        for index, event in enumerate(holders_release):
            nursery.start_soon(hold_slot, gate, event, admitted, f"holder{index}")
        await trio.testing.wait_all_tasks_blocked()
        for index, event in enumerate(waiter_release):
            nursery.start_soon(hold_slot, gate, event, admitted, f"w{index}")
            await trio.testing.wait_all_tasks_blocked()  # fixes the arrival order
        assert gate.stats().queued == 6
        # Free one slot at a time; each must go to the oldest waiter.
        to_release = [*holders_release, *waiter_release]
        for step, event in enumerate(to_release):
            event.set()
            await trio.testing.wait_all_tasks_blocked()
            expected_waiters = min(step + 1, len(waiter_release))
            assert admitted[2:] == [f"w{i}" for i in range(expected_waiters)]
    assert_idle(gate)


@fails_if_stuck
async def test_fast_path_spawns_no_tasks(autojump_clock: trio.testing.MockClock) -> None:
    spawned = 0

    class CountSpawns(trio.abc.Instrument):
        def task_spawned(self, task: trio.lowlevel.Task) -> None:
            nonlocal spawned
            spawned += 1

    gate = AdmissionGate(max_active=4, max_queued=4)
    instrument = CountSpawns()
    trio.lowlevel.add_instrument(instrument)
    try:
        for _ in range(1000):
            async with gate.slot():
                pass
    finally:
        trio.lowlevel.remove_instrument(instrument)
    assert spawned == 0
    assert gate.stats().admitted_total == 1000
    assert_idle(gate)


# -- every exit path releases ----------------------------------------------------------


@fails_if_stuck
async def test_exception_in_body_releases_and_propagates(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)
    with pytest.raises(KeyError):
        async with gate.slot():
            raise KeyError("boom")
    assert_idle(gate)
    async with gate.slot():  # the slot really is free again
        pass


@fails_if_stuck
async def test_already_cancelled_request_is_not_admitted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)
    with trio.CancelScope() as scope:
        scope.cancel()
        async with gate.slot():
            pytest.fail("a cancelled request ran")
    assert gate.stats().admitted_total == 0
    assert_idle(gate)


@fails_if_stuck
async def test_cancelled_while_holding_releases(autojump_clock: trio.testing.MockClock) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)
    with trio.move_on_after(5) as scope:
        async with gate.slot():
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert_idle(gate)


@fails_if_stuck
async def test_cancelled_while_queued_leaves_queue_and_gets_no_slot(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=3)
    release = trio.Event()
    admitted: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, admitted, "holder")
        await trio.testing.wait_all_tasks_blocked()
        waiter_scopes = {}
        for tag in ("a", "b", "c"):
            waiter_scopes[tag] = trio.CancelScope()

            async def waiter(tag: str = tag) -> None:
                with waiter_scopes[tag]:
                    await hold_slot(gate, release, admitted, tag)

            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
        waiter_scopes["b"].cancel()  # leaves from the middle of the queue
        stats = gate.stats()
        assert (stats.queued, stats.cancelled_while_queued) == (2, 1)
        release.set()
    assert admitted == ["holder", "a", "c"]
    assert_idle(gate)


@fails_if_stuck
async def test_cancelling_the_only_waiter_does_not_strand_the_slot(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=1)
    release = trio.Event()
    admitted: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, admitted, "holder")
        await trio.testing.wait_all_tasks_blocked()
        with trio.move_on_after(1):
            async with gate.slot():
                pytest.fail("admitted while the slot was held")
        release.set()
    assert_idle(gate)
    async with gate.slot():
        pass
    assert gate.stats().admitted_total == 2


@pytest.mark.parametrize("cancel_first", [True, False])
@fails_if_stuck
async def test_release_and_waiter_cancel_in_the_same_tick(
    cancel_first: bool, autojump_clock: trio.testing.MockClock
) -> None:
    # Both orders of "holder releases" and "waiter is cancelled" happening
    # without a checkpoint in between must end with no slot held.
    gate = AdmissionGate(max_active=1, max_queued=1)
    waiter_scope = trio.CancelScope()
    waiter_entered: list[bool] = []

    async def waiter() -> None:
        with waiter_scope:
            async with gate.slot():
                waiter_entered.append(True)
                await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        holder = gate.slot()
        await holder.__aenter__()
        nursery.start_soon(waiter)
        await trio.testing.wait_all_tasks_blocked()
        assert gate.stats().queued == 1
        if cancel_first:
            waiter_scope.cancel()
            await holder.__aexit__(None, None, None)
            assert gate.stats().active == 0
        else:
            await holder.__aexit__(None, None, None)
            waiter_scope.cancel()
            # The slot was already handed over: the waiter owns it until its
            # cancellation unwinds the body.
            assert gate.stats().active == 1
    assert waiter_entered == ([] if cancel_first else [True])
    assert_idle(gate)


# -- draining ------------------------------------------------------------------------


@fails_if_stuck
async def test_drain_refuses_newcomers_and_queued_waiters_then_waits_for_active(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=2)
    release = trio.Event()
    admitted: list[str] = []
    refused: list[type[BaseException]] = []

    async def waiter(tag: str) -> None:
        try:
            await hold_slot(gate, release, admitted, tag)
        except AdmissionRefused as exc:
            refused.append(type(exc))

    drained: list[bool] = []

    async def drainer() -> None:
        drained.append(await gate.drain(timeout=None))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, admitted, "holder")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(waiter, "q1")
        nursery.start_soon(waiter, "q2")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(drainer)
        await trio.testing.wait_all_tasks_blocked()
        assert gate.draining
        assert refused == [Draining, Draining]
        assert gate.stats().queued == 0
        with pytest.raises(Draining):
            async with gate.slot():
                pass
        assert drained == []  # the holder is still working
        release.set()
    assert drained == [True]
    assert admitted == ["holder"]
    stats = gate.stats()
    assert (stats.refused_draining, stats.refused_overloaded) == (3, 0)
    assert_idle(gate)


@fails_if_stuck
async def test_drain_times_out_while_work_is_stuck(autojump_clock: trio.testing.MockClock) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)
    release = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_slot, gate, release, [], "stuck")
        await trio.testing.wait_all_tasks_blocked()
        before = trio.current_time()
        assert await gate.drain(timeout=2.5) is False
        assert trio.current_time() - before == pytest.approx(2.5)
        assert gate.stats().active == 1
        release.set()
    assert await gate.drain(timeout=0) is True


@fails_if_stuck
async def test_drain_of_idle_gate_returns_at_once(autojump_clock: trio.testing.MockClock) -> None:
    gate = AdmissionGate(max_active=1, max_queued=0)
    with trio.fail_after(1):
        assert await gate.drain(timeout=None) is True


# -- per-request nursery with a client that goes away -----------------------------------


async def serve_request(
    gate: AdmissionGate, client_gone: trio.Event, progress: list[str], name: str
) -> None:
    """The shape the HTTP gateway uses: the request owns a nursery whose scope
    is cancelled when the client disconnects."""
    async with trio.open_nursery() as request_nursery:

        async def watch_disconnect() -> None:
            await client_gone.wait()
            request_nursery.cancel_scope.cancel()

        request_nursery.start_soon(watch_disconnect)
        async with gate.slot():
            progress.append(f"{name} working")
            await trio.sleep(10)
            progress.append(f"{name} done")
        request_nursery.cancel_scope.cancel()


@pytest.mark.parametrize("phase", ["queued", "active"])
@fails_if_stuck
async def test_client_disconnect_frees_capacity(
    phase: str, autojump_clock: trio.testing.MockClock
) -> None:
    gate = AdmissionGate(max_active=1, max_queued=1)
    holder_gone, victim_gone = trio.Event(), trio.Event()
    progress: list[str] = []
    async with trio.open_nursery() as nursery:
        if phase == "queued":
            nursery.start_soon(serve_request, gate, holder_gone, progress, "holder")
            await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(serve_request, gate, victim_gone, progress, "victim")
        await trio.testing.wait_all_tasks_blocked()
        expected_before = (1, 1) if phase == "queued" else (1, 0)
        assert (gate.stats().active, gate.stats().queued) == expected_before
        victim_gone.set()
        await trio.testing.wait_all_tasks_blocked()
        expected_after = (1, 0) if phase == "queued" else (0, 0)
        assert (gate.stats().active, gate.stats().queued) == expected_after
        # A new request still gets through once capacity is back.
        nursery.start_soon(serve_request, gate, trio.Event(), progress, "next")
    assert "victim done" not in progress
    assert "next done" in progress
    assert_idle(gate)


# -- storms ----------------------------------------------------------------------------


async def run_storm(
    gate: AdmissionGate,
    requests: int,
    seed: int,
    *,
    hold_forever: bool = False,
    patient: float = 1e9,
) -> dict[str, int]:
    """Many requests arriving, holding and disconnecting at random moments.

    Returns how each request ended, as seen from the request's side.
    """
    rng = random.Random(seed)
    outcomes = {"entered": 0, "overloaded": 0, "cancelled_outside": 0}
    max_active = gate.max_active
    over_capacity: list[int] = []

    async def request(arrive_after: float, give_up_after: float, work: float) -> None:
        ending = "cancelled_outside"
        with trio.move_on_after(give_up_after):
            await trio.sleep(arrive_after)
            try:
                async with gate.slot():
                    ending = "entered"
                    active = gate.stats().active
                    if active > max_active:
                        over_capacity.append(active)
                    if hold_forever:
                        await trio.sleep_forever()
                    await trio.sleep(work)
            except Overloaded:
                ending = "overloaded"
        outcomes[ending] += 1

    async with trio.open_nursery() as nursery:
        for _ in range(requests):
            nursery.start_soon(
                request,
                rng.uniform(0, 5),
                rng.choice([0.0, rng.uniform(0, 8), patient]),
                rng.expovariate(10.0),
            )
    assert over_capacity == []
    return outcomes


@pytest.mark.parametrize("seed", [1, 2, 3])
@fails_if_stuck
async def test_storm_with_random_cancellation_leaks_nothing(
    seed: int, autojump_clock: trio.testing.MockClock
) -> None:
    gate = AdmissionGate(max_active=8, max_queued=32)
    outcomes = await run_storm(gate, 3000, seed)
    stats = gate.stats()
    assert_idle(gate)
    assert stats.peak_active == 8
    assert stats.admitted_total == outcomes["entered"]
    assert stats.refused_overloaded == outcomes["overloaded"]
    assert stats.cancelled_while_queued <= outcomes["cancelled_outside"]
    assert sum(outcomes.values()) - outcomes["entered"] > 0  # the storm did cancel/refuse
    assert stats.cancelled_while_queued > 0


@fails_if_stuck
async def test_ten_thousand_cancelled_requests_hold_no_slots(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = AdmissionGate(max_active=64, max_queued=16)
    outcomes = await run_storm(gate, 10_000, seed=7, hold_forever=True)
    stats = gate.stats()
    assert_idle(gate)
    assert stats.admitted_total == outcomes["entered"] > 0
    assert stats.refused_overloaded == outcomes["overloaded"] > 0
    assert stats.cancelled_while_queued > 0
    # Every request that was neither refused nor admitted was cancelled.
    assert sum(outcomes.values()) == 10_000
    async with gate.slot():
        assert gate.stats().active == 1


@pytest.mark.parametrize("seed", [11, 12])
@fails_if_stuck
async def test_fifo_holds_under_a_cancellation_storm(
    seed: int, autojump_clock: trio.testing.MockClock
) -> None:
    # With one slot, admissions are serialised, so the order in which tasks
    # enter the body must be the order in which they asked, minus those that
    # left or were refused.
    gate = AdmissionGate(max_active=1, max_queued=50)
    rng = random.Random(seed)
    ticket = itertools.count()
    admitted_tickets: list[int] = []

    async def request(arrive_after: float, give_up_after: float) -> None:
        with trio.move_on_after(give_up_after):
            await trio.sleep(arrive_after)
            my_ticket = next(ticket)
            try:
                async with gate.slot():
                    admitted_tickets.append(my_ticket)
                    await trio.sleep(0.01)
            except Overloaded:
                pass

    async with trio.open_nursery() as nursery:
        for _ in range(1500):
            nursery.start_soon(request, rng.uniform(0, 5), rng.uniform(0, 6))
    assert_idle(gate)
    assert len(admitted_tickets) > 100
    assert gate.stats().cancelled_while_queued > 20
    assert admitted_tickets == sorted(admitted_tickets)


@fails_if_stuck
async def test_memory_does_not_grow_across_storms(autojump_clock: trio.testing.MockClock) -> None:
    async def settled_storm(seed: int) -> None:
        await run_storm(gate, 1000, seed=seed, patient=20.0)
        # trio drops timer entries of finished scopes lazily, once their
        # deadline passes; let them pass so only our own retention remains.
        await trio.sleep(30)
        gc.collect()

    def held_by_gate_code() -> int:
        # Only memory allocated by the gate's own code counts: trio, pytest
        # and the interpreter keep caches of their own whose size drifts
        # between runs and says nothing about leaks here.
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, f"*{os.sep}nurseries{os.sep}*")]
        )
        return sum(stat.size for stat in snapshot.statistics("filename"))

    gate = AdmissionGate(max_active=16, max_queued=16)
    await settled_storm(21)  # warm caches before measuring
    tracemalloc.start()
    try:
        await settled_storm(22)
        baseline = held_by_gate_code()
        for seed in (23, 24, 25):
            await settled_storm(seed)
        after = held_by_gate_code()
    finally:
        tracemalloc.stop()
    assert_idle(gate)
    # 3000 more requests went through; retaining even one small object per
    # admitted request would add tens of KiB.
    assert after - baseline < 4 * 1024, (baseline, after)
