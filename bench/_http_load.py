"""The load client of ``bench_http.py``: raw HTTP/1.1 keep-alive over trio sockets.

Runs in its own process so its CPU is not the server's, and reports its own
CPU so a reader can tell whether the client was the bottleneck. It takes one
job as a JSON argument and prints one JSON line of results:

    python bench/_http_load.py '{"mode": "closed", "port": 8000, ...}'
    python bench/_http_load.py - < job.json

Modes:

* ``closed``: ``connections`` keep-alive connections, each sending requests
  back to back for ``duration`` seconds (closed loop): the one ``body``, or
  with ``bodies`` each connection cycles through them from its own offset. All
  connections are opened before the clock starts; with ``ports`` connection
  ``i`` goes to ``ports[i % len(ports)]`` (several gateways behind one
  client, as a round-robin balancer spreads them). Latencies are kept per
  HTTP status, so under overload the admitted requests (200) and the shed
  ones (429) are reported separately.
* ``open``: requests sent at a fixed ``rate`` for ``duration`` seconds over a
  pool of keep-alive connections, latency counted from when each was due.
* ``storm``: ``count`` requests over fresh connections, ``concurrency`` at a
  time; each connection sends its request, waits ``hold_ms`` (a range), then
  closes without reading, while the tool on the server is still running.

The HTTP parsing is deliberately minimal (status, ``Content-Length``, chunked
bodies, ``Connection: close``): the client should cost far less than the
server per request.
"""

from __future__ import annotations

import collections
import contextlib
import json
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import trio
from _common import machine_busy_s, tree_cpu_s

_CONNECT_PARALLELISM = 64


def build_request(job: dict[str, Any], body_text: str | None = None) -> bytes:
    """The full request bytes (head and body) from the job's path, headers and body."""
    body: bytes = (job["body"] if body_text is None else body_text).encode()
    lines = [f"POST {job.get('path', '/mcp')} HTTP/1.1", f"Host: 127.0.0.1:{job['port']}"]
    lines.extend(f"{name}: {value}" for name, value in job.get("headers", {}).items())
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def build_requests(job: dict[str, Any]) -> list[bytes]:
    """Every request of a job: one per entry of ``bodies`` (varied calls), else ``body``."""
    bodies: list[str] | None = job.get("bodies")
    if not bodies:
        return [build_request(job)]
    return [build_request(job, body) for body in bodies]


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuWindow:
    """CPU counters at the start of a measured window."""

    pids: list[int]
    server: float = 0.0
    client: float = 0.0
    machine: float = 0.0

    def __post_init__(self) -> None:
        self.server = tree_cpu_s(self.pids)
        self.client = own_cpu_seconds()
        self.machine = machine_busy_s()

    def close(self) -> dict[str, float]:
        """Seconds of CPU used since the window opened: server, client, everyone else."""
        server = tree_cpu_s(self.pids) - self.server
        client = own_cpu_seconds() - self.client
        machine = machine_busy_s() - self.machine
        return {
            "server_cpu_s": round(server, 3),
            "client_cpu_s": round(client, 3),
            "others_cpu_s": round(max(0.0, machine - server - client), 3),
        }


class ServerClosed(Exception):
    """The server closed the connection before a whole response arrived."""


class Connection:
    """One keep-alive connection and its unread bytes."""

    __slots__ = ("buffer", "retry_after", "stream")

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.retry_after = 0.0  # the last response's Retry-After in seconds (0 when absent)

    async def _fill(self) -> None:
        chunk = await self.stream.receive_some(65536)
        if not chunk:
            raise ServerClosed
        self.buffer += chunk

    async def exchange(self, request: bytes) -> tuple[int, bool]:
        """Send ``request``, read its whole response; (status, connection still usable)."""
        await self.stream.send_all(request)
        buffer = self.buffer
        while (end := buffer.find(b"\r\n\r\n")) < 0:
            await self._fill()
        head = bytes(buffer[:end]).lower()
        status = int(head[9:12])
        self.retry_after = 0.0
        if (marker := head.find(b"\r\nretry-after:")) >= 0:
            stop = head.find(b"\r\n", marker + 2)
            with contextlib.suppress(ValueError):
                self.retry_after = float(head[marker + 14 : stop if stop >= 0 else len(head)])
        start = end + 4
        position = head.find(b"\r\ncontent-length:")
        if position >= 0:
            stop = head.find(b"\r\n", position + 2)
            length = int(head[position + 17 : stop if stop >= 0 else len(head)])
            while len(buffer) < start + length:
                await self._fill()
            del buffer[: start + length]
        elif b"\r\ntransfer-encoding: chunked" in head:
            del buffer[:start]
            await self._skip_chunks()
        else:  # body ends at EOF
            try:
                while True:
                    await self._fill()
            except ServerClosed:
                pass
            return status, False
        return status, b"\r\nconnection: close" not in head

    async def _skip_chunks(self) -> None:
        buffer = self.buffer
        while True:
            while (line_end := buffer.find(b"\r\n")) < 0:
                await self._fill()
            size = int(bytes(buffer[:line_end]).split(b";", 1)[0], 16)
            needed = line_end + 2 + size + 2
            while len(buffer) < needed:
                await self._fill()
            del buffer[:needed]
            if size == 0:
                return

    async def close(self) -> None:
        await self.stream.aclose()


