"""Cost of the per-request concurrency pieces, and a cancellation storm.

Prints, without asserting on time:

* the cost of one uncontended ``async with gate.slot()`` next to a bare trio
  checkpoint and a ``trio.Semaphore`` (the floor and the obvious alternative);
* the cost of one slot handoff when tasks queue for a single slot;
* the cost of one ``FixedWindowRateLimiter.check`` with a full key table;
* a cancellation storm on trio's virtual clock: requests arrive, queue,
  are refused or give up at random moments; then the gate's counters and the
  memory left behind.

The script exits non-zero only if the storm leaves a slot or queue entry
behind, which would be a correctness bug, not a slow machine.

    python3 bench/bench_admission.py [--iterations 200000] [--storm 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio
import trio.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nurseries import AdmissionGate, FixedWindowRateLimiter, Overloaded


def report(label: str, seconds: float, operations: int) -> None:
    print(f"  {label:<44} {seconds / operations * 1e9:9.0f} ns/op  ({operations:,} ops)")


async def time_loop(body: Callable[[], Awaitable[None]], iterations: int) -> float:
    start = time.perf_counter()
    for _ in range(iterations):
        await body()
    return time.perf_counter() - start


async def uncontended(iterations: int) -> None:
    gate = AdmissionGate(max_active=64, max_queued=16)
    semaphore = trio.Semaphore(64)

    async def bare_checkpoint() -> None:
        await trio.lowlevel.checkpoint()

    async def gate_slot() -> None:
        async with gate.slot():
            pass

    async def trio_semaphore() -> None:
        async with semaphore:
            pass

    print("uncontended acquire + release (slot free):")
    for label, body in [
        ("bare trio checkpoint (floor)", bare_checkpoint),
        ("AdmissionGate.slot()", gate_slot),
        ("trio.Semaphore (no queue bound, no drain)", trio_semaphore),
    ]:
        await time_loop(body, iterations // 10)  # warm up
        report(label, await time_loop(body, iterations), iterations)


async def contended(iterations: int, workers: int) -> None:
    gate = AdmissionGate(max_active=1, max_queued=workers)
    per_worker = max(1, iterations // workers)

    async def worker() -> None:
        for _ in range(per_worker):
            async with gate.slot():
                await trio.lowlevel.checkpoint()

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(workers):
            nursery.start_soon(worker)
    elapsed = time.perf_counter() - start
    print(f"contended, {workers} tasks sharing 1 slot (every release is a handoff):")
    report("acquire + handoff + checkpoint", elapsed, per_worker * workers)


def time_checks(peers: int, iterations: int) -> float:
    clock = [0.0]
    limiter = FixedWindowRateLimiter(120, 60.0, 4096, clock=lambda: clock[0])
    keys = [f"10.0.{i // 256}.{i % 256}" for i in range(peers)]
    start = time.perf_counter()
    for index in range(iterations):
        clock[0] += 0.0001
        limiter.check(keys[index % peers])
    return time.perf_counter() - start


def rate_limiter(iterations: int) -> None:
    print("rate limiter (120 per 60 s, 4096-key table):")
    report("check, 16 peers (typical)", time_checks(16, iterations), iterations)
    report("check, 8192 peers (every call evicts)", time_checks(8192, iterations), iterations)


async def run_storm(gate: AdmissionGate, requests: int, rng: random.Random) -> dict[str, int]:
    """One storm; returns how the requests ended, as the requests saw it."""
    endings = {"completed": 0, "cancelled in body": 0, "refused (429)": 0, "gave up outside": 0}

    async def request(arrive_after: float, give_up_after: float, work: float) -> None:
        ending = "gave up outside"
        with trio.move_on_after(give_up_after):
            await trio.sleep(arrive_after)
            try:
                async with gate.slot():
                    ending = "cancelled in body"
                    await trio.sleep(work)
                    ending = "completed"
            except Overloaded:
                ending = "refused (429)"
        endings[ending] += 1

    async with trio.open_nursery() as nursery:
        for _ in range(requests):
            nursery.start_soon(
                request,
                rng.uniform(0.0, 10.0),
                rng.choice([0.0, rng.uniform(0.0, 12.0), 30.0]),
                rng.expovariate(5.0),
            )
    await trio.sleep(60.0)  # let trio retire the timers of finished scopes
    gc.collect()
    return endings


async def storm(requests: int, seed: int) -> bool:
    gate = AdmissionGate(max_active=64, max_queued=16)
    rng = random.Random(seed)

    wall_start = time.perf_counter()
    endings = await run_storm(gate, requests, rng)
    wall = time.perf_counter() - wall_start
    stats = gate.stats()
    print(f"cancellation storm, {requests:,} requests, 64 active / 16 queued (virtual clock):")
    for ending, count in endings.items():
        print(f"  {ending:<22} {count:>8,}")
    print(
        f"  gate afterwards: active={stats.active} queued={stats.queued} "
        f"admitted={stats.admitted_total:,} refused_overloaded={stats.refused_overloaded:,} "
        f"cancelled_while_queued={stats.cancelled_while_queued:,} peak_active={stats.peak_active}"
    )
    print(f"  wall time: {wall:.2f} s")

    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    await run_storm(gate, requests, rng)
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    final = gate.stats()
    print(f"  memory retained by a second storm (tracemalloc): {after - before:+,} bytes")
    print(f"  gate after the second storm: active={final.active} queued={final.queued}")
    return (stats.active, stats.queued, final.active, final.queued) == (0, 0, 0, 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--storm", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    print(f"python {sys.version.split()[0]}, trio {trio.__version__}")
    trio.run(uncontended, args.iterations)
    trio.run(contended, args.iterations // 4, args.workers)
    rate_limiter(args.iterations)
    clean = trio.run(
        storm, args.storm, args.seed, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    if not clean:
        print("LEAK: the storm left slots or queue entries behind", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
