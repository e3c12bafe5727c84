"""``gno_search`` round trips over stdio: gno-trio against the official Python SDK.

Indexes ``fixtures/mcp-docs/corpus`` into a throwaway index, then times
sequential ``tools/call gno_search`` requests (one in flight at a time, the
same query each time) from request line written to response line read, in
both protocol eras: legacy after ``initialize``, modern with the per-request
``_meta`` envelope after ``server/discover``.

Two servers answer the same requests over the same index:

* ``gno-trio mcp`` (``python -m gno_trio mcp``);
* a minimal server on the SDK's high-level API (``mcp`` 2.3.0 ``MCPServer``
  over its stdio transport) whose one tool makes the identical engine call,
  ``Engine.search`` on the same index. It is this file run with ``--serve-sdk``.

Both are driven by the same blocking pipe client, so the client costs the
same on both sides. The engine's own in-process time for the query is
measured too, so the transport and protocol overhead can be read off. The
script prints p50/p95/p99 per server and era and the SDK ÷ gno-trio ratio;
it asserts nothing about time.

    python bench/bench_stdio_search.py [--calls 2000] [--warmup 200] [--query roots] [--limit 5]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from gno_trio.dirs import Dirs, resolve_dirs  # noqa: E402
from gno_trio.engine.api import Engine  # noqa: E402
from gno_trio.engine.search import SearchRequest  # noqa: E402

FIXTURES = Path(os.environ.get("GNO_FIXTURES", REPO.parent / "shared" / "fixtures"))
CORPUS = FIXTURES / "mcp-docs" / "corpus"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
ERAS = ("legacy", "modern")


# -- the SDK peer server (run in its own process with --serve-sdk) -----------------------


def serve_sdk() -> None:
    """One ``gno_search`` tool on the SDK's ``MCPServer``, over the index in GNO_*_DIR."""
    from mcp.server.mcpserver import MCPServer

    engine = Engine.open(dirs=resolve_dirs(), create=False)
    server: MCPServer[Any] = MCPServer("gno-sdk-peer", log_level="WARNING")

    @server.tool()
    def gno_search(query: str, limit: int = 5) -> dict[str, Any]:
        """BM25 keyword search over the index."""
        return engine.search(SearchRequest(query=query, limit=limit))

    try:
        server.run("stdio")
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


@dataclass(frozen=True)
class Run:
    server: str
    era: str
    samples_ms: list[float]


def run_server(
    label: str,
    command: Sequence[str],
    env: Mapping[str, str],
    era: str,
    arguments: Mapping[str, Any],
    calls: int,
    warmup: int,
) -> Run:
    """Spawn ``command``, open the era, and time ``warmup + calls`` sequential searches."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            list(command),
            cwd=REPO,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        try:
            return Run(label, era, _timed_searches(process, era, arguments, calls, warmup))
        except (RuntimeError, OSError) as exc:
            process.kill()
            process.wait()
            errors.seek(0)
            tail = errors.read()[-2000:].decode(errors="replace")
            raise RuntimeError(f"{label} ({era}): {exc}\n--- server stderr ---\n{tail}") from exc
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close stdin (the server's cue to exit) and reap it, killing it if it lingers."""
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _timed_searches(
    process: subprocess.Popen[bytes],
    era: str,
    arguments: Mapping[str, Any],
    calls: int,
    warmup: int,
) -> list[float]:
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    params: dict[str, Any] = {"name": "gno_search", "arguments": dict(arguments)}
    if era == "legacy":
        hello = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        _exchange(stdin, stdout, _line(0, "initialize", hello))
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    else:
        _exchange(stdin, stdout, _line(0, "server/discover", {"_meta": ENVELOPE}))
        params["_meta"] = ENVELOPE
    samples: list[float] = []
    for request_id in range(1, warmup + calls + 1):
        line = _line(request_id, "tools/call", params)
        started = time.perf_counter_ns()
        raw = _exchange(stdin, stdout, line)
        elapsed = time.perf_counter_ns() - started
        answer = json.loads(raw)
        result = answer.get("result")
        if answer.get("id") != request_id or not isinstance(result, dict):
            raise RuntimeError(f"unexpected answer {raw[:300]!r}")
        if result.get("isError") or not result["structuredContent"]["results"]:
            raise RuntimeError(f"the search failed or found nothing: {raw[:300]!r}")
        if request_id > warmup:
            samples.append(elapsed / 1e6)
    return samples


# -- reporting -----------------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def engine_only_ms(engine: Engine, request: SearchRequest, rounds: int) -> list[float]:
    for _ in range(min(rounds, 100)):
        engine.search(request)
    samples = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        engine.search(request)
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples


def row(label: str, samples: Sequence[float]) -> str:
    return (
        f"{label:<24} {len(samples):>6} {percentile(samples, 50):>8.3f} "
        f"{percentile(samples, 95):>8.3f} {percentile(samples, 99):>8.3f} "
        f"{statistics.fmean(samples):>8.3f}"
    )


def build_index(base: Path) -> tuple[Dirs, int]:
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.add_collection(str(CORPUS), name="mcp")
        (report,) = engine.sync()
    return dirs, report.added


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per server and era")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first")
    parser.add_argument("--query", default="roots", help="the search query (default: roots)")
    parser.add_argument("--limit", type=int, default=5, help="hits per search (default 5)")
    parser.add_argument("--serve-sdk", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_sdk:
        serve_sdk()
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
        arguments = {"query": options.query, "limit": options.limit}
        with Engine.open(dirs=dirs, create=False) as engine:
            request = SearchRequest(query=options.query, limit=options.limit)
            hits = len(engine.search(request)["results"])
            engine_ms = engine_only_ms(engine, request, options.calls)

        servers = {
            "gno-trio": [sys.executable, "-m", "gno_trio", "mcp"],
            "sdk": [sys.executable, str(Path(__file__).resolve()), "--serve-sdk"],
        }
        runs: dict[tuple[str, str], Run] = {}
        for era in ERAS:
            for label, command in servers.items():
                runs[label, era] = run_server(
                    label, command, env, era, arguments, options.calls, options.warmup
                )

        print(
            f"index: {documents} documents from {CORPUS.name}/; query {options.query!r} "
            f"limit {options.limit} -> {hits} hits; {options.calls} timed calls after "
            f"{options.warmup} warm-up, one in flight"
        )
        print(f"{'round trip (ms)':<24} {'calls':>6} {'p50':>8} {'p95':>8} {'p99':>8} {'mean':>8}")
        print(row("engine.search in-process", engine_ms))
        for era in ERAS:
            for label in servers:
                print(row(f"{label} {era}", runs[label, era].samples_ms))
        engine_p50 = percentile(engine_ms, 50)
        for era in ERAS:
            ours = percentile(runs["gno-trio", era].samples_ms, 50)
            theirs = percentile(runs["sdk", era].samples_ms, 50)
            print(
                f"{era}: sdk p50 / gno-trio p50 = {theirs / ours:.2f}x; "
                f"overhead beyond the engine call: gno-trio {ours - engine_p50:.3f} ms, "
                f"sdk {theirs - engine_p50:.3f} ms "
                f"({(theirs - engine_p50) / max(ours - engine_p50, 1e-9):.2f}x)"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
