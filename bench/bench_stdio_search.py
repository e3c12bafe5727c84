"""``gno_search`` round trips over stdio: gno-trio against the official Python SDK.

Indexes ``fixtures/mcp-docs/corpus`` into a throwaway index, then times
sequential ``tools/call gno_search`` requests (one in flight at a time;
``--varied N`` different queries drawn from the corpus headings in turn:
words, phrases, negations, prefixes, each checked to find something, more
of them than the parse cache holds, so the figures are not those of one hot
query or of a cached parse; ``--query`` times one query instead) from request line written to
response line read, in both protocol eras: legacy after ``initialize``, modern with the per-request
``_meta`` envelope after ``server/discover``.

Two servers answer the same requests over the same index:

* ``gno-trio mcp`` (``python -m gno_trio mcp``);
* a minimal server on the SDK's high-level API (``mcp`` 2.3.0 ``MCPServer``
  over its stdio transport) whose one tool makes the identical engine call,
  ``Engine.search`` on the same index, and returns the identical payload
  (the same summary text and structured result, as a ``CallToolResult``).
  It is this file run with ``--serve-sdk``.

Every server's answer to each query is kept once and compared: the
``content`` and ``structuredContent`` must be equal on every side, and the
response line sizes are printed (they differ only by the server name and
the key order of the few result fields around them).

A third server is the floor gno-trio is held to, ``bare-thread``: a bare trio
line loop (no validation, no envelope) making the identical engine call in
``trio.to_thread``, as gno-trio's rule (engine code never blocks the loop)
makes it. With ``--floors`` two more bare loops answer too: ``bare-inline``
(the engine call blocks the loop) and ``bare-no-engine`` (the worker thread
hands back the answer it worked out on the query's first sight: the pipes
and the thread hop alone).

All are driven by the same blocking pipe client, so the client costs the
same on every side; the engine's own in-process time for the query is
measured too. Each era runs ``--rounds`` rounds (5), every round with fresh
servers, the servers timed in blocks of ``--block`` calls in an order
rotated per round and per block, so drift on a shared machine hits all of
them alike. Beside wall time, each server's CPU per call is the utime +
stime of its whole process tree over the timed calls. Every figure is
printed as median (min-max) over the rounds, with the ratios taken within
each round: gno-trio's CPU per call against the floor ``bare-thread``
(target <= 1.10x) and the SDK's against gno-trio's (target >= 1.7x), beside
the SDK's against each floor (the most the SDK ratio can be for a server that
costs what that floor costs) and the engine call's share of gno-trio's CPU. Each
round prints the load average and the cores other work used; when other
work held more than half a core, "machine busy: ratios unreliable" is
printed instead of a verdict. It asserts nothing about time.

    python bench/bench_stdio_search.py [--rounds 5] [--calls 400] [--warmup 200] [--block 50]
                                       [--varied 1200 | --query roots] [--limit 5] [--floors]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import (  # noqa: E402
    DEFAULT_ROUNDS,
    FIXTURES,
    Window,
    percentile,
    reap,
    rotations,
    spread,
    tree_cpu_s,
    verdict,
)
from _queries import DEFAULT_COUNT, TEXT_KINDS, build_queries, check_uncached  # noqa: E402

from gno_trio.config.dirs import Dirs  # noqa: E402
from gno_trio.engine import Engine, SearchRequest  # noqa: E402
from gno_trio.tools.retrieval import search_text  # noqa: E402

CORPUS = FIXTURES / "mcp-docs" / "corpus"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
ERAS = ("legacy", "modern")
CALLING_MODES = ("inline", "thread")
"""The bare loops that make the engine call, by where it runs."""
BARE_MODES = (*CALLING_MODES, "no-engine")
FLOOR = "bare-thread"
"""The floor gno-trio is held to: a bare trio loop making the engine call in a worker
thread, as gno-trio's rule (engine code never blocks the loop) makes it."""
FLOOR_TARGET = 1.10
"""gno-trio's CPU per call may be at most this many times the floor's."""
SDK_TARGET = 1.7
"""The SDK peer's CPU per call should be at least this many times gno-trio's."""


