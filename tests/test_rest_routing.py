"""The gateway's routing seam: ``/api/...`` reaches the REST API, other paths the pages.

Against the real listener: the REST API answers JSON, an unknown API path is
a JSON 404, a known one asked with another method is 405 with ``Allow``, and
a gateway serving no pages still answers 404 outside ``/mcp`` and ``/api/``.
"""

from __future__ import annotations

import httpx

from tests.http_gateway_support import running_gateway
from tests.mcp_echo_app import build_app as build_echo_app


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