def per_request_us(seconds: float, requests: int) -> float | None:
    return round(seconds / requests * 1e6, 1) if requests else None


def summary_ms(samples: list[float]) -> dict[str, float | int]:
    """Count and percentiles (nearest rank) of latencies given in seconds, in ms."""
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)

    def at(pct: float) -> float:
        index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
        return round(ordered[index] * 1000, 3)

    return {
        "n": len(ordered),
        "p50": at(50),
        "p90": at(90),
        "p99": at(99),
        "max": round(ordered[-1] * 1000, 3),
    }


@dataclass
class Tallies:
    """Latencies by HTTP status and failure counts, shared by the tasks of one run."""

    latencies: dict[int, list[float]] = field(default_factory=dict)
    errors: int = 0
    reconnects: int = 0


async def _connect(port: int, limiter: trio.CapacityLimiter) -> Connection:
    async with limiter:
        with trio.fail_after(30):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
    return Connection(stream)


async def run_closed(job: dict[str, Any]) -> dict[str, Any]:
    """Each connection sends its next request as soon as the last one was answered."""
    ports: list[int] = job.get("ports") or [job["port"]]
    # each gateway gets its own Host header (a gateway refuses another's host name)
    by_port = {to: build_requests({**job, "port": to}) for to in ports}
    connections: int = job["connections"]
    duration: float = job["duration"]
    pids: list[int] = job.get("server_pids", [])
    tallies = Tallies()
    limiter = trio.CapacityLimiter(_CONNECT_PARALLELISM)
    opened: list[tuple[int, Connection]] = []

    async def open_one(to: int) -> None:
        opened.append((to, await _connect(to, limiter)))

    async with trio.open_nursery() as nursery:
        for index in range(connections):
            nursery.start_soon(open_one, ports[index % len(ports)])

    deadline = 0.0
    honour_retry_after = bool(job.get("honour_retry_after"))

    async def worker(to: int, connection: Connection, offset: int) -> None:
        latencies = tallies.latencies
        clock = time.perf_counter
        turn = offset
        requests = by_port[to]
        while clock() < deadline:
            request = requests[turn % len(requests)]
            turn += 1
            started = clock()
            try:
                status, usable = await connection.exchange(request)
            except (ServerClosed, trio.BrokenResourceError, OSError, ValueError):
                tallies.errors += 1
                usable = False
            else:
                elapsed = clock() - started
                bucket = latencies.get(status)
                if bucket is None:
                    bucket = latencies[status] = []
                bucket.append(elapsed)
                if honour_retry_after and status == 429 and connection.retry_after:
                    # a polite client: back off as told, but never past the run's end
                    await trio.sleep(min(connection.retry_after, max(0.0, deadline - clock())))
            if not usable:
                await connection.close()
                tallies.reconnects += 1
                connection = await _connect(to, limiter)
        await connection.close()

    window = CpuWindow(pids)
    started = time.perf_counter()
    deadline = started + duration
    async with trio.open_nursery() as nursery:
        for index, (to, connection) in enumerate(opened):
            # Each connection walks the requests from its own place, so the
            # server sees them mixed rather than in lockstep.
            nursery.start_soon(worker, to, connection, index * 7)
    elapsed = time.perf_counter() - started
    cpu = window.close()
    everything = [value for bucket in tallies.latencies.values() for value in bucket]
    completed = len(everything)
    return {
        "mode": "closed",
        "connections": connections,
        "elapsed_s": round(elapsed, 3),
        "completed": completed,
        "rps": round(completed / elapsed, 1) if elapsed else 0.0,
        "errors": tallies.errors,
        "reconnects": tallies.reconnects,
        "latency_ms": summary_ms(everything),
        "by_status": {str(code): summary_ms(bucket) for code, bucket in tallies.latencies.items()},
        **cpu,
        "server_cpu_us_per_req": per_request_us(cpu["server_cpu_s"], completed),
        "client_cpu_us_per_req": per_request_us(cpu["client_cpu_s"], completed),
    }


