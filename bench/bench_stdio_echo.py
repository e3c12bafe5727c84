"""Round-trip latency of the ``echo`` tool over stdio, in both protocol eras.

Spawns ``python -m tests.mcp_echo_app`` and sends sequential ``tools/call``
requests over its pipes, one at a time, timing each request line to its response
line. Prints p50/p99 per era; asserts nothing.

    python bench/bench_stdio_echo.py [--calls 2000] [--warmup 200]
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


def run_era(era: str, calls: int, warmup: int) -> list[float]:
    """Per-call round-trip times in milliseconds for one era."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_echo_app"],
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
        for request_id in range(1, warmup + calls + 1):
            line = _request(request_id, "tools/call", arguments)
            started = time.perf_counter_ns()
            answer = _exchange(stdin, stdout, line)
            elapsed = time.perf_counter_ns() - started
            if answer.get("id") != request_id or "result" not in answer:
                raise RuntimeError(f"unexpected answer: {answer}")
            if request_id > warmup:
                timings.append(elapsed / 1e6)
        return timings
    finally:
        stdin.close()
        process.wait(timeout=10)


def _percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    options = parser.parse_args()
    print(f"{'era':<8} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'calls/s':>8}")
    for era in ("legacy", "modern"):
        timings = sorted(run_era(era, options.calls, options.warmup))
        mean = statistics.fmean(timings)
        print(
            f"{era:<8} {len(timings):>6} {_percentile(timings, 0.5):>8.3f} "
            f"{_percentile(timings, 0.99):>8.3f} {mean:>8.3f} {1000 / mean:>8.0f}"
        )


if __name__ == "__main__":
    main()
