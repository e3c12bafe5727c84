"""The boundary under abuse: authentication before rate limiting, one loopback peer, WebSockets.

* A flood of requests without a valid token spends its own per-peer budget
  (401, then 429) and never the token holder's.
* Every address in 127.0.0.0/8 is the same peer: rotating source addresses
  does not buy more requests.
* A WebSocket upgrade passes the same boundary and is refused with a 4xx
  (never a 500), and the server goes on serving.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from gno_trio.config import GatewayLimits
from gno_trio.transports.http.boundary import FAILED_AUTH_PER_WINDOW
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.http_gateway_support import (
    RELAXED,
    assert_boundary_error,
    initialize_body,
    legacy_headers,
    modern_headers,
    modern_params,
    raw_exchange,
    request_head,
    rpc,
    running_gateway,
)
from tests.support.mcp_echo_app import build_app

TOKEN = "t" * 48


def _token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    os.chmod(path, 0o600)
    return path


async def _discover(client: httpx.AsyncClient, url: str, **headers: str) -> httpx.Response:
    return await client.post(
        url,
        json=rpc("server/discover", modern_params()),
        headers={**modern_headers("server/discover"), **headers},
    )


async def test_unauthenticated_flood_never_rate_limits_the_token_holder(tmp_path: Path) -> None:
    settings = GatewaySettings(
        port=0,
        limits=GatewayLimits(max_requests_per_minute=20),
        token_file=_token_file(tmp_path),
    )
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        statuses = []
        for attempt in range(125):
            wrong = {} if attempt % 2 else {"authorization": "Bearer " + "w" * 48}
            statuses.append((await _discover(client, running.url, **wrong)).status_code)
        assert statuses[:FAILED_AUTH_PER_WINDOW] == [401] * FAILED_AUTH_PER_WINDOW
        assert set(statuses[FAILED_AUTH_PER_WINDOW:]) == {429}
        refused = await _discover(client, running.url)
        assert_boundary_error(refused.status_code, refused.content, 429)
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        # The holder of the token, from the same peer, has its whole budget.
        for _ in range(20):
            served = await _discover(client, running.url, authorization=f"Bearer {TOKEN}")
            assert served.status_code == 200
        limited = await _discover(client, running.url, authorization=f"Bearer {TOKEN}")
        assert_boundary_error(limited.status_code, limited.content, 429)


async def test_rotating_loopback_source_addresses_shares_one_budget() -> None:
    settings = GatewaySettings(port=0, limits=GatewayLimits(max_requests_per_minute=6))
    async with running_gateway(build_app(), settings) as running:
        statuses = []
        for last in range(2, 10):
            transport = httpx.AsyncHTTPTransport(local_address=f"127.0.0.{last}")
            async with httpx.AsyncClient(transport=transport) as client:
                statuses.append((await _discover(client, running.url)).status_code)
        assert statuses == [200] * 6 + [429] * 2


def _upgrade_head(port: int, **extra: str) -> bytes:
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
        **extra,
    }
    return request_head("GET", "/mcp", headers)


@pytest.mark.parametrize(
    ("extra", "status"),
    [({}, 400), ({"Host": "evil.example.com"}, 403), ({"Origin": "http://evil.example.com"}, 403)],
)
async def test_websocket_upgrade_is_refused_with_4xx_after_the_boundary(
    extra: dict[str, str], status: int
) -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        port = running.endpoint.port
        reply = await raw_exchange(port, _upgrade_head(port, **extra))
        assert reply.status == status
        body: dict[str, Any] = reply.json()
        assert body["jsonrpc"] == "2.0" and body["id"] is None
        if status == 400:
            assert "WebSocket is not supported" in body["error"]["message"]
        assert (await _discover(client, running.url)).status_code == 200


async def test_websocket_upgrade_without_token_is_401(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, limits=RELAXED, token_file=_token_file(tmp_path))
    async with running_gateway(build_app(), settings) as running:
        port = running.endpoint.port
        with trio.fail_after(10):
            reply = await raw_exchange(port, _upgrade_head(port))
        assert_boundary_error(reply.status, reply.body, 401)


async def test_running_out_of_descriptors_refuses_but_revokes_nobody(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_path = _token_file(tmp_path)
    settings = GatewaySettings(port=0, limits=RELAXED, token_file=token_path)
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        opened = await client.post(
            running.url, headers={**legacy_headers(), **auth}, json=initialize_body()
        )
        session_id = opened.headers["mcp-session-id"]
        real_open = os.open

        def exhausted(path: Any, *args: Any, **kwargs: Any) -> int:
            if Path(path) == token_path:
                raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", exhausted)
        refused = await _discover(client, running.url, **auth)
        assert_boundary_error(refused.status_code, refused.content, 503)
        monkeypatch.setattr(os, "open", real_open)
        # Descriptors are back: the session opened before is still alive.
        ping = await client.post(
            running.url,
            headers={**legacy_headers(session_id), **auth},
            json=rpc("ping", request_id=5),
        )
        assert ping.status_code == 200 and ping.json()["result"] == {}
