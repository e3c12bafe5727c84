"""Team mode over HTTP: N gateways on one PostgreSQL against one embedded gateway.

The HTTP legs of ``bench_team.py --gateways 1,2,4``. For each N a store of
its own (the throwaway server, or the given URL's database) is seeded once
through one team host (``update --store``: the mcp-docs corpus and an empty
``inbox`` collection), then N ``gno-trio serve --store`` processes start with
data directories of their own on fixed ports (``PORT_RANGES["bench_team"]``)
and each is timed until it has caught up (its answers to a sample of the
varied queries equal the embedded gateway's). Beside them runs one embedded
``gno-trio serve`` (no store) over the same corpus with the same settings.

Legs, each loaded by ``_http_load.py`` closed loop, one client whose
connections are spread round-robin over the N gateways (as a balancer would
spread them), in rounds that rotate the embedded peer and the team:

* ``gno_search`` (varied one-word and phrase queries), ``--connections``;
* ``gno_query`` (the same queries through the general retrieval entry);
* ``gno_capture`` (a new note each, ``create_with_suffix``) under the one
  write lease, ``--write-connections``: writes/s and p99.

Per leg: req/s and server CPU per request as median (min-max) over the
rounds, the median p50/p99, failures; the server tree of a team leg is its
gateways plus the PostgreSQL server's processes (captures ship there). Each
round prints the machine's load (:class:`_common.Window`).

With two gateways or more: a 2025-era session made on gateway A and first
used on B (beside a call on A), and a ``notifications/cancelled`` sent to B
for a capture waiting for the lease on A (a writer holds it), timed from the
cancel until A answers.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _common import (
    BUSY,
    DEFAULT_ROUNDS,
    Window,
    free_port,
    percentile,
    process_tree,
    rotations,
    spread,
)
from bench_http import (
    SEARCH_CORPUS,
    Fleet,
    Server,
    build_search_index,
    cores,
    failures,
    gno_env,
    modern_headers,
    run_load,
    tool_call,
)

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from gno_trio.engine.team.url import TeamStore

LEGACY = "2025-11-25"
_SERVE = ("serve", "--json", "--no-embed", "--no-watch", "--mcp-enable-write")
_CATCH_UP_TIMEOUT = 600.0
# A capture queued behind the lease waits this long before LOCKED (the write leg
# queues many; the cancel leg must outlast the cancel).
_LEASE_WAIT_MS = "60000"


def _cli(root: Path, *argv: str, store: str | None = None) -> None:
    env = {**os.environ, **gno_env(root)}
    if store is not None:
        env["GNO_STORE"] = store
    subprocess.run(
        [sys.executable, "-m", "gno_trio", *argv],
        env=env,
        check=True,
        capture_output=True,
        timeout=900,
    )


def embedded_host(root: Path, queries: int) -> list[dict[str, Any]]:
    """The embedded peer's index (mcp-docs plus an empty inbox); the varied queries."""
    varied = build_search_index(root, queries)
    (root / "inbox").mkdir()
    _cli(root, "collection", "add", str(root / "inbox"), "--name", "inbox")
    return varied


def seed_team(root: Path, store: str) -> float:
    """Index the corpus once through one team host; seconds it took (sync plus shipping)."""
    _cli(root, "init", str(SEARCH_CORPUS), "--name", "mcp")
    (root / "inbox").mkdir()
    _cli(root, "collection", "add", str(root / "inbox"), "--name", "inbox")
    with open(root / "config" / "index.yml", "a", encoding="utf-8") as config:
        config.write("gateway:\n  limits:\n    maxRequestsPerMinute: 1000000000\n")
    started = time.perf_counter()
    _cli(root, "update", store=store)
    return time.perf_counter() - started


