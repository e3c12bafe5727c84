"""Round-trip latency of the ``echo`` tool over stdio, in both protocol eras.

Spawns ``python -m tests.support.mcp_echo_app`` and sends sequential ``tools/call``
requests over its pipes, one at a time, timing each request line to its response
line and the server process tree's CPU over the timed calls. ``--rounds``
rounds (5), a fresh server per era and round, the eras' order rotated; prints
p50/p99 and CPU per call per era as median (min-max) over the rounds, with the
load average and the cores other work used; asserts nothing.

    python bench/bench_stdio_echo.py [--rounds 5] [--calls 2000] [--warmup 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from _common import DEFAULT_ROUNDS, Window, percentile, reap, rotations, spread, tree_cpu_s

REPO_ROOT = Path(__file__).resolve().parents[1]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


def _exchange(stdin: IO[bytes], stdout: IO[bytes], line: bytes) -> dict[str, Any]:
    stdin.write(line)
    stdin.flush()
    answer: dict[str, Any] = json.loads(stdout.readline())
    return answer


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def run_era(era: str, calls: int, warmup: int) -> tuple[list[float], float]:
    """Per-call round-trip times in milliseconds for one era, and the server tree's CPU
    milliseconds per timed call."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_echo_app"],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        arguments: dict[str, Any] = {"name": "echo", "arguments": {"text": "ping"}}
        if era == "legacy":
            _exchange(
                stdin,
                stdout,
                _request(
                    0,
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"},
                    },
                ),
            )
            stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        else:
            _exchange(stdin, stdout, _request(0, "server/discover", {"_meta": ENVELOPE}))
            arguments["_meta"] = ENVELOPE
        timings: list[float] = []
        cpu = 0.0
        for request_id in range(1, warmup + calls + 1):
            if request_id == warmup + 1:
                cpu = tree_cpu_s([process.pid])
            line = _request(request_id, "tools/call", arguments)
            started = time.perf_counter_ns()
            answer = _exchange(stdin, stdout, line)
            elapsed = time.perf_counter_ns() - started
            if answer.get("id") != request_id or "result" not in answer:
                raise RuntimeError(f"unexpected answer: {answer}")
            if request_id > warmup:
                timings.append(elapsed / 1e6)
        return timings, (tree_cpu_s([process.pid]) - cpu) * 1000 / calls
    finally:
        stdin.close()
        reap(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    options = parser.parse_args()
    figures: dict[str, list[tuple[float, float, float, float]]] = {"legacy": [], "modern": []}
    whole = Window()
    for order in rotations(list(figures), options.rounds):
        for era in order:
            timings, cpu_ms = run_era(era, options.calls, options.warmup)
            mean = statistics.fmean(timings)
            figures[era].append(
                (percentile(timings, 50), percentile(timings, 99), cpu_ms, 1000 / mean)
            )
    whole.close()
    print(f"median (min-max) over {options.rounds} rounds, {options.calls} timed calls each")
    print(f"{'era':<8} {'p50 ms':>22} {'p99 ms':>22} {'CPU/call ms':>22} {'calls/s':>16}")
    for era, runs in figures.items():
        print(
            f"{era:<8} {spread([r[0] for r in runs], 3):>22} {spread([r[1] for r in runs], 3):>22} "
            f"{spread([r[2] for r in runs], 3):>22} {spread([r[3] for r in runs], 0):>16}"
        )
    print(whole.line())


if __name__ == "__main__":
    main()
