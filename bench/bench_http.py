"""Streamable HTTP gateway: throughput against a floor and a peer, overload, cancellation storm.

Prints numbers; never asserts on time. Everything listens on 127.0.0.1, every
load loop is bounded by time or count, and every server started here is
stopped here (by PID).

    python bench/bench_http.py [--duration 4] [--rounds 3] [--connections 32]
                               [--storm 10000] [--parts 1,2,3] ...

1. Throughput of modern (2026-07-28) ``tools/call`` requests, closed loop over
   ``--connections`` keep-alive connections, over ``--rounds`` rounds (5) with
   fresh servers each round, the cases in an order rotated per round (ratios
   are taken within a round, printed as median (min-max) across rounds). The
   server's CPU per request (its whole process tree) is printed beside req/s,
   and each comparison names what it is compared with: the floors (``bare``
   for echo, ``bare-search`` for ``gno_search``; target CPU/req <= 1.05x) and
   the SDK peers. No verdict is printed when other work held more than half a
   core: "machine busy: ratios unreliable" instead. Servers listen on the
   fixed range of ``PORT_RANGES["bench_http"]`` in ``_common.py``:

   * ``bare``: an ASGI callable on hypercorn's trio worker doing the same JSON
     work (read, ``json`` decode, same-shaped JSON answer): the stack's floor;
   * ``sdk``: the official ``mcp`` SDK (``MCPServer`` + ``echo`` tool,
     stateless, JSON responses, its default uvicorn stack): the peer;
   * ``gateway``: our gateway (``serve_gateway``, the code behind
     ``gno-trio serve``) with an identical ``echo`` tool;
   * ``search``: ``gno-trio serve`` itself, the real ``gno_search`` over an
     index of the mcp-docs fixture (344 pages), with ``--queries`` varied
     one-word queries that each find something (every connection cycles
     through them from its own offset);
   * ``sdk-search``: the official SDK (same launcher as ``sdk``) with one
     ``gno_search`` tool making the identical engine call over the same
     index and returning the identical payload; both answers are compared
     for every query before the run (same content, same structured result,
     response sizes printed);
   * ``search-x2``: ``gno-trio serve --workers 2`` over the same index: the
     product's own multi-process mode (two workers sharing the port);
   * ``bare-search``: the floor of ``search``: bare ASGI on hypercorn's trio
     worker making the identical engine call in a worker thread and
     returning the identical payload, with no validation, envelope,
     admission or registry. SDK ÷ bare-search is the highest ratio any
     gateway on this stack reaches with today's engine call.

   Before the rounds every case answers 20 sequential requests on one
   keep-alive connection; if even the fastest takes over 30 ms, every answer
   stalls on Nagle plus delayed ACK (a server not setting ``TCP_NODELAY``)
   and the benchmark stops rather than print a flattering ratio.

2. Overload against the default limits (64 active + 16 queued): how many
   requests were shed with 429, and the admitted requests' p99 against the
   same tool's unloaded p99 (client-side, from send to answer).

   * 2a, as the issue puts it: a ``sleep`` tool of ``--tool-ms``, unloaded on
     one connection, then ``--overload-connections`` connections in a closed
     loop that retries a 429 at once. The CPU saturates long before the gate
     does, so this mostly measures the HTTP layer's queue.
   * 2b, the gate's own overload: a ``sleep`` tool of ``--gate-tool-ms``, so
     the gate can serve ``64 / tool time`` requests a second; open-loop
     arrivals at 0.3x that (unloaded), then at 10x, a rate the HTTP layer
     can still parse.

3. Cancellation storm against a fresh gateway: ``--storm`` requests for a
   tool that would sleep a minute, each connection closed ``--storm-hold-ms``
   after sending; then the admission counters from ``/api/resident/metrics``
   and ``/api/resident/status`` (zero slots held) and the server's RSS before
   and after.

The load client is ``bench/_http_load.py`` in its own process; it reports its
own CPU, the servers' CPU (``/proc``) and what the rest of the machine used
during each run ("others", in cores), so a noisy neighbour shows up in the
output instead of silently skewing it.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import platform
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from _common import (
    BUSY,
    BUSY_CORES,
    FIXTURES,
    REPO,
    Window,
    free_port,
    process_tree,
    rotations,
    spread,
    tree_rss_kib,
    verdict,
)

BENCH = Path(__file__).resolve().parent
SEARCH_CORPUS = FIXTURES / "mcp-docs" / "corpus"

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench-http", "version": "1"},
}
ECHO_TEXT = "hello"
# A keep-alive answer that waits for the peer's delayed ACK (Nagle, no
# TCP_NODELAY) takes about 40 ms however idle the machine: when even the
# fastest of 20 round trips is that slow, every one of them stalled.
STALL_MS = 30.0
STORM_TOOL_MS = 60_000.0
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 5.0


def tool_call(tool: str, arguments: dict[str, Any], request_id: int = 1) -> str:
    """A modern ``tools/call`` body."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": ENVELOPE},
    }
    return json.dumps(message, separators=(",", ":"))