def postgres_pids(store: str) -> list[int]:
    """The PostgreSQL server's postmaster (its tree holds every backend); empty when the
    server is not on this machine or its data directory is not readable."""
    import psycopg

    with contextlib.suppress(Exception), psycopg.connect(store, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
        if row is not None:
            first = (Path(row[0]) / "postmaster.pid").read_text().split()[0]
            return [int(first)]
    return []


# -- talking to gateways ------------------------------------------------------------------


def post(
    port: int, body: str, headers: dict[str, str], timeout: float = 120
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/mcp", body=body.encode(), headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def structured(port: int, tool: str, arguments: dict[str, Any]) -> Any:
    status, _, body = post(port, tool_call(tool, arguments), modern_headers(tool))
    if status != 200:
        return None
    return json.loads(body).get("result", {}).get("structuredContent")


def caught_up(port: int, expected: list[tuple[dict[str, Any], Any]]) -> float:
    """Seconds until the gateway on ``port`` answers every sampled query as expected."""
    started = time.perf_counter()
    while time.perf_counter() - started < _CATCH_UP_TIMEOUT:
        if all(structured(port, "gno_search", args) == want for args, want in expected):
            return time.perf_counter() - started
        time.sleep(0.2)
    raise RuntimeError(f"the gateway on port {port} did not catch up in {_CATCH_UP_TIMEOUT} s")


class Peer:
    """One side of the comparison: its gateways' ports and the processes to charge."""

    def __init__(self, name: str, servers: list[Server], extra_pids: Sequence[int] = ()) -> None:
        self.name = name
        self.servers = servers
        self.extra_pids = list(extra_pids)

    def job(self, tool: str, bodies: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
        roots = [p.pid for server in self.servers for p in server.processes] + self.extra_pids
        ports = [server.port for server in self.servers]
        texts = [tool_call(tool, arguments) for arguments in bodies]
        return {
            "port": ports[0],
            "ports": ports,
            "server_pids": process_tree(roots),
            "body": texts[0],
            "bodies": texts,
            "headers": modern_headers(tool),
            **settings,
        }


def start_gateway(fleet: Fleet, name: str, root: Path, store: str | None) -> Server:
    env = {**gno_env(root), "GNO_WRITE_LOCK_WAIT_MS": _LEASE_WAIT_MS}
    argv = [sys.executable, "-m", "gno_trio", *_SERVE, "--port", str(free_port("bench_team"))]
    if store is not None:
        argv += ["--store", store]
        (root / "config").mkdir(parents=True, exist_ok=True)  # filled from the store's row
    process, info = fleet.start(name, argv, env)
    if "port" not in info:
        raise RuntimeError(f"{name} did not start: {info}")
    return Server(name, [process], int(info["port"]))


# -- the legs ---------------------------------------------------------------------------------


def capture_bodies(tag: str, count: int = 4000) -> list[dict[str, Any]]:
    return [
        {
            "collection": "inbox",
            "title": f"Bench {tag} {index}",
            "content": f"okapi {index} quagga {tag}\n",
            "collisionPolicy": "create_with_suffix",
        }
        for index in range(count)
    ]


def measure(
    peers: list[Peer],
    legs: dict[str, tuple[str, Callable[[str], list[dict[str, Any]]], int]],
    options: Any,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every leg on every peer, rounds rotating the peers; the load client's results."""
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    timeout = options.duration + 180
    for round_index, order in enumerate(rotations(peers, options.rounds)):
        window = Window()
        for peer in order:
            for leg, (tool, bodies_for, connections) in legs.items():
                tag = f"{peer.name}-r{round_index}"
                settings = {"mode": "closed", "connections": connections}
                if leg != "capture":  # a write leg needs no warm-up and would add notes
                    run_load(peer.job(tool, bodies_for(tag), **settings, duration=1.0), timeout)
                result = run_load(
                    peer.job(tool, bodies_for(tag), **settings, duration=options.duration),
                    timeout,
                )
                results.setdefault((peer.name, leg), []).append(result)
        names = " ".join(peer.name for peer in order)
        print(f"    round {round_index + 1} ({names}): {window.close().line()}")
    return results


def print_table(results: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    print(
        f"    {'leg':<22} {'req/s median (min-max)':<24} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'srv CPU us/req':>20} {'cli cores':>9} {'failed':>6}"
    )
    for (peer, leg), runs in results.items():
        print(
            f"    {leg + ', ' + peer:<22} {spread([r['rps'] for r in runs], 0):<24} "
            f"{statistics.median(r['latency_ms'].get('p50', 0) for r in runs):>8.1f} "
            f"{statistics.median(r['latency_ms'].get('p99', 0) for r in runs):>8.1f} "
            f"{spread([r['server_cpu_us_per_req'] or 0 for r in runs], 0):>20} "
            f"{statistics.median(cores(r, 'client_cpu_s') for r in runs):>9.2f} "
            f"{sum(failures(r) for r in runs):>6} {_bad_statuses(runs)}"
        )


def _bad_statuses(runs: list[dict[str, Any]]) -> str:
    """The non-2xx answers of a leg by status, e.g. ``429x12`` (empty when none)."""
    counts: dict[str, int] = {}
    for run in runs:
        for code, stats in run["by_status"].items():
            if int(code) >= 300:
                counts[code] = counts.get(code, 0) + int(stats["n"])
    return " ".join(f"{code}x{n}" for code, n in sorted(counts.items()))


# -- sessions and cancels across gateways ------------------------------------------------


def _legacy(session: str | None = None) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = LEGACY
    return headers


def _rpc(method: str, params: Any = None, request_id: int | str | None = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def open_session(on: int, ready_on: int) -> str:
    initialize = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "bench-team", "version": "1"},
    }
    status, headers, body = post(on, _rpc("initialize", initialize), _legacy())
    if status != 200:
        raise RuntimeError(f"initialize answered {status}: {body[:200]!r}")
    session = headers["mcp-session-id"]
    status, _, _ = post(ready_on, _rpc("notifications/initialized", None, None), _legacy(session))
    if status != 202:
        raise RuntimeError(f"notifications/initialized answered {status}")
    return session


def close_session(port: int, session: str) -> None:
    """DELETE the session (a caller may hold only a few at a time)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("DELETE", "/mcp", headers=_legacy(session))
        connection.getresponse().read()
    finally:
        connection.close()


def _ms(samples: list[float]) -> str:
    values = [s * 1000 for s in samples]
    return f"p50 {percentile(values, 50):7.2f} ms   p99 {percentile(values, 99):7.2f} ms"


def cross_host(a: int, b: int, store: TeamStore, seed: Path, runs: int) -> None:
    """A session made on A used on B; a cancel sent to B ending a call waiting on A."""
    on_a: list[float] = []
    on_b: list[float] = []
    for _ in range(runs):
        session = open_session(a, ready_on=a)
        for port, samples in ((a, on_a), (b, on_b)):
            started = time.perf_counter()
            status, _, _ = post(port, _rpc("ping"), _legacy(session))
            samples.append(time.perf_counter() - started)
            assert status == 200, status
        close_session(b, session)
    print(f"    {'ping with a session made on A, sent to A':<52} {_ms(on_a)}  ({runs} runs)")
    print(f"    {'same session, its first request on B':<52} {_ms(on_b)}  ({runs} runs)")

    from tests.support.team_hosts import hold_lease

    waits: list[float] = []
    holder = hold_lease(store, seed)
    try:
        for index in range(runs):
            session = open_session(a, ready_on=a)
            call = _rpc("tools/call", {"name": "gno_capture", "arguments": {
                "collection": "inbox", "title": f"Never {index}", "content": "cancelled\n"}},
                f"w{index}")  # fmt: skip
            done = threading.Event()
            answered = [0.0]

            def waiting(call: str = call, session: str = session, answered: list[float] = answered,
                        done: threading.Event = done) -> None:  # fmt: skip
                with contextlib.suppress(OSError, http.client.HTTPException):
                    post(a, call, _legacy(session), timeout=90)
                answered[0] = time.perf_counter()
                done.set()

            thread = threading.Thread(target=waiting, daemon=True)
            thread.start()
            time.sleep(0.5)  # the call now waits for the lease on A
            cancel = _rpc("notifications/cancelled", {"requestId": f"w{index}"}, None)
            started = time.perf_counter()
            status, _, _ = post(b, cancel, _legacy(session))
            if not done.wait(60) or status != 202:
                raise RuntimeError(f"the cancel sent to B did not end the call on A ({status})")
            waits.append(answered[0] - started)
            thread.join()
            close_session(a, session)
        if holder.poll() is not None:
            raise RuntimeError("the lease holder exited: the calls were not ended by the cancels")
    finally:
        holder.kill()
        holder.wait()
    print(f"    {'cancel sent to B -> the call on A answered':<52} {_ms(waits)}  ({runs} runs)")


# -- the whole run --------------------------------------------------------------------------


def http_legs(
    given: TeamStore | None,
    throwaway: Callable[[], AbstractContextManager[TeamStore]],
    counts: list[int],
    options: Any,
) -> int:
    """Run every HTTP leg for each gateway count in ``counts``; prints, returns 0."""
    whole = Window()
    with tempfile.TemporaryDirectory(prefix="gno-bench-team-http-") as scratch:
        root = Path(scratch)
        fleet = Fleet(root)
        try:
            varied = embedded_host(root / "embedded", options.queries)
            searches = [{"query": v["query"], "limit": 5} for v in varied]
            legs: dict[str, tuple[str, Callable[[str], list[dict[str, Any]]], int]] = {
                "search": ("gno_search", lambda _: searches, options.connections),
                "query": ("gno_query", lambda _: searches, options.connections),
                "capture": ("gno_capture", capture_bodies, options.write_connections),
            }
            if options.no_query:
                del legs["query"]
            embedded = Peer("embedded", [start_gateway(fleet, "embedded", root / "embedded", None)])
            sample = searches[:: max(1, len(searches) // 10)]
            expected = [(args, structured(embedded.servers[0].port, "gno_search", args))
                        for args in sample]  # fmt: skip
            print(
                f"HTTP legs: mcp-docs corpus, {len(searches)} varied queries, closed loop "
                f"c={options.connections} (captures c={options.write_connections}), "
                f"{options.rounds} rounds x {options.duration:g} s"
            )
            for count in counts:
                with contextlib.ExitStack() as stack:
                    store = given if given is not None else stack.enter_context(throwaway())
                    run_count(fleet, root / f"team{count}", store, count, embedded, expected,
                              legs, options)  # fmt: skip
        finally:
            fleet.stop_all()
    print(f"  whole run: {whole.close().line()}")
    return 0


def run_count(
    fleet: Fleet,
    root: Path,
    store: TeamStore,
    count: int,
    embedded: Peer,
    expected: list[tuple[dict[str, Any], Any]],
    legs: dict[str, tuple[str, Callable[[str], list[dict[str, Any]]], int]],
    options: Any,
) -> None:
    print(f"  {count} gateway(s) on one PostgreSQL ({store.shown}) vs one embedded gateway:")
    seeded = seed_team(root / "seed", store.url)
    print(f"    seeding host indexed and shipped the corpus in {seeded:.2f} s")
    servers: list[Server] = []
    for index in range(count):
        started = time.perf_counter()
        servers.append(start_gateway(fleet, f"team{count}-{index}", root / f"g{index}", store.url))
        took = time.perf_counter() - started + caught_up(servers[-1].port, expected)
        print(f"    gateway {index + 1}: started and caught up from 0 in {took:.2f} s")
    team = Peer(f"team x{count}", servers, postgres_pids(store.url))
    if not team.extra_pids:
        print("    (PostgreSQL is not on this machine: its CPU is not counted)")
    try:
        window = Window()
        results = measure([embedded, team], legs, options)
        busy = window.close().busy
        print_table(results)
        for leg in legs:
            ours = statistics.median(r["rps"] for r in results[(team.name, leg)])
            theirs = statistics.median(r["rps"] for r in results[(embedded.name, leg)])
            ratio = BUSY if busy else f"{ours / max(1e-9, theirs):.2f}x"
            print(f"    {leg}: team x{count} / embedded req/s (medians) {ratio}")
        if count >= 2:
            cross_host(servers[0].port, servers[1].port, store, root / "seed", options.cross_runs)
    finally:
        for server in servers:
            for process in server.processes:
                process.terminate()
        for server in servers:
            for process in server.processes:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(15)


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """``bench_team.py``'s options for these legs."""
    parser.add_argument("--gateways", help="HTTP legs for these gateway counts, e.g. 1,2,4")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured run")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--connections", type=int, default=32, help="search/query clients")
    parser.add_argument("--write-connections", type=int, default=8, help="capture clients")
    parser.add_argument("--queries", type=int, default=1000, help="varied queries")
    parser.add_argument("--no-query", action="store_true", help="leave out the gno_query leg")
    parser.add_argument("--cross-runs", type=int, default=20, help="session/cancel runs")
