"""Warm ``gno_query`` latency through ``gno-trio serve`` on the mcp-docs corpus.

Indexes and embeds the mcp-docs fixture (or reuses the index kept under
``--index-dir``, as ``eval_retrieval.py`` keeps it), starts ``gno-trio serve``
over it on 127.0.0.1, warms it up with every query once, then sends the
known-item and question queries of the evaluation sets one at a time on one
keep-alive connection (2026-07-28 ``tools/call``), ``--rounds`` times, and
prints p50 / p90 / p99 of the round trips. The server is stopped by its PID.

    python3 bench/bench_query_serve.py [--index-dir DIR] [--rounds 3] [--limit 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import FIXTURES, free_port, percentile
from _eval_sets import load_sets
from eval_retrieval import open_corpus

MODERN = "2026-07-28"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "gno_query",
}


def body(query: str, limit: int, number: int) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {
                "name": "gno_query",
                "arguments": {"query": query, "limit": limit},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                },
            },
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index-dir", type=Path, help="keep the index here between runs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    if args.index_dir is None:
        import tempfile

        args.index_dir = Path(tempfile.mkdtemp(prefix="gno-bench-query-"))
    open_corpus("mcp-docs", args.index_dir, None, True).close()
    root = args.index_dir / "mcp-docs"
    config = root / "config" / "index.yml"
    if "maxRequestsPerMinute" not in config.read_text("utf-8"):  # one client, many calls
        with config.open("a", encoding="utf-8") as handle:
            handle.write("gateway:\n  limits:\n    maxRequestsPerMinute: 1000000000\n")
    sets = load_sets(FIXTURES)
    queries = [q["query"] for q in sets["known-item"]]
    queries += [q["query"] for q in sets["questions"] if q["corpus"] == "mcp-docs"]
    port = free_port("bench_query_serve")
    env = dict(
        os.environ,
        GNO_CONFIG_DIR=str(root / "config"),
        GNO_DATA_DIR=str(root / "data"),
        GNO_CACHE_DIR=str(root / "cache"),
    )
    argv = [sys.executable, "-m", "gno_trio", "serve", "--no-embed", "--port", str(port)]
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                connection.connect()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("serve did not start") from None
                time.sleep(0.2)
        number = 0

        def call(query: str) -> float:
            nonlocal number
            number += 1
            started = time.perf_counter()
            connection.request(
                "POST", "/mcp", body=body(query, args.limit, number), headers=HEADERS
            )
            response = connection.getresponse()
            answer = response.read()
            took = (time.perf_counter() - started) * 1000
            document = json.loads(answer)
            if response.status != 200 or "result" not in document:
                raise SystemExit(f"bad answer for {query!r}: {answer[:300]!r}")
            mode = document["result"]["structuredContent"]["meta"]["mode"]
            if mode != "hybrid":
                raise SystemExit(f"{query!r} ran {mode}, not hybrid: embed the index first")
            return took

        for query in queries:  # warm: the model, the held chunk index, the caches
            call(query)
        samples = [call(query) for _ in range(args.rounds) for query in queries]
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    load = os.getloadavg()[0]
    print(
        f"gno_query via serve, mcp-docs, {len(samples)} calls ({len(queries)} queries x "
        f"{args.rounds}): p50 {percentile(samples, 50):.1f} ms, p90 "
        f"{percentile(samples, 90):.1f} ms, p99 {percentile(samples, 99):.1f} ms "
        f"(load average {load:.1f} on {os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