def modern_headers(tool: str) -> dict[str, str]:
    return {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }


# -- processes ------------------------------------------------------------------------------


@dataclass
class Server:
    """One measured case: its processes, port and the request it is loaded with."""

    name: str
    processes: list[subprocess.Popen[bytes]]
    port: int
    tool: str = "echo"
    arguments: dict[str, Any] = field(default_factory=lambda: {"text": ECHO_TEXT})
    expect: str = ECHO_TEXT
    # Varied calls (one argument set per request in turn); empty: ``arguments`` only.
    varied: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pids(self) -> list[int]:
        """The server processes and all their descendants (``--workers`` children)."""
        return process_tree([process.pid for process in self.processes])

    def job(self, **settings: Any) -> dict[str, Any]:
        """A load-client job for this server (``tool``/``arguments`` may be overridden)."""
        tool = settings.pop("tool", self.tool)
        arguments = settings.pop("arguments", None)
        job = {
            "port": self.port,
            "server_pids": self.pids,
            "body": tool_call(tool, arguments or self.arguments),
            "headers": modern_headers(tool),
            **settings,
        }
        if arguments is None and self.varied:
            job["bodies"] = [tool_call(tool, varied) for varied in self.varied]
        return job


class Fleet:
    """Every process this benchmark starts, so all of them are stopped on the way out."""

    def __init__(self, logs: Path) -> None:
        self._logs = logs
        self._processes: list[subprocess.Popen[bytes]] = []

    def start(
        self, label: str, argv: Sequence[str], env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
        """Start ``argv`` and wait for the JSON line it prints once it listens."""
        log: IO[bytes] = open(self._logs / f"{label}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            list(argv),
            cwd=REPO,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        self._processes.append(process)
        assert process.stdout is not None
        line = _read_line(process.stdout, _START_TIMEOUT)
        if not line:
            raise RuntimeError(f"{label} did not start; see {self._logs / (label + '.log')}")
        info: dict[str, Any] = json.loads(line)
        return process, info

    def stop_all(self) -> None:
        for process in self._processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT
        for process in self._processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        self._processes.clear()


def _read_line(stream: IO[bytes], timeout: float) -> bytes:
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return b""
    return stream.readline()


def start_bench_server(
    fleet: Fleet, name: str, kind: str, *extra: str, port: int | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port("bench_http") if port is None else port
    argv = [sys.executable, str(BENCH / "_http_servers.py"), kind, *extra, "--port", str(port)]
    process, info = fleet.start(name, argv)
    return process, int(info["port"])


def gno_env(root: Path) -> dict[str, str]:
    return {
        "GNO_CONFIG_DIR": str(root / "config"),
        "GNO_DATA_DIR": str(root / "data"),
        "GNO_CACHE_DIR": str(root / "cache"),
    }


def build_search_index(root: Path, count: int) -> list[dict[str, Any]]:
    """Index the mcp-docs corpus with the CLI; ``count`` varied queries that each hit."""
    env = gno_env(root)
    cli = [sys.executable, "-m", "gno_trio"]
    for step in (["init", str(SEARCH_CORPUS), "--name", "mcp"], ["update"]):
        subprocess.run(
            cli + step,
            cwd=REPO,
            env={**os.environ, **env},
            check=True,
            capture_output=True,
            timeout=300,
        )
    with open(root / "config" / "index.yml", "a", encoding="utf-8") as config:
        config.write("gateway:\n  limits:\n    maxRequestsPerMinute: 1000000000\n")
    sys.path.insert(0, str(REPO))
    from bench_stdio_search import varied_queries

    from gno_trio.config.dirs import Dirs
    from gno_trio.engine import Engine

    dirs = Dirs(config=root / "config", data=root / "data", cache=root / "cache")
    with Engine.open(dirs=dirs, create=False) as engine:
        words = varied_queries(engine, count, 5)
    return [{"query": word, "limit": 5} for word in words]


def start_search_server(
    fleet: Fleet, name: str, root: Path, varied: list[dict[str, Any]], *extra: str
) -> Server:
    """``gno-trio serve`` (``extra`` flags, e.g. ``--workers 2``) over the search index.

    ``--no-embed``: the SDK peer embeds nothing, so neither does this server
    (a background embedder would spend the cores the measurement needs).
    """
    process, info = fleet.start(
        name,
        [
            *(sys.executable, "-m", "gno_trio", "serve", "--json", "--no-embed", *extra),
            *("--port", str(free_port("bench_http"))),
        ],
        gno_env(root),
    )
    return search_server(name, [process], int(info["port"]), varied)


def start_sdk_search_server(
    fleet: Fleet, root: Path, varied: list[dict[str, Any]], kind: str = "sdk-search"
) -> Server:
    """The SDK peer with the identical ``gno_search`` over the same index (or, as
    ``bare-search``, the floor: the same engine call behind bare hypercorn-trio)."""
    argv = [sys.executable, str(BENCH / "_http_servers.py"), kind]
    argv += ["--port", str(free_port("bench_http"))]
    process, info = fleet.start(kind, argv, gno_env(root))
    return search_server(kind, [process], int(info["port"]), varied)


def search_server(
    name: str, processes: list[subprocess.Popen[bytes]], port: int, varied: list[dict[str, Any]]
) -> Server:
    return Server(
        name,
        processes,
        port,
        tool="gno_search",
        arguments=varied[0],
        expect="structuredContent",
        varied=varied,
    )


# -- talking to servers -------------------------------------------------------------------


def probe(server: Server, count: int = 20) -> tuple[int, float, float, list[dict[str, Any]]]:
    """``count`` sequential real requests on one keep-alive connection.

    Each must be HTTP 200 with a JSON-RPC result holding the expected text.
    Returns the first answer's size, the fastest and the median round trip
    in ms (a fastest near 40 ms is the Nagle / delayed-ACK stall of a socket
    without ``TCP_NODELAY``) and the results of the varied calls, one each.
    """
    tool = server.tool
    bodies = [tool_call(tool, arguments) for arguments in server.varied or [server.arguments]]
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    size = 0
    times: list[float] = []
    results: list[dict[str, Any]] = []
    try:
        for index in range(max(count, len(bodies))):
            body_text = bodies[index % len(bodies)]
            started = time.perf_counter()
            connection.request("POST", "/mcp", body=body_text, headers=modern_headers(tool))
            response = connection.getresponse()
            body = response.read()
            times.append((time.perf_counter() - started) * 1000)
            document = json.loads(body)
            if (
                response.status != 200
                or "result" not in document
                or server.expect not in body.decode()
            ):
                raise RuntimeError(
                    f"{server.name}: unexpected answer {response.status} {body[:300]!r}"
                )
            size = size or len(body)
            if index < len(bodies):
                results.append({"size": len(body), "result": document["result"]})
    finally:
        connection.close()
    return size, min(times), statistics.median(times), results


def same_payloads(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> str:
    """Check two servers gave the same content for every varied call; describe the sizes."""
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for key in ("content", "structuredContent"):
            if a["result"].get(key) != b["result"].get(key):
                raise RuntimeError(f"varied call {index}: the servers' {key} differ")
    mine = statistics.fmean(item["size"] for item in ours)
    other = statistics.fmean(item["size"] for item in theirs)
    if abs(mine - other) / other > 0.02:
        raise RuntimeError(f"answer sizes differ: {mine:.0f} B against {other:.0f} B")
    return f"{mine:,.0f} B against {other:,.0f} B"


def get_json(port: int, path: str) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        document: dict[str, Any] = json.loads(response.read())
    finally:
        connection.close()
    return document


def run_load(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run the load client on ``job`` in its own process; its JSON result."""
    completed = subprocess.run(
        [sys.executable, str(BENCH / "_http_load.py"), "-"],
        cwd=REPO,
        input=json.dumps(job).encode(),
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"load client failed: {completed.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


# -- reporting ------------------------------------------------------------------------------


def failures(result: dict[str, Any]) -> int:
    """Non-2xx answers plus socket errors of one run."""
    bad = sum(stats["n"] for code, stats in result["by_status"].items() if int(code) >= 300)
    return int(bad) + int(result["errors"])


def cores(result: dict[str, Any], key: str) -> float:
    elapsed: float = result["elapsed_s"]
    return float(result[key]) / elapsed if elapsed else 0.0


# -- part 1: throughput -------------------------------------------------------------------


def start_cases(
    fleet: Fleet, cases: Sequence[str], search_root: Path, varied: list[dict[str, Any]]
) -> dict[str, Server]:
    """A fresh server for every case (each round gets its own: no warm state carried over)."""
    servers: dict[str, Server] = {}
    for name in cases:
        if name in ("bare", "sdk", "gateway"):
            process, port = start_bench_server(fleet, name, name)
            servers[name] = Server(name, [process], port)
        elif name == "search":
            servers[name] = start_search_server(fleet, name, search_root, varied)
        elif name == "search-x2":
            # One resident per data directory: the second gateway serves a copy of the index.
            x2_root = search_root.with_name(search_root.name + "-x2")
            if not x2_root.exists():
                shutil.copytree(search_root, x2_root)
            servers[name] = start_search_server(fleet, name, x2_root, varied, "--workers", "2")
        elif name in ("sdk-search", "bare-search"):
            servers[name] = start_sdk_search_server(fleet, search_root, varied, name)
        else:
            raise SystemExit(f"unknown case {name!r}")
    return servers


def check_cases(servers: dict[str, Server], varied: list[dict[str, Any]]) -> None:
    """Every case answers right, without the Nagle stall, and the search cases alike."""
    answers: dict[str, list[dict[str, Any]]] = {}
    for server in servers.values():
        size, fastest_ms, median_ms, answers[server.name] = probe(server)
        print(
            f"  {server.name:<11} port {server.port:<5} answer {size} B, "
            f"sequential keep-alive fastest {fastest_ms:.2f} ms, p50 {median_ms:.2f} ms"
        )
        if fastest_ms > STALL_MS:
            raise RuntimeError(
                f"{server.name}: every keep-alive round trip takes over {fastest_ms:.0f} ms; a "
                "socket without TCP_NODELAY stalls on Nagle and delayed ACK, so no ratio "
                "would be fair"
            )
    for name in ("search", "search-x2", "bare-search"):
        if name in servers and "sdk-search" in servers:
            print(
                f"  {name} and sdk-search answered all {len(varied)} varied calls alike: "
                + same_payloads(answers[name], answers["sdk-search"])
            )


def part_throughput(fleet: Fleet, options: argparse.Namespace, search_root: Path) -> None:
    print(
        f"\n== 1. Throughput: modern tools/call, closed loop, c={options.connections}, "
        f"{options.rounds} rounds x {options.duration:g} s, fresh servers per round, "
        "rotated order"
    )
    cases = [name.strip() for name in options.cases.split(",") if name.strip()]
    varied: list[dict[str, Any]] = []
    if any(name.startswith(("search", "sdk-search", "bare-search")) for name in cases):
        varied = build_search_index(search_root, options.queries)
        print(f"  search index: {SEARCH_CORPUS.parent.name}, {len(varied)} varied queries")
    timeout = options.duration + 120
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
    whole = Window()
    for round_index, order in enumerate(rotations(cases, options.rounds)):
        servers = start_cases(fleet, cases, search_root, varied)
        if round_index == 0:
            check_cases(servers, varied)
        settings = {"mode": "closed", "connections": options.connections}
        window = Window()
        for name in order:
            run_load(servers[name].job(**settings, duration=options.warmup), timeout)
            results[name].append(
                run_load(servers[name].job(**settings, duration=options.duration), timeout)
            )
        print(f"  round {round_index + 1} ({' '.join(order)}): {window.close().line()}")
        fleet.stop_all()
    whole.close()
    print(
        f"\n  {'case':<11} {'req/s median (min-max)':<26} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'srv CPU us/req':>22} {'cli CPU us/req':>15} {'cli cores':>9} {'others':>7} "
        f"{'failed':>6}"
    )
    for name in cases:
        runs = results[name]
        print(
            f"  {name:<11} {spread([r['rps'] for r in runs], 0):<26} "
            f"{statistics.median(r['latency_ms']['p50'] for r in runs):>8.1f} "
            f"{statistics.median(r['latency_ms']['p99'] for r in runs):>8.1f} "
            f"{spread([r['server_cpu_us_per_req'] for r in runs], 0):>22} "
            f"{spread([r['client_cpu_us_per_req'] for r in runs], 0):>15} "
            f"{statistics.median(cores(r, 'client_cpu_s') for r in runs):>9.2f} "
            f"{statistics.median(cores(r, 'others_cpu_s') for r in runs):>7.2f} "
            f"{sum(failures(r) for r in runs):>6}"
        )
    print(
        "  (median (min-max) over the rounds; p50/p99: closed-loop latency incl. queueing; "
        "srv CPU: the server's process tree; 'cli cores'/'others': CPU cores used by the load "
        "client / by other processes on the machine during the run; 'failed': non-2xx answers "
        "plus socket errors)"
    )
    _print_ratios(results, cases, whole)
    print(f"  whole part 1: {whole.line()}")


def _ratio(
    results: dict[str, list[dict[str, Any]]], top: str, bottom: str, key: str
) -> list[float]:
    """``top`` ÷ ``bottom`` of ``key`` within each round."""
    ratios = []
    for upper, lower in zip(results[top], results[bottom], strict=True):
        a, b = float(upper[key]), float(lower[key])
        if a and b:
            ratios.append(a / b)
    return ratios


# (ours, compared with, what the comparison is, CPU/req target as a ceiling on ours ÷ it)
COMPARISONS: tuple[tuple[str, str, str, float | None], ...] = (
    ("gateway", "bare", "echo: gateway vs floor bare hypercorn-trio", 1.05),
    ("search", "bare-search", "gno_search: serve vs floor bare-search", 1.05),
    ("gateway", "sdk", "echo: gateway vs peer SDK on uvicorn", None),
    ("search", "sdk-search", "gno_search: serve vs peer SDK gno_search", None),
    ("bare-search", "sdk-search", "floor bare-search vs peer SDK gno_search", None),
    ("search-x2", "search", "serve --workers 2 vs --workers 1", None),
)


def _print_ratios(
    results: dict[str, list[dict[str, Any]]], cases: Sequence[str], window: Window
) -> None:
    print(
        "\n  same-round ratios, median (min-max) over rounds; CPU/req = server tree CPU per "
        "request, ours ÷ the one compared with (< 1: we use less):"
    )
    for ours, other, label, target in COMPARISONS:
        if ours not in cases or other not in cases:
            continue
        rps = _ratio(results, ours, other, "rps")
        cpu = _ratio(results, ours, other, "server_cpu_us_per_req")
        line = f"    {label:<44} req/s {spread(rps, 2):<18} CPU/req {spread(cpu, 2):<18}"
        if target is not None and cpu:
            median = statistics.median(cpu)
            line += verdict(median, f"CPU/req <= {target:.2f}x", median <= target, window)
        print(line)


# -- part 2: overload -----------------------------------------------------------------------


def _status_lines(by_status: dict[str, dict[str, Any]]) -> None:
    for code in sorted(by_status):
        stats = by_status[code]
        print(
            f"    HTTP {code}: {stats['n']:>7}  p50 {stats['p50']:>9.2f} ms  "
            f"p90 {stats['p90']:>9.2f} ms  p99 {stats['p99']:>9.2f} ms  max {stats['max']:>9.2f} ms"
        )


def _admitted_verdict(loaded: dict[str, Any], unloaded_p99: float) -> None:
    admitted = loaded["by_status"].get("200")
    if not admitted or not unloaded_p99:
        print("  no admitted request to compare")
        return
    ratio = admitted["p99"] / unloaded_p99
    others = cores(loaded, "others_cpu_s")
    judged = BUSY if others > BUSY_CORES else f"target < 3x: {'met' if ratio < 3.0 else 'NOT met'}"
    print(
        f"  admitted p99 / unloaded p99 = {admitted['p99']:.2f} / {unloaded_p99:.2f} ms = "
        f"{ratio:.2f}x ({judged}; other work {others:.2f} cores)"
    )


def _shed_line(loaded: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> None:
    shed = loaded["by_status"].get("429", {}).get("n", 0)
    print(
        f"  429s: {shed:,} ({shed / max(1, loaded['completed']):.0%} of answers); gate: "
        f"refusedOverloaded +{after['refusedOverloaded'] - before['refusedOverloaded']:,}, "
        f"admitted +{after['admittedTotal'] - before['admittedTotal']:,}, "
        f"peakActive {after['peakActive']}; server CPU "
        f"{loaded['server_cpu_s'] / max(1, loaded['completed']) * 1e6:,.0f} us/answer, "
        f"client {cores(loaded, 'client_cpu_s'):.2f} cores, "
        f"others {cores(loaded, 'others_cpu_s'):.2f}"
    )


def _admission(gateway: Server) -> dict[str, Any]:
    admission: dict[str, Any] = get_json(gateway.port, "/api/resident/metrics")["admission"]
    return admission


def part_overload(gateway: Server, options: argparse.Namespace) -> None:
    transport = get_json(gateway.port, "/api/resident/status")["transport"]
    active, queued = transport["maxConcurrentRequests"], transport["maxQueuedRequests"]
    print(f"\n== 2. Overload against {active} active + {queued} queued")
    timeout = options.overload_duration + 120

    # 2a: the closed loop the issue describes, a few-ms tool, immediate retries.
    arguments = {"text": ECHO_TEXT, "ms": options.tool_ms}
    print(
        f"  2a. sleep tool {options.tool_ms:g} ms; {options.overload_connections} connections "
        "in a closed loop (a 429 is retried at once)"
    )
    unloaded = run_load(
        gateway.job(
            mode="closed",
            connections=1,
            duration=options.unloaded_duration,
            tool="sleep",
            arguments=arguments,
        ),
        timeout,
    )
    base = unloaded["latency_ms"]
    print(
        f"  unloaded (1 connection, {unloaded['elapsed_s']:.1f} s): n={base['n']} "
        f"p50 {base['p50']:.2f} ms, p99 {base['p99']:.2f} ms"
    )
    before = _admission(gateway)
    loaded = run_load(
        gateway.job(
            mode="closed",
            connections=options.overload_connections,
            duration=options.overload_duration,
            tool="sleep",
            arguments=arguments,
        ),
        timeout,
    )
    after = _admission(gateway)
    print(
        f"  overloaded ({loaded['elapsed_s']:.1f} s): {loaded['completed']:,} answers, "
        f"{loaded['rps']:,.0f}/s, socket errors {loaded['errors']}"
    )
    _status_lines(loaded["by_status"])
    _shed_line(loaded, before, after)
    _admitted_verdict(loaded, base["p99"])
    print(
        "  (client-side latency. The CPU, not the gate, is the limit here: a 429 costs the HTTP"
        " layer about as much as an answer, so every request, admitted or not, first waits its"
        " turn in the event loop; by Little's law the mean wait is connections / answers per"
        " second.)"
    )

    # 2a': the same load, but the clients honour the Retry-After of their 429s.
    before = _admission(gateway)
    polite = run_load(
        gateway.job(
            mode="closed",
            connections=options.overload_connections,
            duration=options.overload_duration,
            tool="sleep",
            arguments=arguments,
            honour_retry_after=True,
        ),
        timeout,
    )
    after = _admission(gateway)
    print(
        f"\n  2a'. the same {options.overload_connections} connections, honouring Retry-After "
        f"({polite['elapsed_s']:.1f} s): {polite['completed']:,} answers, "
        f"{polite['rps']:,.0f}/s, socket errors {polite['errors']}"
    )
    _status_lines(polite["by_status"])
    _shed_line(polite, before, after)
    _admitted_verdict(polite, base["p99"])

    # 2b: 10x the gate's own capacity, at an arrival rate the HTTP layer can parse.
    tool_s = options.gate_tool_ms / 1000.0
    capacity = active / tool_s
    arguments = {"text": ECHO_TEXT, "ms": options.gate_tool_ms}
    print(
        f"\n  2b. sleep tool {options.gate_tool_ms:g} ms, so the gate serves at most "
        f"{capacity:,.0f} req/s; open loop at 0.3x that (unloaded), then at 10x"
    )
    unloaded = run_load(
        gateway.job(
            mode="open",
            connections=32,
            rate=0.3 * capacity,
            duration=options.unloaded_duration + 1,
            tool="sleep",
            arguments=arguments,
        ),
        timeout,
    )
    base = unloaded["latency_ms"]
    print(
        f"  unloaded ({unloaded['rate']:,.0f} req/s): n={base['n']} p50 {base['p50']:.2f} ms, "
        f"p99 {base['p99']:.2f} ms, statuses {sorted(unloaded['by_status'])}"
    )
    before = _admission(gateway)
    loaded = run_load(
        gateway.job(
            mode="open",
            connections=min(options.overload_connections, 256),
            rate=10 * capacity,
            duration=options.overload_duration,
            tool="sleep",
            arguments=arguments,
        ),
        timeout,
    )
    after = _admission(gateway)
    print(
        f"  overloaded ({loaded['rate']:,.0f} req/s offered for {options.overload_duration:g} s): "
        f"{loaded['completed']:,} answers, socket errors {loaded['errors']}, "
        f"connections opened on demand {loaded['extra_connections']}"
    )
    _status_lines(loaded["by_status"])
    _shed_line(loaded, before, after)
    _admitted_verdict(loaded, base["p99"])


# -- part 3: cancellation storm -------------------------------------------------------------


def _wait_idle(port: int, timeout: float) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    while True:
        status = get_json(port, "/api/resident/status")
        held = (
            status["transport"]["activeRequests"]
            + status["transport"]["queuedRequests"]
            + status["readers"]["active"]
        )
        waited = time.monotonic() - started
        if held == 0 or waited > timeout:
            return status, waited
        time.sleep(0.05)


def part_storm(fleet: Fleet, options: argparse.Namespace) -> None:
    low, high = (float(value) for value in options.storm_hold_ms.split(","))
    print(
        f"\n== 3. Cancellation storm: {options.storm:,} requests for a {STORM_TOOL_MS / 1000:g} s "
        f"sleep tool, {options.storm_concurrency} at a time, each connection closed "
        f"{low:g}-{high:g} ms after sending"
    )
    process, port = start_bench_server(fleet, "storm", "gateway")
    server = Server("storm", [process], port)
    arguments = {"text": ECHO_TEXT, "ms": STORM_TOOL_MS}
    storm_settings = {
        "mode": "storm",
        "concurrency": options.storm_concurrency,
        "hold_ms": [low, high],
        "tool": "sleep",
        "arguments": arguments,
    }
    run_load(server.job(mode="closed", connections=options.connections, duration=1.0), 120)
    run_load(server.job(count=min(500, options.storm), seed=7, **storm_settings), 300)
    _wait_idle(port, 10)
    rss_before = tree_rss_kib([process.pid])
    before = get_json(port, "/api/resident/metrics")
    result = run_load(server.job(count=options.storm, seed=1, **storm_settings), 600)
    status, waited = _wait_idle(port, 15)
    rss_after = tree_rss_kib([process.pid])
    time.sleep(1.0)
    rss_settled = tree_rss_kib([process.pid])
    after = get_json(port, "/api/resident/metrics")

    def delta(section: str, key: str) -> int:
        return int(after[section].get(key, 0)) - int(before[section].get(key, 0))

    answered = (
        sum(delta("statuses", code) for code in after["statuses"] if not code.startswith("2"))
        + delta("statuses", "200")
        - delta("requests", "status")
    )
    print(
        f"  sent {result['sent']:,} in {result['elapsed_s']:.1f} s "
        f"({result['sent'] / result['elapsed_s']:,.0f}/s), client errors {result['errors']}, "
        f"server CPU {result['server_cpu_s']:.1f} s "
        f"({result['server_cpu_s'] / max(1, result['sent']) * 1e6:,.0f} us/request)"
    )
    print(
        f"  gate during the storm: admitted +{delta('admission', 'admittedTotal')}, "
        f"refusedOverloaded +{delta('admission', 'refusedOverloaded')}, "
        f"cancelledWhileQueued +{delta('admission', 'cancelledWhileQueued')}, "
        f"peakActive {after['admission']['peakActive']} (whole run); "
        f"storm requests answered before their client left: {answered}"
    )
    transport = status["transport"]
    held = transport["activeRequests"] + transport["queuedRequests"] + status["readers"]["active"]
    print(
        f"  after the storm ({waited:.2f} s to settle): "
        f"activeRequests {transport['activeRequests']}, "
        f"queuedRequests {transport['queuedRequests']}, "
        f"readers.active {status['readers']['active']} "
        f"-> {'zero slots held' if held == 0 else f'{held} SLOTS STILL HELD'}"
    )
    print(
        f"  server tree RSS: before {rss_before / 1024:.1f} MiB, right after "
        f"{rss_after / 1024:.1f} MiB, 1 s later {rss_settled / 1024:.1f} MiB "
        f"(delta {(rss_settled - rss_before) / 1024:+.1f} MiB)"
    )


# -- main -----------------------------------------------------------------------------------


def describe_machine() -> None:
    versions = []
    for package in ("trio", "hypercorn", "h11", "msgspec", "mcp", "uvicorn", "starlette"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} -")
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}; " + ", ".join(versions)
    )


@contextlib.contextmanager
def terminated_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into SystemExit so the servers are still stopped."""

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--parts", default="1,2,3", help="which parts to run (default 1,2,3)")
    parser.add_argument(
        "--cases", default="bare,sdk,gateway,search,sdk-search,bare-search,search-x2"
    )
    parser.add_argument(
        "--queries",
        type=int,
        default=1200,
        help="varied search queries, more than the parse cache holds (default 1200)",
    )
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per measured run")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, fresh servers each")
    parser.add_argument(
        "--warmup",
        type=float,
        default=4.0,
        help="seconds of warm-up per case (a server builds its in-memory chunk index first)",
    )
    parser.add_argument("--tool-ms", type=float, default=5.0, help="sleep tool time in part 2")
    parser.add_argument("--unloaded-duration", type=float, default=2.0)
    parser.add_argument("--overload-connections", type=int, default=640)
    parser.add_argument("--overload-duration", type=float, default=5.0)
    parser.add_argument(
        "--gate-tool-ms", type=float, default=1000.0, help="sleep tool time in part 2b"
    )
    parser.add_argument("--storm", type=int, default=10_000)
    parser.add_argument("--storm-concurrency", type=int, default=48)
    parser.add_argument("--storm-hold-ms", default="5,30", help="range LOW,HIGH in ms")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    parts = {part.strip() for part in options.parts.split(",")}
    describe_machine()
    scratch = Path(tempfile.mkdtemp(prefix="gno-bench-http-"))
    fleet = Fleet(scratch)
    started = time.monotonic()
    try:
        with terminated_on_sigterm():
            if "1" in parts:
                part_throughput(fleet, options, scratch / "search-index")
            if "2" in parts:
                process, port = start_bench_server(fleet, "gateway", "gateway")
                part_overload(Server("gateway", [process], port), options)
            if "3" in parts:
                part_storm(fleet, options)
    finally:
        fleet.stop_all()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\ntotal {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
