"""The gateway speaks HTTP/1.1 only: an HTTP/2 client can neither switch to h2 nor pin slots.

MCP's Streamable HTTP needs nothing from HTTP/2, and an h2 stream whose
client grants a zero flow-control window never reaches a socket write, so
no write deadline can free the admission slot it holds. Each test here drives
the real listener with a real HTTP/2 client (the ``h2`` state machine over a
plain socket): prior knowledge with ``INITIAL_WINDOW_SIZE`` 0 and many
``tools/list`` streams, and an ``Upgrade: h2c`` request. Neither may hold a
slot; other callers are answered throughout.
"""

from __future__ import annotations

import json
from typing import Any

import h2.config
import h2.connection
import h2.settings
import httpx
import trio

from gno_trio.config import GatewayLimits
from gno_trio.transports.http.settings import STATUS_PATH, GatewaySettings
from tests.support.http_gateway_support import (
    RunningGateway,
    drain_until_closed,
    modern_headers,
    modern_params,
    rpc,
    running_gateway,
    wait_until_idle,
)
from tests.support.mcp_echo_app import build_app

SLOTS = 4
STREAMS = 3 * SLOTS
LIMITS = GatewayLimits(
    max_requests_per_minute=100_000,
    max_concurrent_requests=SLOTS,
    max_queued_requests=0,
    write_timeout_ms=500,
)
H2_PREFACE_ANSWER = b"\x00\x00"  # an h2 server's first bytes: the length of its SETTINGS frame


def _tools_list() -> tuple[list[tuple[str, str]], bytes]:
    body = json.dumps(rpc("tools/list", modern_params())).encode()
    headers = [(k, v) for k, v in modern_headers("tools/list").items()]
    headers.append(("content-length", str(len(body))))
    return headers, body


def stalling_h2_client() -> h2.connection.H2Connection:
    """A client that grants the server no window: no answer byte can ever be sent to it."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    client.update_settings(
        {
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0,
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000,
        }
    )
    return client


def open_streams(
    client: h2.connection.H2Connection, port: int, count: int, *, first_id: int = 1
) -> bytes:
    """``count`` POST /mcp tools/list streams on ``client``; the bytes to send."""
    headers, body = _tools_list()
    for index in range(count):
        stream_id = first_id + 2 * index
        client.send_headers(
            stream_id,
            [
                (":method", "POST"),
                (":path", "/mcp"),
                (":scheme", "http"),
                (":authority", f"127.0.0.1:{port}"),
                *headers,
            ],
        )
        client.send_data(stream_id, body, end_stream=True)
    return client.data_to_send()


async def _status(client: httpx.AsyncClient, running: RunningGateway) -> dict[str, Any]:
    document: dict[str, Any] = (await client.get(running.endpoint.status_url)).json()
    return document


async def _served(client: httpx.AsyncClient, running: RunningGateway) -> int:
    reply = await client.post(
        running.url, json=rpc("tools/list", modern_params()), headers=modern_headers("tools/list")
    )
    return reply.status_code


async def _first_bytes(stream: trio.SocketStream, limit: float = 5.0) -> bytes:
    with trio.fail_after(limit):
        return await stream.receive_some(65536)


async def test_prior_knowledge_h2_with_a_zero_window_holds_no_slot() -> None:
    settings = GatewaySettings(port=0, limits=LIMITS)
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        port = running.endpoint.port
        h2_client = stalling_h2_client()
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(open_streams(h2_client, port, STREAMS))
            first = await _first_bytes(stream)
            # While that client is still connected, every other caller is served.
            for _ in range(2 * SLOTS):
                assert await _served(client, running) == 200
            # The server answered in HTTP/1.1 (505) instead of with its SETTINGS frame.
            assert not first.startswith(H2_PREFACE_ANSWER)
            assert first.startswith(b"HTTP/1.1 505"), first[:80]
            idle = await wait_until_idle(client, running, timeout=5.0)
            assert idle["transport"]["activeRequests"] == 0
            with trio.fail_after(10):
                await drain_until_closed(stream)
        assert await _served(client, running) == 200
        assert (await _status(client, running))["transport"]["activeRequests"] == 0


async def test_an_h2c_upgrade_is_answered_in_http11_without_switching() -> None:
    settings = GatewaySettings(port=0, limits=LIMITS)
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        port = running.endpoint.port
        h2_client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        h2_client.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0}
        )
        settings_header = h2_client.initiate_upgrade_connection()
        assert settings_header is not None
        head = (
            f"GET {STATUS_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
            f"HTTP2-Settings: {settings_header.decode()}\r\n\r\n"
        ).encode()
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(head)
            first = await _first_bytes(stream)
            # Streams on the (would-be) upgraded connection, granting no window.
            await stream.send_all(open_streams(h2_client, port, STREAMS, first_id=3))
            for _ in range(2 * SLOTS):
                assert await _served(client, running) == 200
            await wait_until_idle(client, running, timeout=5.0)
            # The upgrade was ignored: the request was answered in HTTP/1.1.
            assert not first.startswith(b"HTTP/1.1 101"), first[:80]
            assert first.startswith(b"HTTP/1.1 200"), first[:80]
