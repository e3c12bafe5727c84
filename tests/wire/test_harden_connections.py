"""Every connection ends: after ``Connection: close``, when idle, when its client stops reading.

Also: descriptor exhaustion pauses ``accept`` (one log line, no traceback)
and serving resumes once descriptors free up. Each test drives the real
listener with raw sockets, so nothing a client library does hides the
server's behaviour.
"""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from gno_trio.config import GatewayLimits
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.http_gateway_support import (
    RELAXED,
    RunningGateway,
    drain_until_closed,
    mcp_head_for,
    modern_headers,
    modern_params,
    rpc,
    running_gateway,
    wait_until_idle,
)
from tests.support.mcp_echo_app import build_app

REPO_ROOT = Path(__file__).resolve().parents[2]


def _ping_request(port: int, *, close: bool) -> bytes:
    body = json.dumps(rpc("tools/list", modern_params())).encode()
    extra = {
        key: value for key, value in modern_headers("tools/list").items() if key.startswith("mcp-")
    }
    extra["Content-Length"] = str(len(body))
    if close:
        extra["Connection"] = "close"
    return mcp_head_for(port, extra) + body


async def _read_answer(stream: trio.SocketStream) -> bytes:
    """One complete response (head plus Content-Length body), leaving the stream open."""
    data = bytearray()
    while True:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end].decode("latin-1").lower()
            length = int(head.split("content-length:", 1)[1].split("\r\n", 1)[0])
            if len(data) >= head_end + 4 + length:
                return bytes(data)
        chunk = await stream.receive_some(65536)
        assert chunk, "the server closed before answering"
        data += chunk


async def _seconds_until_eof(stream: trio.SocketStream, limit: float) -> float:
    """How long after now the server closes the connection (fails past ``limit``)."""
    started = trio.current_time()
    with trio.fail_after(limit):
        await drain_until_closed(stream)
    return trio.current_time() - started


async def test_connection_close_is_honoured_within_a_second() -> None:
    async with running_gateway(build_app()) as running:
        port = running.endpoint.port
        for _ in range(3):  # a lucky first scheduling must not hide a race
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                await stream.send_all(_ping_request(port, close=True))
                with trio.fail_after(5):
                    answer = await _read_answer(stream)
                assert answer.startswith(b"HTTP/1.1 200")
                assert await _seconds_until_eof(stream, 1.0) < 1.0


async def test_idle_keep_alive_connection_is_closed_after_the_timeout() -> None:
    limits = attrs.evolve(RELAXED, keep_alive_timeout_ms=600)
    settings = GatewaySettings(port=0, limits=limits)
    async with running_gateway(build_app(), settings) as running:
        port = running.endpoint.port
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            for _ in range(2):  # the connection is reused while the client is active
                await stream.send_all(_ping_request(port, close=False))
                with trio.fail_after(5):
                    assert (await _read_answer(stream)).startswith(b"HTTP/1.1 200")
            waited = await _seconds_until_eof(stream, 5.0)
        assert 0.4 < waited < 3.0


async def _status(client: httpx.AsyncClient, running: RunningGateway) -> dict[str, Any]:
    document: dict[str, Any] = (await client.get(running.endpoint.status_url)).json()
    return document


async def test_a_client_that_stops_reading_loses_its_connection_and_slots() -> None:
    limits = GatewayLimits(
        max_requests_per_minute=100_000,
        max_concurrent_requests=1,
        max_queued_requests=0,
        write_timeout_ms=500,
    )
    settings = GatewaySettings(port=0, limits=limits)
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        port = running.endpoint.port
        body = json.dumps(
            rpc(
                "tools/call",
                modern_params(name="echo", arguments={"text": "x" * 1000, "repeat": 8000}),
            )
        ).encode()
        headers = {
            k: v for k, v in modern_headers("tools/call", "echo").items() if k.startswith("mcp-")
        }
        headers["Content-Length"] = str(len(body))
        sink = socket.socket()
        sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(sink))
        async with stream:
            await stream.socket.connect(("127.0.0.1", port))
            await stream.send_all(mcp_head_for(port, headers) + body)
            # The 16 MB answer cannot fit the socket buffers: the request holds the
            # only slot while the server waits for this client to read.
            with trio.fail_after(5):
                while (await _status(client, running))["transport"]["activeRequests"] == 0:
                    await trio.sleep(0.05)
            busy = await client.post(
                running.url,
                json=rpc("tools/list", modern_params()),
                headers=modern_headers("tools/list"),
            )
            assert busy.status_code == 429
            # Within the write deadline (plus scheduling slack) the slot is back.
            await wait_until_idle(client, running, timeout=5.0)
            served = await client.post(
                running.url,
                json=rpc("tools/list", modern_params()),
                headers=modern_headers("tools/list"),
            )
            assert served.status_code == 200
            metrics = (await client.get(running.base + "/api/resident/metrics")).json()
            assert metrics["refusals"].get("write-timeout", 0) >= 1
            # The server really closed the socket: draining it ends in EOF or a reset.
            with trio.fail_after(10):
                received = await drain_until_closed(stream)
            assert received < len(body) * 8000


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


async def test_descriptor_exhaustion_pauses_accept_quietly_then_serves(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    env = {
        "GNO_CONFIG_DIR": str(tmp_path / "config"),
        "GNO_DATA_DIR": str(tmp_path / "data"),
        "GNO_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": str(REPO_ROOT),
        "PATH": "/usr/bin:/bin",
    }
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("wb") as stderr_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "gno_trio", "serve", "--port", "0", "--json"],
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            env=env,
            cwd=tmp_path,
            preexec_fn=_limit_descriptors,
        )
    assert process.stdout is not None
    try:
        announcement = json.loads(await trio.to_thread.run_sync(process.stdout.readline))
        port = announcement["port"]
        clients = []
        for _ in range(90):  # more than the server has descriptors for
            clients.append(await trio.open_tcp_stream("127.0.0.1", port))
        await trio.sleep(1.5)
        for stream in clients:
            await stream.aclose()
        async with httpx.AsyncClient() as client:
            with trio.fail_after(15):
                status = await client.get(announcement["statusUrl"])
        assert status.status_code == 200
    finally:
        process.terminate()
        await trio.to_thread.run_sync(process.wait)
    log = stderr_path.read_text()
    assert "Traceback" not in log, log
    assert 1 <= log.count("cannot accept connections") <= 2, log
