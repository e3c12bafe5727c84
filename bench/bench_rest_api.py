"""REST search beside the same search over ``/mcp``: one ``gno-trio serve``, one run.

Prints numbers; never asserts on time. The one server (``gno-trio serve
--no-embed`` over an index of the mcp-docs fixture) answers both legs, so
the comparison is the surface alone: ``POST /api/search`` with the tool's
arguments as the body, against a modern ``tools/call`` of ``gno_search``
with the same arguments. Both cycle through the same varied one-word
queries. Each round loads each leg in a rotated order (closed loop,
``--connections`` keep-alive connections, after a warm-up) and prints the
machine's load; the table gives req/s, p50/p99 and the server's CPU per
request (its whole process tree) as median (min-max) over the rounds.

Before the rounds the answers of both legs are compared for every query
(the REST body must equal the MCP ``structuredContent``) for a sample of the queries.

    python bench/bench_rest_api.py [--duration 3] [--rounds 3] [--connections 32]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import DEFAULT_ROUNDS, Window, rotations, spread
from bench_http import (
    Fleet,
    Server,
    build_search_index,
    cores,
    failures,
    modern_headers,
    run_load,
    start_search_server,
    tool_call,
)

LEGS = ("rest", "mcp")
_TOOL = "gno_search"
_REST_PATH = "/api/search"


def rest_job(server: Server, **settings: Any) -> dict[str, Any]:
    """A load-client job posting each varied query to the REST search route."""
    bodies = [json.dumps(arguments, separators=(",", ":")) for arguments in server.varied]
    return {
        "port": server.port,
        "server_pids": server.pids,
        "path": _REST_PATH,
        "body": bodies[0],
        "bodies": bodies,
        "headers": {"Content-Type": "application/json", "Accept": "application/json"},
        **settings,
    }


def job_for(leg: str, server: Server, **settings: Any) -> dict[str, Any]:
    return rest_job(server, **settings) if leg == "rest" else server.job(**settings)


def _post(port: int, path: str, body: str, headers: dict[str, str]) -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", path, body=body.encode(), headers=headers)
        response = connection.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"{path} answered {response.status}: {payload[:300]!r}")
        return json.loads(payload)
    finally:
        connection.close()


def check_same_answers(server: Server, every: int = 10) -> None:
    """Every ``every``-th varied query answers the same over REST as the tool's structured
    content."""
    sample = server.varied[::every]
    for arguments in sample:
        over_rest = _post(
            server.port, _REST_PATH, json.dumps(arguments), {"Content-Type": "application/json"}
        )
        over_mcp = _post(server.port, "/mcp", tool_call(_TOOL, arguments), modern_headers(_TOOL))
        if over_rest != over_mcp["result"]["structuredContent"]:
            raise RuntimeError(f"REST and MCP answers differ for {arguments}")
    print(f"  answers: REST body == MCP structuredContent for {len(sample)} sampled queries")


def run(options: argparse.Namespace, root: Path) -> None:
    fleet = Fleet(root)
    varied = build_search_index(root / "index", options.queries)
    print(
        f"REST vs MCP search on one gno-trio serve (mcp-docs index, {len(varied)} varied queries), "
        f"closed loop c={options.connections}, {options.rounds} rounds x {options.duration:g} s"
    )
    results: dict[str, list[dict[str, Any]]] = {leg: [] for leg in LEGS}
    timeout = options.duration + 120
    whole = Window()
    try:
        server = start_search_server(fleet, "serve", root / "index", varied)
        check_same_answers(server)
        settings = {"mode": "closed", "connections": options.connections}
        for round_index, order in enumerate(rotations(list(LEGS), options.rounds)):
            window = Window()
            for leg in order:
                run_load(job_for(leg, server, **settings, duration=options.warmup), timeout)
                results[leg].append(
                    run_load(job_for(leg, server, **settings, duration=options.duration), timeout)
                )
            print(f"  round {round_index + 1} ({' '.join(order)}): {window.close().line()}")
    finally:
        fleet.stop_all()
    whole.close()
    print(
        f"\n  {'leg':<5} {'req/s median (min-max)':<26} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'srv CPU us/req':>22} {'cli cores':>9} {'others':>7} {'failed':>6}"
    )
    for leg in LEGS:
        runs = results[leg]
        print(
            f"  {leg:<5} {spread([r['rps'] for r in runs], 0):<26} "
            f"{statistics.median(r['latency_ms']['p50'] for r in runs):>8.1f} "
            f"{statistics.median(r['latency_ms']['p99'] for r in runs):>8.1f} "
            f"{spread([r['server_cpu_us_per_req'] for r in runs], 0):>22} "
            f"{statistics.median(cores(r, 'client_cpu_s') for r in runs):>9.2f} "
            f"{statistics.median(cores(r, 'others_cpu_s') for r in runs):>7.2f} "
            f"{sum(failures(r) for r in runs):>6}"
        )
    ratio = statistics.median(r["rps"] for r in results["rest"]) / max(
        1e-9, statistics.median(r["rps"] for r in results["mcp"])
    )
    print(f"  REST / MCP req/s (medians): {ratio:.2f}x")
    print(f"  whole run: {whole.line()}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up per run")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--queries", type=int, default=1000, help="varied queries (over the parse cache's 512)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-rest-api-") as scratch:
        run(options, Path(scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
