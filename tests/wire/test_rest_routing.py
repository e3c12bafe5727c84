"""The gateway's routing seam: ``/api/...`` reaches the REST API, other paths the pages.

Against the real listener: the REST API answers JSON, an unknown API path is
a JSON 404, a known one asked with another method is 405 with ``Allow``, and
a gateway serving no pages still answers 404 outside ``/mcp`` and ``/api/``.
"""

from __future__ import annotations

import json

import httpx
import trio

from gno_trio.config import GatewayLimits
from tests.support.http_gateway_support import modern_headers, modern_params, rpc, running_gateway
from tests.support.mcp_echo_app import build_app as build_echo_app


async def test_api_paths_reach_the_rest_api_and_other_paths_stay_404() -> None:
    async with running_gateway(build_echo_app()) as running, httpx.AsyncClient() as client:
        health = await client.get(running.base + "/api/health")
        assert health.status_code == 200
        assert health.json() == {"ok": True}
        missing = await client.get(running.base + "/api/no-such-route")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "NOT_FOUND"
        wrong = await client.delete(running.base + "/api/health")
        assert wrong.status_code == 405
        assert wrong.headers["allow"] == "GET"
        assert wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
        page = await client.get(running.base + "/")
        assert page.status_code == 404


async def test_an_event_stream_holds_no_request_slot_and_ends_at_drain() -> None:
    one_slot = GatewayLimits(
        max_requests_per_minute=100_000, max_concurrent_requests=1, max_queued_requests=0
    )
    async with (
        running_gateway(build_echo_app(), limits=one_slot) as running,
        httpx.AsyncClient() as client,
    ):
        with trio.fail_after(60):
            async with client.stream("GET", running.base + "/api/events") as stream:
                lines = stream.aiter_lines()
                assert await anext(lines) == "event: ready"
                assert json.loads((await anext(lines))[6:]) == {"changes": False, "jobs": False}
                # The one request slot is free while the stream is open.
                params = modern_params(name="echo", arguments={"text": "hi"})
                echoed = await client.post(
                    running.url,
                    json=rpc("tools/call", params),
                    headers=modern_headers("tools/call", "echo"),
                )
                assert echoed.status_code == 200
                running.drain.trigger()
                rest = [line async for line in lines if line]  # the stream ends at drain
                assert rest[-2:] == ["event: end", 'data: {"reason":"draining"}']


async def test_rest_refusals_at_the_boundary_use_the_rest_error_body() -> None:
    three = GatewayLimits(max_requests_per_minute=3)
    async with (
        running_gateway(build_echo_app(), limits=three) as running,
        httpx.AsyncClient() as client,
    ):
        for _ in range(3):
            assert (await client.get(running.base + "/api/health")).status_code == 200
        limited = await client.get(running.base + "/api/health")
        assert limited.status_code == 429
        assert limited.json()["error"]["code"] == "RATE_LIMITED"
        assert "retry-after" in limited.headers