# -- the SDK peer server (run in its own process with --serve-sdk) -----------------------


def serve_sdk() -> None:
    """One ``gno_search`` tool on the SDK's ``MCPServer``, over the index in GNO_*_DIR."""
    from _common import sdk_search_peer, serving_engine

    engine = serving_engine(resident=False)
    server = sdk_search_peer(engine)
    try:
        server.run("stdio")
    finally:
        engine.close()


# -- bare reference loops (run in their own process with --serve-bare MODE) ----------------


def serve_bare(mode: str) -> None:
    """The least any Python server can do per call, to show what is reachable at all.

    A bare trio line loop with no validation, no envelope, no registry: it
    answers ``initialize``/``server/discover`` with a stub and every request
    with an id with the same ``Engine.search`` result gno-trio returns. In
    ``inline`` mode the engine call blocks the loop; in ``thread`` mode it
    runs in ``trio.to_thread``, the cost gno-trio's worker-thread rule adds.
    No server, ours or the SDK's, can beat these floors for this engine call.
    In ``no-engine`` mode the worker thread hands back the answer it worked out
    when it first saw the query: what is left is the pipes and the hop.
    """
    import msgspec
    import trio
    from _common import serving_engine

    engine = serving_engine(resident=False)
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode
    stub = {"protocolVersion": LEGACY, "capabilities": {}, "serverInfo": {"name": "bare"}}
    answered: dict[tuple[str, int], dict[str, Any]] = {}

    def remembered(request: SearchRequest) -> dict[str, Any]:
        key = (request.query, request.limit)
        if key not in answered:
            answered[key] = engine.search.lexical(request)
        return answered[key]

    async def answer(message: dict[str, Any]) -> Any:
        if message.get("method") != "tools/call":
            return stub
        arguments = message["params"]["arguments"]
        request = SearchRequest(query=arguments["query"], limit=arguments.get("limit", 5))
        if mode == "thread":
            found = await trio.to_thread.run_sync(engine.search.lexical, request)
        elif mode == "no-engine":
            found = await trio.to_thread.run_sync(remembered, request)
        else:
            found = engine.search.lexical(request)
        text = search_text(found)  # the summary gno-trio sends, so the lines are alike
        return {"content": [{"type": "text", "text": text}], "structuredContent": found}

    async def loop() -> None:
        stdin = trio.lowlevel.FdStream(os.dup(0))
        stdout = trio.lowlevel.FdStream(os.dup(1))
        pending = b""
        while chunk := await stdin.receive_some(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                message = decode(line)
                if "id" in message:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": await answer(message)}
                    await stdout.send_all(encode(reply) + b"\n")

    try:
        trio.run(loop)
    finally:
        engine.close()


# -- the pipe client -----------------------------------------------------------------------


def _line(request_id: int, method: str, params: Mapping[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def _exchange(stdin: IO[bytes], stdout: IO[bytes], line: bytes) -> bytes:
    stdin.write(line)
    stdin.flush()
    answer = stdout.readline()
    if not answer:
        raise RuntimeError("server closed stdout")
    return answer


@dataclass(frozen=True, slots=True)
class Payload:
    """One answer's line size and the two parts every server must send alike."""

    size: int
    content: Any
    structured: Any


def compare_payloads(peers: Sequence[Peer]) -> tuple[str, float]:
    """Check every server sent the same content for every query; describe the sizes.

    Raises ``RuntimeError`` when two servers disagree on a query's
    ``content`` or ``structuredContent``, or when gno-trio's and the SDK's
    response lines differ in size by more than 2 % on average: then the
    comparison would not be of the same work.
    """
    reference = peers[0]
    parts = []
    for peer in peers:
        for query, payload in reference.payloads.items():
            other = peer.payloads.get(query)
            if other is None:
                continue
            if (other.content, other.structured) != (payload.content, payload.structured):
                raise RuntimeError(
                    f"{peer.label} and {reference.label} answered {query!r} differently"
                )
        mean = statistics.fmean(p.size for p in peer.payloads.values())
        parts.append((peer.label, mean))
    sizes = ", ".join(f"{label} {mean:,.0f} B" for label, mean in parts)
    # gno-trio and the SDK peer must send the same bytes give or take the
    # server name; the bare floors leave out the envelope fields on purpose.
    compared = [mean for label, mean in parts if not label.startswith("bare-")]
    low, high = min(compared), max(compared)
    spread = (high - low) / low
    if spread > 0.02:
        raise RuntimeError(f"response sizes differ by {spread:.1%}: {sizes}")
    return sizes, spread


class Peer:
    """One spawned server with its era opened, timing ``tools/call gno_search`` on demand."""

    def __init__(
        self,
        label: str,
        command: Sequence[str],
        env: Mapping[str, str],
        era: str,
        queries: Sequence[str],
        limit: int,
    ) -> None:
        self.label = label
        self.era = era
        self.samples_ms: list[float] = []
        self.cpu_s = 0.0
        """CPU the server's process tree used over the timed calls."""
        self.payloads: dict[str, Payload] = {}
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self._process = subprocess.Popen(
            list(command),
            cwd=REPO,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
        )
        self._queries = itertools.cycle(queries)
        self.cycle = len(queries)
        self._limit = limit
        self._meta: dict[str, Any] | None = None
        self._next_id = 1
        self._guarded(self._open_era)

    def _open_era(self) -> None:
        if self.era == "legacy":
            hello = {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            }
            self._exchange(_line(0, "initialize", hello))
            self._write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        else:
            self._exchange(_line(0, "server/discover", {"_meta": ENVELOPE}))
            self._meta = ENVELOPE

    def _write(self, line: bytes) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(line)
        self._process.stdin.flush()

    def _exchange(self, line: bytes) -> bytes:
        assert self._process.stdout is not None
        self._write(line)
        answer = self._process.stdout.readline()
        if not answer:
            raise RuntimeError("server closed stdout")
        return answer

    def _guarded(self, action: Callable[[], None]) -> None:
        try:
            action()
        except (RuntimeError, OSError) as exc:
            self._process.kill()
            self._process.wait()
            self._errors.seek(0)
            tail = self._errors.read()[-2000:].decode(errors="replace")
            raise RuntimeError(
                f"{self.label} ({self.era}): {exc}\n--- server stderr ---\n{tail}"
            ) from exc

    def searches(self, count: int, *, timed: bool) -> None:
        """Send ``count`` sequential searches, keeping their round trips and the server
        tree's CPU when ``timed``."""
        before = tree_cpu_s([self._process.pid]) if timed else 0.0
        self._guarded(lambda: self._searches(count, timed))
        if timed:
            self.cpu_s += tree_cpu_s([self._process.pid]) - before

    def _searches(self, count: int, timed: bool) -> None:
        for _ in range(count):
            request_id = self._next_id
            self._next_id += 1
            params: dict[str, Any] = {
                "name": "gno_search",
                "arguments": {"query": next(self._queries), "limit": self._limit},
            }
            if self._meta is not None:
                params["_meta"] = self._meta
            line = _line(request_id, "tools/call", params)
            started = time.perf_counter_ns()
            raw = self._exchange(line)
            elapsed = time.perf_counter_ns() - started
            answer = json.loads(raw)
            result = answer.get("result")
            if answer.get("id") != request_id or not isinstance(result, dict):
                raise RuntimeError(f"unexpected answer {raw[:300]!r}")
            if result.get("isError") or not result["structuredContent"]["results"]:
                raise RuntimeError(f"the search failed or found nothing: {raw[:300]!r}")
            query = params["arguments"]["query"]
            if query not in self.payloads:
                self.payloads[query] = Payload(
                    len(raw), result["content"], result["structuredContent"]
                )
            if timed:
                self.samples_ms.append(elapsed / 1e6)

    def close(self) -> None:
        """Close stdin (the server's cue to exit) and reap it, killing it if it lingers."""
        process = self._process
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                process.stdin.close()
        reap(process)
        self._errors.close()


class Timed(Protocol):
    """Something that answers searches and keeps their times: a server or the engine."""

    label: str
    samples_ms: list[float]
    cpu_s: float
    cycle: int
    """How many different queries it sends in turn."""

    def searches(self, count: int, *, timed: bool) -> None: ...


def interleaved(
    peers: Sequence[Timed], calls: int, warmup: int, block: int, warmup_s: float
) -> None:
    """Time ``calls`` searches per peer in alternating blocks of ``block`` calls.

    This shared machine drifts (other tenants, CPU frequency); alternating
    short blocks, in a rotating order, exposes every server to the same drift
    so the ratio between them stays fair.
    """
    for peer in peers:
        # At least ``warmup_s`` each: whatever a server loads or builds in the
        # background after start-up is done before it is timed.
        started = time.monotonic()
        peer.searches(max(warmup, peer.cycle), timed=False)  # every query seen once
        while time.monotonic() - started < warmup_s:
            peer.searches(block, timed=False)
    done = 0
    turn = 0
    while done < calls:
        size = min(block, calls - done)
        order = [*peers[turn % len(peers) :], *peers[: turn % len(peers)]]
        for peer in order:
            peer.searches(size, timed=True)
        done += size
        turn += 1


# -- reporting -----------------------------------------------------------------------------


class InProcess:
    """``Engine.search`` called directly in this process: the floor both servers share."""

    label = "engine.search.lexical"

    def __init__(self, engine: Engine, queries: Sequence[str], limit: int) -> None:
        self._engine = engine
        self._requests = itertools.cycle([SearchRequest(query=q, limit=limit) for q in queries])
        self.cycle = len(queries)
        self.samples_ms: list[float] = []
        self.cpu_s = 0.0

    def searches(self, count: int, *, timed: bool) -> None:
        for _ in range(count):
            request = next(self._requests)
            cpu = time.thread_time()
            started = time.perf_counter_ns()
            self._engine.search.lexical(request)
            if timed:
                self.samples_ms.append((time.perf_counter_ns() - started) / 1e6)
                self.cpu_s += time.thread_time() - cpu


@dataclass
class Figures:
    """One peer's figures in one round: wall p50/p99 (ms) and CPU per call (ms)."""

    p50: float
    p99: float
    cpu_ms: float


def figures(peer: Timed) -> Figures:
    samples = peer.samples_ms
    return Figures(
        percentile(samples, 50), percentile(samples, 99), peer.cpu_s * 1000 / len(samples)
    )


def varied_queries(engine: Engine, count: int, limit: int) -> list[str]:
    """``count`` different query texts (words, phrases, negations, prefixes) that each hit."""
    chosen, _ = build_queries(engine, count, collection="mcp", kinds=TEXT_KINDS, limit=limit)
    queries = [request.query for _, request in chosen]
    check_uncached(queries)
    return queries


def build_index(base: Path) -> tuple[Dirs, int]:
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(CORPUS), name="mcp")
        (report,) = engine.sync()
    return dirs, report.added


def report(
    rounds: dict[str, dict[str, list[Figures]]],
    payload_notes: dict[str, tuple[str, float]],
    whole: Window,
) -> None:
    """Each figure as median (min-max) over the rounds, then the ratios taken within
    each round, each naming what it is compared with."""
    for era, (sizes, gap) in payload_notes.items():
        print(
            f"{era}: identical content and structuredContent on every server for every "
            f"query; mean response line {sizes} (spread {gap:.1%})"
        )
    print(
        f"\n{'median (min-max) over rounds':<28} {'wall p50 ms':>22} {'wall p99 ms':>22} "
        f"{'CPU/call ms':>22}"
    )
    for era in ERAS:
        for label, runs in rounds[era].items():
            print(
                f"{label + ' ' + era:<28} {spread([r.p50 for r in runs], 3):>22} "
                f"{spread([r.p99 for r in runs], 3):>22} {spread([r.cpu_ms for r in runs], 3):>22}"
            )
    print(
        "(CPU/call: utime+stime of the server's whole process tree over the timed calls ÷ "
        "calls; engine.search.lexical: the calling thread's CPU in this process)"
    )
    print(f"\nratios within each round, median (min-max); {whole.line()}")
    for era in ERAS:
        runs = rounds[era]
        floor_cpu = _ratios(runs, "gno-trio", FLOOR, "cpu_ms")
        sdk_cpu = _ratios(runs, "sdk", "gno-trio", "cpu_ms")
        met = statistics.median(floor_cpu) <= FLOOR_TARGET
        print(
            f"  {era}: gno-trio CPU/call vs floor {FLOOR} (bare trio loop + engine call in a "
            f"thread): {spread(floor_cpu, 2)}x -> "
            + verdict(statistics.median(floor_cpu), f"<= {FLOOR_TARGET:.2f}x", met, whole)
        )
        met = statistics.median(sdk_cpu) >= SDK_TARGET
        print(
            f"  {era}: SDK peer CPU/call vs gno-trio (same payload): {spread(sdk_cpu, 2)}x -> "
            + verdict(statistics.median(sdk_cpu), f">= {SDK_TARGET:.2f}x", met, whole)
        )
        # The SDK's ratio to a floor bounds its ratio to any server held to that floor:
        # a server that costs at least the floor is at most this far below the SDK.
        for bare in (f"bare-{mode}" for mode in CALLING_MODES):
            if bare in runs:
                print(
                    f"  {era}: SDK peer CPU/call vs floor {bare}: "
                    f"{spread(_ratios(runs, 'sdk', bare, 'cpu_ms'), 2)}x (the most SDK vs "
                    f"gno-trio can be while gno-trio costs what {bare} costs)"
                )
        engine_share = _ratios(runs, InProcess.label, "gno-trio", "cpu_ms")
        print(
            f"  {era}: engine.search.lexical alone is {spread(engine_share, 2)} of "
            "gno-trio's CPU/call"
        )
        walls = (
            (f"gno-trio vs floor {FLOOR}", "gno-trio", FLOOR),
            ("SDK vs gno-trio", "sdk", "gno-trio"),
            ("gno-trio vs engine.search.lexical alone", "gno-trio", InProcess.label),
        )
        print(
            f"  {era}: wall p50 "
            + "; ".join(f"{text} {spread(_ratios(runs, a, b, 'p50'), 2)}x" for text, a, b in walls)
        )
        if "bare-no-engine" in runs:
            hop = statistics.median(r.p50 for r in runs["bare-no-engine"])
            print(f"  {era}: bare-no-engine wall p50 {hop:.3f} ms (pipes and thread hop alone)")


def _ratios(runs: dict[str, list[Figures]], top: str, bottom: str, key: str) -> list[float]:
    """``top`` ÷ ``bottom`` of figure ``key`` within each round."""
    return [
        getattr(a, key) / getattr(b, key)
        for a, b in zip(runs[top], runs[bottom], strict=True)
        if getattr(b, key)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--calls", type=int, default=400, help="timed calls per server, era and round"
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="rounds, fresh servers each (5)"
    )
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first")
    parser.add_argument(
        "--warmup-seconds", type=float, default=3.0, help="untimed seconds per server first"
    )
    parser.add_argument(
        "--query", help="time this one query instead of the varied ones (e.g. roots)"
    )
    parser.add_argument(
        "--varied",
        type=int,
        default=DEFAULT_COUNT,
        metavar="N",
        help="cycle through N different queries drawn from the corpus headings, each with "
        f"hits, more than the parse cache holds (default {DEFAULT_COUNT})",
    )
    parser.add_argument("--limit", type=int, default=5, help="hits per search (default 5)")
    parser.add_argument(
        "--block", type=int, default=50, help="calls per server before switching (default 50)"
    )
    parser.add_argument(
        "--floors",
        action="store_true",
        help="also time the other bare trio loops (engine call inline / none, the answer "
        f"handed back by the thread) beside the floor {FLOOR}",
    )
    parser.add_argument("--serve-sdk", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-bare", choices=BARE_MODES, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_sdk:
        serve_sdk()
        return 0
    if options.serve_bare:
        serve_bare(options.serve_bare)
        return 0
    if not CORPUS.is_dir():
        print(f"fixture corpus not found: {CORPUS} (set GNO_FIXTURES)", file=sys.stderr)
        return 2

    base = Path(tempfile.mkdtemp(prefix="gno-bench-stdio-"))
    try:
        dirs, documents = build_index(base)
        env = {
            **{k: v for k, v in os.environ.items() if k != "GNO_MCP_ENABLE_WRITE"},
            "GNO_CONFIG_DIR": str(dirs.config),
            "GNO_DATA_DIR": str(dirs.data),
            "GNO_CACHE_DIR": str(dirs.cache),
        }
        servers = {
            "gno-trio": [sys.executable, "-m", "gno_trio", "mcp"],
            "sdk": [sys.executable, str(Path(__file__).resolve()), "--serve-sdk"],
        }
        for mode in BARE_MODES if options.floors else ("thread",):
            servers[f"bare-{mode}"] = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--serve-bare",
                mode,
            ]
        rounds: dict[str, dict[str, list[Figures]]] = {era: {} for era in ERAS}
        payload_notes: dict[str, tuple[str, float]] = {}
        whole = Window()
        with Engine.open(dirs=dirs, create=False) as engine:
            if options.query is None:
                queries = varied_queries(engine, options.varied, options.limit)
                described = (
                    f"{len(queries)} varied queries in turn (words, phrases, negations, prefixes)"
                )
            else:
                queries = [options.query]
                hits = len(
                    engine.search.lexical(SearchRequest(query=options.query, limit=options.limit))[
                        "results"
                    ]
                )
                described = f"query {options.query!r} -> {hits} hits"
            print(
                f"index: {documents} documents from {CORPUS.name}/; {described}, "
                f"limit {options.limit}; {options.rounds} rounds per era with fresh servers, "
                f"{options.calls} timed calls per server and round after "
                f"{max(options.warmup, len(queries))} warm-up calls and "
                f"{options.warmup_seconds:g} s, one in flight, in rotating blocks of "
                f"{options.block}"
            )
            for era in ERAS:
                labels = [InProcess.label, *servers]
                for index, order in enumerate(rotations(labels, options.rounds)):
                    window = Window()
                    floor = InProcess(engine, queries, options.limit)
                    peers = [
                        Peer(label, servers[label], env, era, queries, options.limit)
                        for label in order
                        if label != InProcess.label
                    ]
                    timed: dict[str, Timed] = {floor.label: floor}
                    timed.update({peer.label: peer for peer in peers})
                    try:
                        interleaved(
                            [timed[label] for label in order],
                            options.calls,
                            options.warmup,
                            options.block,
                            options.warmup_seconds,
                        )
                    finally:
                        for peer in peers:
                            peer.close()
                    payload_notes.setdefault(era, compare_payloads(peers))
                    for label, peer in timed.items():
                        rounds[era].setdefault(label, []).append(figures(peer))
                    print(f"  {era} round {index + 1}: {window.close().line()}")
        whole.close()
        report(rounds, payload_notes, whole)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
