"""The gateway's external boundary on the real listener: statuses, headers and closed bodies.

Every refusal here happens before JSON parsing or dispatch, so besides the
status and body each test checks that no request reached the MCP app and that
the server keeps serving a well-behaved client afterwards.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from gno_trio.config import GatewayLimits
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.http_gateway_support import (
    ACCEPT_BOTH,
    RELAXED,
    RunningGateway,
    assert_boundary_error,
    initialize_body,
    legacy_headers,
    mcp_head_for,
    modern_headers,
    modern_params,
    raw_exchange,
    rpc,
    running_gateway,
)
from tests.support.mcp_echo_app import build_app


class CountingApp:
    """The echo app, counting what reaches dispatch."""

    def __init__(self) -> None:
        self.app = build_app()
        self.dispatched = 0
        inner = self.app.handle_request

        async def counted(method: str, params: Any, ctx: Any) -> Any:
            self.dispatched += 1
            return await inner(method, params, ctx)

        self.app.handle_request = counted  # type: ignore[method-assign]


@asynccontextmanager
async def gateway(**overrides: Any) -> AsyncIterator[tuple[RunningGateway, CountingApp]]:
    counting = CountingApp()
    settings = GatewaySettings(port=0, limits=overrides.pop("limits", RELAXED))
    async with running_gateway(counting.app, settings, **overrides) as running:
        yield running, counting


def discover() -> dict[str, Any]:
    return rpc("server/discover", modern_params())


async def served(client: httpx.AsyncClient, url: str, **headers: str) -> httpx.Response:
    return await client.post(
        url, headers={**modern_headers("server/discover"), **headers}, json=discover()
    )


# -- Host, Origin, peer --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("host", "evil.example.com"),
        ("host", "127.0.0.1:1"),
        ("origin", "http://evil.example.com"),
        ("origin", "null"),
    ],
)
async def test_forged_host_or_origin_gets_403_before_anything_runs(header: str, value: str) -> None:
    async with gateway() as (running, counting), httpx.AsyncClient() as client:
        refused = await served(client, running.url, **{header: value})
        assert_boundary_error(refused.status_code, refused.content, 403)
        assert refused.json()["error"]["message"] == "Forbidden"
        assert counting.dispatched == 0
        # The same request with the real Host / a loopback Origin is served.
        port = running.endpoint.port
        for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
            ok = await served(client, running.url, origin=origin)
            assert ok.status_code == 200, ok.text
        ok = await served(client, running.url, host=f"localhost:{port}")
        assert ok.status_code == 200


async def test_forwarded_headers_never_replace_the_socket_peer() -> None:
    limits = GatewayLimits(max_requests_per_minute=3)
    async with gateway(limits=limits) as (running, _), httpx.AsyncClient() as client:
        for spoofed in ("203.0.113.7", "198.51.100.9", "192.0.2.44"):
            response = await served(
                client,
                running.url,
                **{"x-forwarded-for": spoofed, "forwarded": f"for={spoofed}", "x-real-ip": spoofed},
            )
            assert response.status_code == 200
        # All three counted against 127.0.0.1: the fourth is over the limit.
        limited = await served(client, running.url, **{"x-forwarded-for": "203.0.113.99"})
        assert_boundary_error(limited.status_code, limited.content, 429)


async def test_rate_limit_answers_429_with_retry_after_on_every_path() -> None:
    limits = GatewayLimits(max_requests_per_minute=2)
    async with gateway(limits=limits) as (running, counting), httpx.AsyncClient() as client:
        assert (await served(client, running.url)).status_code == 200
        assert (await client.get(running.endpoint.status_url)).status_code == 200
        for attempt in (
            await served(client, running.url),
            await client.get(running.endpoint.status_url),
            await client.delete(running.url),
        ):
            assert_boundary_error(attempt.status_code, attempt.content, 429)
            assert attempt.json()["error"]["message"] == "Too many requests"
            assert 1 <= int(attempt.headers["retry-after"]) <= 60
        assert counting.dispatched == 1


# -- bearer token ----------------------------------------------------------------------------


async def test_missing_token_file_is_created_private_and_required(tmp_path: Path) -> None:
    token_path = tmp_path / "secrets" / "mcp-token"
    async with gateway(token_file=token_path) as (running, counting):
        mode = stat.S_IMODE(os.stat(token_path).st_mode)
        assert mode == 0o600
        token = token_path.read_text("ascii")
        assert token.endswith("\n") and len(token.strip()) == 64  # 256 bits, hex
        int(token, 16)
        async with httpx.AsyncClient() as client:
            for authorization in (None, "Bearer wrong-token-wrong-token-wrong-token", "Basic x"):
                extra = {"authorization": authorization} if authorization else {}
                refused = await served(client, running.url, **extra)
                assert_boundary_error(refused.status_code, refused.content, 401)
                assert refused.headers["www-authenticate"] == "Bearer"
                assert token.strip() not in refused.text
            ok = await served(client, running.url, authorization=f"Bearer {token.strip()}")
            assert ok.status_code == 200
            ok = await served(client, running.url, authorization=f"bearer   {token.strip()}")
            assert ok.status_code == 200
        assert counting.dispatched == 2


def write_token(path: Path, token: str, mode: int = 0o600) -> None:
    path.write_text(token + "\n", "ascii")
    os.chmod(path, mode)


async def open_session(client: httpx.AsyncClient, url: str, token: str) -> str:
    response = await client.post(
        url,
        headers={**legacy_headers(), "authorization": f"Bearer {token}"},
        json=initialize_body(),
    )
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


async def test_token_rotation_revokes_sessions_and_the_old_token(tmp_path: Path) -> None:
    token_path = tmp_path / "token"
    first, second = "a" * 40, "b" * 40
    write_token(token_path, first)
    async with gateway(token_file=token_path) as (running, _), httpx.AsyncClient() as client:
        session = await open_session(client, running.url, first)
        ping = rpc("ping", request_id=7)
        alive = await client.post(
            running.url,
            headers={**legacy_headers(session), "authorization": f"Bearer {first}"},
            json=ping,
        )
        assert alive.status_code == 200 and alive.json()["result"] == {}

        write_token(token_path, second)
        old = await client.post(
            running.url,
            headers={**legacy_headers(session), "authorization": f"Bearer {first}"},
            json=ping,
        )
        assert_boundary_error(old.status_code, old.content, 401)
        # The new token is accepted, but the session created under the old one is gone.
        revoked = await client.post(
            running.url,
            headers={**legacy_headers(session), "authorization": f"Bearer {second}"},
            json=ping,
        )
        assert revoked.status_code == 404
        assert revoked.json()["error"]["code"] == -32001
        assert await open_session(client, running.url, second)


@pytest.mark.parametrize("breakage", ["deleted", "loosened", "garbage", "symlink"])
async def test_broken_token_file_refuses_everyone_with_503(tmp_path: Path, breakage: str) -> None:
    token_path = tmp_path / "token"
    token = "c" * 48
    write_token(token_path, token)
    async with gateway(token_file=token_path) as (running, counting), httpx.AsyncClient() as client:
        session = await open_session(client, running.url, token)
        if breakage == "deleted":
            token_path.unlink()
        elif breakage == "loosened":
            os.chmod(token_path, 0o644)
        elif breakage == "garbage":
            write_token(token_path, "short")
        else:
            real = tmp_path / "real-token"
            write_token(real, token)
            token_path.unlink()
            token_path.symlink_to(real)
        refused = await served(client, running.url, authorization=f"Bearer {token}")
        assert_boundary_error(refused.status_code, refused.content, 503)
        assert refused.json()["error"]["message"] == "Resident runtime unavailable"
        # Repairing the file lets the token in again; the old session stays revoked.
        if token_path.is_symlink() or token_path.exists():
            token_path.unlink()
        write_token(token_path, token)
        again = await client.post(
            running.url,
            headers={**legacy_headers(session), "authorization": f"Bearer {token}"},
            json=rpc("ping", request_id=2),
        )
        assert again.status_code == 404
        assert (
            await served(client, running.url, authorization=f"Bearer {token}")
        ).status_code == 200
        assert counting.dispatched == 2  # the initialize and the last discover


# -- bodies ----------------------------------------------------------------------------------


async def test_declared_body_over_one_mebibyte_is_413_before_reading() -> None:
    async with gateway(limits=GatewayLimits()) as (running, counting):
        response = await raw_exchange(
            running.endpoint.port,
            mcp_head_for(running.endpoint.port, {"Content-Length": "1048577"}),
        )
        assert_boundary_error(response.status, response.body, 413)
        assert response.json()["error"]["message"] == "Request body too large"
        assert response.headers.get("connection") == "close"
        assert counting.dispatched == 0


async def test_streamed_body_over_the_limit_is_413() -> None:
    async with gateway(limits=GatewayLimits()) as (running, counting):
        port = running.endpoint.port
        piece = b"x" * (256 * 1024)
        chunks = [b"%x\r\n%b\r\n" % (len(piece), piece) for _ in range(5)]  # 1.25 MiB
        response = await raw_exchange(
            port, mcp_head_for(port, {"Transfer-Encoding": "chunked"}), [*chunks, b"0\r\n\r\n"]
        )
        assert_boundary_error(response.status, response.body, 413)
        # A body just under the limit is read and parsed (and is not JSON).
        async with httpx.AsyncClient() as client:
            near = await client.post(
                running.url, headers=legacy_headers(), content=b" " * (1024 * 1024 - 2) + b"{}"
            )
        assert near.status_code == 400 and near.json()["error"]["code"] == -32600
        assert counting.dispatched == 0


async def test_slow_drip_body_times_out_while_others_are_served() -> None:
    async with gateway(body_timeout=0.6) as (running, counting):
        port = running.endpoint.port
        body = json.dumps(discover()).encode()
        head = mcp_head_for(
            port, {"Content-Length": str(len(body)), **modern_headers("server/discover")}
        )
        results: dict[str, Any] = {}

        async def drip() -> None:
            parts = [body[i : i + 1] for i in range(12)]
            results["drip"] = await raw_exchange(port, head, parts, delay=0.1)

        async with trio.open_nursery() as nursery, httpx.AsyncClient() as client:
            nursery.start_soon(drip)
            await trio.sleep(0.1)
            with trio.fail_after(30):
                assert (await served(client, running.url)).status_code == 200
            assert "drip" not in results  # served while the drip still went on
        dripped = results["drip"]
        assert dripped.status == 408
        assert dripped.json() == {
            "jsonrpc": "2.0",
            "error": {"code": -32000, "message": "Request body timeout"},
            "id": None,
        }
        assert counting.dispatched == 1


# -- malformed requests ------------------------------------------------------------------------


async def test_malformed_posts_get_their_statuses_and_reach_no_tool() -> None:
    async with gateway() as (running, counting), httpx.AsyncClient() as client:
        url = running.url
        cases: list[tuple[dict[str, str], bytes, int, int | None]] = [
            (legacy_headers(), b"{not json", 400, -32700),
            (legacy_headers(), b"\xff\xfe", 400, -32700),
            (legacy_headers(), b"[]", 400, -32600),
            (legacy_headers(), json.dumps([initialize_body()]).encode(), 400, -32600),
            (modern_headers("tools/list"), json.dumps([discover()]).encode(), 400, -32600),
            (legacy_headers(), b'"a string"', 400, -32600),
            (legacy_headers(), b'{"jsonrpc":"1.0","id":1,"method":"ping"}', 400, -32600),
            ({**legacy_headers(), "content-type": "text/plain"}, b"{}", 415, -32600),
            ({"accept": ACCEPT_BOTH}, b"{}", 415, -32600),
            ({**legacy_headers(), "accept": "application/json"}, b"{}", 406, -32600),
            ({**legacy_headers(), "accept": "text/event-stream"}, b"{}", 406, -32600),
        ]
        for headers, body, status, code in cases:
            response = await client.post(url, headers=headers, content=body)
            assert response.status_code == status, (headers, body, response.text)
            assert response.json()["error"]["code"] == code
            # The id is echoed only when it could be read.
            assert response.json()["id"] == (1 if b'"1.0"' in body else None)
        put = await client.put(url, content=b"{}")
        assert put.status_code == 405
        assert put.headers["allow"] == "GET, POST, DELETE"
        missing = await client.get(running.base + "/elsewhere")
        assert missing.status_code == 404
        wildcard = await client.post(
            url, headers={**modern_headers("server/discover"), "accept": "*/*"}, json=discover()
        )
        assert wildcard.status_code == 200
        assert counting.dispatched == 1
