"""Soak: clients that ask for big answers and never read them, against ``gno-trio serve``.

Starts the real command (a subprocess, as a user would) over a throwaway
index of large documents, then:

1. **before**: a few ordinary requests, read in full; RSS of the server;
2. **during**: ``--clients`` sockets (receive buffer shrunk to 4 KiB, the way a
   stalled peer looks) each send one ``gno_multi_get {"pattern": "big/**",
   "maxBytes": 100000}`` and never read. While they sit there the script
   samples the server's RSS and admission counters and times an ordinary
   request from a well-behaved client;
3. **after**: the stalled clients hang up; RSS is sampled until it settles.

Printed: RSS before / peak during / after (MiB, with the after/before ratio),
peak active and queued requests, how long until every slot was free again,
the well-behaved client's latencies and statuses, and the size of one answer.

    python3 bench/soak_nonreaders.py [--clients 85] [--docs 150] [--doc-kb 120]
                                     [--hold 40] [--settle 20]

Noisy on a shared machine: RSS is stable, latencies are not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _common import free_port, tree_rss_kib  # noqa: E402

from gno_trio.config import load_config  # noqa: E402
from gno_trio.engine.store.config_file import save_config  # noqa: E402

GNO_SERVE = (sys.executable, "-m", "gno_trio", "serve", "--json")
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def rss_mib(pid: int) -> float:
    """The server's tree RSS (every process under it, summed)."""
    return tree_rss_kib([pid]) / 1024


def build_index(base: Path, docs: int, doc_kb: int) -> dict[str, str]:
    corpus = base / "corpus" / "big"
    corpus.mkdir(parents=True)
    paragraph = "The quick brown fox jumps over the lazy dog while notes pile up. "
    for i in range(docs):
        words = f"# Big document {i}\n\n" + paragraph * (doc_kb * 1024 // len(paragraph))
        (corpus / f"doc{i:04d}.md").write_text(words)
    env = {
        **os.environ,
        "GNO_CONFIG_DIR": str(base / "config"),
        "GNO_DATA_DIR": str(base / "data"),
        "GNO_CACHE_DIR": str(base / "cache"),
        "PYTHONPATH": str(REPO),
    }
    gno = [sys.executable, "-m", "gno_trio"]
    subprocess.run(
        [*gno, "collection", "add", str(base / "corpus"), "--name", "notes"],
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run([*gno, "update"], env=env, check=True, capture_output=True)
    # The soak measures slots and memory, not the rate limit: lift it.
    config_file = base / "config" / "index.yml"
    config = load_config(config_file)
    limits = attrs.evolve(config.gateway.limits, max_requests_per_minute=1_000_000)
    save_config(
        config_file, attrs.evolve(config, gateway=attrs.evolve(config.gateway, limits=limits))
    )
    return env


def multi_get_request(port: int) -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "gno_multi_get",
                "arguments": {"pattern": "big/**", "maxBytes": 100000},
                "_meta": ENVELOPE,
            },
        }
    ).encode()
    head = (
        "POST /mcp HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Accept: application/json, text/event-stream\r\n"
        "Content-Type: application/json\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\n"
        "Mcp-Method: tools/call\r\n"
        "Mcp-Name: gno_multi_get\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_one_answer(port: int, request: bytes) -> int:
    """Send ``request`` on a fresh connection and read the whole answer; its size in bytes."""
    with socket.create_connection(("127.0.0.1", port)) as reader:
        reader.sendall(request)
        data = bytearray()
        while b"\r\n\r\n" not in data:
            data += reader.recv(1 << 16)
        head, _, body = bytes(data).partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        received = len(body)
        while received < length:
            chunk = reader.recv(1 << 20)
            if not chunk:
                break
            received += len(chunk)
        return received


def ordinary(client: httpx.Client, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    reply = client.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "gno_search",
                "arguments": {"query": "fox", "limit": 3},
                "_meta": ENVELOPE,
            },
        },
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "gno_search",
        },
        timeout=60,
    )
    return time.perf_counter() - started, reply.status_code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=85)
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--doc-kb", type=int, default=120)
    parser.add_argument("--hold", type=float, default=40.0, help="seconds the stalled clients stay")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds to watch afterwards")
    options = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="gno-soak-"))
    process: subprocess.Popen[bytes] | None = None
    try:
        print(f"building an index of {options.docs} x {options.doc_kb} KiB documents ...")
        env = build_index(base, options.docs, options.doc_kb)
        process = subprocess.Popen(
            [*GNO_SERVE, "--port", str(free_port("soak_nonreaders"))],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        announced: dict[str, Any] = json.loads(process.stdout.readline())
        port, url, status_url = announced["port"], announced["url"], announced["statusUrl"]
        pid = process.pid
        request = multi_get_request(port)

        with httpx.Client() as client:
            answer_bytes = 0
            for _ in range(3):  # warm: imports, caches, one big answer read in full
                answer_bytes = read_one_answer(port, request)
                ordinary(client, url)
            time.sleep(1.0)
            before = rss_mib(pid)

            stalled = []
            for _ in range(options.clients):
                sink = socket.socket()
                sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sink.connect(("127.0.0.1", port))
                sink.sendall(request)
                stalled.append(sink)
            started = time.monotonic()
            peak = before
            peak_active = peak_queued = 0
            freed_after: float | None = None
            latencies: list[float] = []
            statuses: dict[int, int] = {}
            while time.monotonic() - started < options.hold:
                peak = max(peak, rss_mib(pid))
                transport = client.get(status_url, timeout=60).json()["transport"]
                peak_active = max(peak_active, transport["activeRequests"])
                peak_queued = max(peak_queued, transport["queuedRequests"])
                busy = transport["activeRequests"] + transport["queuedRequests"]
                if busy == 0 and freed_after is None and peak_active:
                    freed_after = time.monotonic() - started
                latency, status = ordinary(client, url)
                latencies.append(latency)
                statuses[status] = statuses.get(status, 0) + 1
                time.sleep(0.25)
            during = peak
            for sink in stalled:
                sink.close()
            settle_start = time.monotonic()
            samples = []
            while time.monotonic() - settle_start < options.settle:
                time.sleep(1.0)
                samples.append(rss_mib(pid))
            after = samples[-1]
            metrics = client.get(url.replace("/mcp", "/api/resident/metrics"), timeout=60).json()

        latencies.sort()
        p50 = latencies[len(latencies) // 2] * 1000 if latencies else float("nan")
        p95 = latencies[int(len(latencies) * 0.95)] * 1000 if latencies else float("nan")
        print(f"one multi_get answer: {answer_bytes / 1e6:.2f} MB")
        print(
            f"RSS before {before:.0f} MiB | peak during {during:.0f} MiB | "
            f"after {after:.0f} MiB (after/before {after / before:.2f})"
        )
        print(f"RSS while settling (1 s apart): {' '.join(f'{s:.0f}' for s in samples)}")
        print(f"peak active {peak_active}, peak queued {peak_queued} of {options.clients} stalled")
        freed = f"{freed_after:.1f} s" if freed_after is not None else "never"
        print(f"every slot free again after: {freed}")
        print(
            f"well-behaved client during the load: n={len(latencies)} p50={p50:.0f} ms "
            f"p95={p95:.0f} ms statuses={statuses}"
        )
        print(
            f"write timeouts counted by the server: {metrics['refusals'].get('write-timeout', 0)}"
        )
        return 0
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