async def run_open(job: dict[str, Any]) -> dict[str, Any]:
    """Requests sent at a fixed ``rate`` whatever the answers (open loop).

    A request goes out on an idle keep-alive connection from a pool of
    ``connections`` (a new one is opened when none is idle). Its latency
    runs from the moment it was due, so a client that falls behind still
    charges the wait to the server instead of hiding it.
    """
    port: int = job["port"]
    request = build_request(job)
    rate: float = job["rate"]
    total = max(1, round(rate * job["duration"]))
    pids: list[int] = job.get("server_pids", [])
    tallies = Tallies()
    limiter = trio.CapacityLimiter(_CONNECT_PARALLELISM)
    # FIFO, so every pooled connection is used in turn and none idles into
    # the server's keep-alive timeout.
    idle: collections.deque[Connection] = collections.deque()
    extra_connections = 0

    async def open_one() -> None:
        idle.append(await _connect(port, limiter))

    async with trio.open_nursery() as nursery:
        for _ in range(job["connections"]):
            nursery.start_soon(open_one)

    async def one(due: float, connection: Connection) -> None:
        try:
            status, usable = await connection.exchange(request)
        except (ServerClosed, trio.BrokenResourceError, OSError, ValueError):
            tallies.errors += 1
            usable = False
        else:
            tallies.latencies.setdefault(status, []).append(trio.current_time() - due)
        if usable:
            idle.append(connection)
        else:
            await connection.close()

    window = CpuWindow(pids)
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        first = trio.current_time()
        for index in range(total):
            due = first + index / rate
            await trio.sleep_until(due)
            if idle:
                connection = idle.popleft()
            else:
                extra_connections += 1
                connection = await _connect(port, limiter)
            nursery.start_soon(one, due, connection)
    elapsed = time.perf_counter() - started
    cpu = window.close()
    for connection in idle:
        await connection.close()
    everything = [value for bucket in tallies.latencies.values() for value in bucket]
    return {
        "mode": "open",
        "rate": rate,
        "elapsed_s": round(elapsed, 3),
        "completed": len(everything),
        "rps": round(len(everything) / elapsed, 1) if elapsed else 0.0,
        "errors": tallies.errors,
        "extra_connections": extra_connections,
        "latency_ms": summary_ms(everything),
        "by_status": {str(code): summary_ms(bucket) for code, bucket in tallies.latencies.items()},
        **cpu,
    }


async def run_storm(job: dict[str, Any]) -> dict[str, Any]:
    """Send, wait a moment, hang up: ``count`` times, ``concurrency`` at a time."""
    port: int = job["port"]
    request = build_request(job)
    count: int = job["count"]
    concurrency: int = job["concurrency"]
    hold_low, hold_high = (value / 1000.0 for value in job["hold_ms"])
    pids: list[int] = job.get("server_pids", [])
    rng = random.Random(job.get("seed", 1))
    remaining = count
    sent = 0
    errors = 0

    async def worker() -> None:
        nonlocal remaining, sent, errors
        while remaining > 0:
            remaining -= 1
            try:
                with trio.fail_after(30):
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                try:
                    await stream.send_all(request)
                    sent += 1
                    await trio.sleep(rng.uniform(hold_low, hold_high))
                finally:
                    await stream.aclose()
            except (OSError, trio.BrokenResourceError, trio.TooSlowError):
                errors += 1

    window = CpuWindow(pids)
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    elapsed = time.perf_counter() - started
    return {
        "mode": "storm",
        "count": count,
        "sent": sent,
        "errors": errors,
        "elapsed_s": round(elapsed, 3),
        **window.close(),
    }


def main(argv: list[str]) -> int:
    # "-" reads the job from stdin (a job with many request bodies outgrows argv).
    job: dict[str, Any] = json.loads(sys.stdin.read() if argv[0] == "-" else argv[0])
    runners = {"closed": run_closed, "open": run_open, "storm": run_storm}
    result = trio.run(runners[job["mode"]], job)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
