"""The guards shared by both eras, one test per guard on each leg.

Capacity, write gate and drain run against the real listener. Egress and the
authorization epoch need a LAN or remote socket peer, which a test machine
usually cannot produce, so those drive the gateway's ASGI app in memory with
a chosen ``scope["client"]`` (everything after the socket is the real code);
one extra test uses a real non-loopback socket when the machine has an
address to connect to itself on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from gno_trio.config import GatewayLimits
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.transports.http.asgi import GatewayApp
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.server import open_listening_socket
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.guarded_gateway import (
    AUTH,
    TOKEN,
    daemon_settings,
    remote_gateway,
    set_policy,
)
from tests.support.http_gateway_support import (
    RELAXED,
    asgi_call,
    assert_boundary_error,
    check_schema,
    engine_app,
    evals_dirs,  # noqa: F401
    gateway_app,
    initialize_body,
    legacy_headers,
    modern_headers,
    modern_params,
    non_loopback_address,
    rpc,
    running_gateway,
    wait_for_admitted,
    wait_for_requests,
    wait_until_idle,
)
from tests.support.mcp_echo_app import build_app as build_echo_app

Era = str
ERAS = ["legacy", "modern"]


# -- talking to either leg ---------------------------------------------------------------------


class Leg:
    """Send a request in one era: legacy opens a session first, modern sends envelopes."""

    def __init__(self, era: Era, post: Any) -> None:
        self.era = era
        self._post = post
        self.session: str | None = None

    async def open(self, extra: dict[str, str]) -> None:
        if self.era == "legacy":
            status, headers, _ = await self._post(legacy_headers() | extra, initialize_body())
            assert status == 200
            self.session = headers["mcp-session-id"]

    async def call(
        self, method: str, params: dict[str, Any], extra: dict[str, str], name: str | None = None
    ) -> tuple[int, dict[str, str], Any]:
        if self.era == "legacy":
            headers = legacy_headers(self.session) | extra
            return await self._post(headers, rpc(method, params, 5))  # type: ignore[no-any-return]
        headers = modern_headers(method, name) | extra
        return await self._post(headers, rpc(method, modern_params(**params), 5))  # type: ignore[no-any-return]


def http_leg(era: Era, client: httpx.AsyncClient, url: str) -> Leg:
    async def post(headers: dict[str, str], body: Any) -> tuple[int, dict[str, str], Any]:
        response = await client.post(url, headers=headers, content=json.dumps(body).encode())
        document = response.json() if response.content else None
        return response.status_code, dict(response.headers), document

    return Leg(era, post)


def asgi_leg(era: Era, gateway: GatewayApp, peer: str) -> Leg:
    async def post(headers: dict[str, str], body: Any) -> tuple[int, dict[str, str], Any]:
        response = await asgi_call(
            gateway, peer=peer, headers=headers, body=json.dumps(body).encode()
        )
        return response.status, response.headers, response.json() if response.body else None

    return Leg(era, post)


# -- capacity and runtime admission ------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_capacity_refuses_past_active_plus_queued(era: Era) -> None:
    limits = GatewayLimits(
        max_requests_per_minute=1000, max_concurrent_requests=1, max_queued_requests=1
    )
    slow = {"name": "slow", "arguments": {"steps": 10, "delay": 0.05}}
    gateway = running_gateway(build_echo_app(), limits=limits)
    async with gateway as running, httpx.AsyncClient() as client:
        leg = http_leg(era, client, running.url)
        await leg.open({})
        results: list[int] = []

        async def call() -> None:
            status, _, _ = await leg.call("tools/call", slow, {}, "slow")
            results.append(status)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)  # active
            await wait_for_requests(client, running, active=1)
            nursery.start_soon(call)  # queued
            await wait_for_requests(client, running, active=1, queued=1)
            status, headers, body = await leg.call("tools/call", slow, {}, "slow")
            assert status == 429
            assert body["error"]["message"] == "Too many requests"
            assert headers["retry-after"] == "1"
        assert results == [200, 200]
        await wait_until_idle(client, running)
        metrics = (await client.get(running.base + "/api/resident/metrics")).json()
        assert metrics["admission"]["refusedOverloaded"] == 1


@pytest.mark.parametrize("era", ERAS)
async def test_graceful_drain_finishes_in_flight_work_and_refuses_new(era: Era) -> None:
    async with running_gateway(build_echo_app()) as running, httpx.AsyncClient() as client:
        leg = http_leg(era, client, running.url)
        await leg.open({})
        finished: list[Any] = []

        async def in_flight() -> None:
            slow = {"name": "slow", "arguments": {"steps": 5, "delay": 0.06}}
            finished.append(await leg.call("tools/call", slow, {}, "slow"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(in_flight)
            await wait_for_requests(client, running, active=1)
            running.drain.trigger()
            status, _, body = await leg.call("tools/list", {}, {})
            assert status == 503
            assert body["error"]["message"] == "Resident runtime unavailable"
        status, _, body = finished[0]
        assert status == 200 and body["result"]["content"][0]["text"] == "slept 5 steps"


@pytest.mark.parametrize("era", ERAS)
async def test_a_drain_answers_each_request_within_its_own_deadline_not_a_fixed_drain(
    era: Era,
) -> None:
    # 0.1 s of drain for other work; each MCP request keeps its own (2 s) deadline.
    async with (
        running_gateway(build_echo_app(), drain_timeout=0.1, answer_deadline=2.0) as running,
        httpx.AsyncClient() as client,
    ):
        finished: list[Any] = []

        legs = [http_leg(era, client, running.url) for _ in range(2)]
        for leg in legs:  # a session each: both calls use request id 5
            await leg.open({})

        async def call(leg: Leg, steps: int, label: str) -> None:
            slow = {"name": "slow", "arguments": {"steps": steps, "delay": 0.1}}
            finished.append((label, await leg.call("tools/call", slow, {}, "slow")))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, legs[0], 6, "within")  # 0.6 s: longer than the drain timeout
            nursery.start_soon(call, legs[1], 100, "past")  # 10 s: past its own deadline
            await wait_for_requests(client, running, active=2)
            running.drain.trigger()
    answers = dict(finished)
    status, _, body = answers["within"]
    assert status == 200 and body["result"]["content"][0]["text"] == "slept 6 steps"
    status, _, body = answers["past"]
    assert body["error"]["code"] == -32000 and "2 s deadline" in body["error"]["message"]


# -- write gate --------------------------------------------------------------------------------


def capture_args() -> dict[str, Any]:
    return {
        "name": "gno_capture",
        "arguments": {"collection": "notes", "content": "# Gamma\n\nA captured note.\n"},
    }


@pytest.mark.parametrize("era", ERAS)
async def test_write_tools_are_refused_before_dispatch_unless_enabled(
    era: Era, notes_dirs: Dirs, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    before = sorted(p.name for p in folder.iterdir())
    with engine_app(notes_dirs) as (app, _):
        async with running_gateway(app) as running, httpx.AsyncClient() as client:
            leg = http_leg(era, client, running.url)
            await leg.open({})
            status, _, body = await leg.call("tools/call", capture_args(), {}, "gno_capture")
            assert status == 403
            # The refusal answers this request and says which flag would allow it.
            assert body["id"] == 5
            assert "--mcp-enable-write" in body["error"]["message"]
            assert body["error"]["data"] == {
                "code": "WRITE_DISABLED",
                "name": "gno_capture",
                "enabledBy": ["--mcp-enable-write"],
            }
            # Reads still work, and nothing was written.
            status, _, _ = await leg.call(
                "tools/call",
                {"name": "gno_search", "arguments": {"query": "giraffes"}},
                {},
                "gno_search",
            )
            assert status == 200
    assert sorted(p.name for p in folder.iterdir()) == before
    with engine_app(notes_dirs, write_enabled=True) as (app, _):
        gateway = running_gateway(app, enable_write=True)
        async with gateway as running, httpx.AsyncClient() as client:
            leg = http_leg(era, client, running.url)
            await leg.open({})
            status, _, body = await leg.call("tools/call", capture_args(), {}, "gno_capture")
    assert status == 200, body
    assert not body["result"].get("isError"), body
    assert len(list(folder.iterdir())) == len(before) + 1


# -- egress and the authorization epoch ---------------------------------------------------------


SEARCH = {"name": "gno_search", "arguments": {"query": "giraffes", "collection": "notes"}}


@pytest.mark.parametrize("era", ERAS)
async def test_egress_is_judged_per_request_against_the_actual_peer(
    era: Era, notes_dirs: Dirs, tmp_path: Path
) -> None:
    config_path = notes_dirs.config_file
    with engine_app(notes_dirs) as (app, engine):
        async with remote_gateway(app, tmp_path, config_path, engine) as gateway:
            lan = asgi_leg(era, gateway, "192.168.1.20")
            await lan.open(AUTH)
            # local_only (the default): never served off the machine.
            status, _, body = await lan.call("tools/call", SEARCH, AUTH, "gno_search")
            assert status == 403
            check_schema("mcp-http-error", body)
            data = body["error"]["data"]
            assert body["error"]["code"] == -32003 and body["id"] == 5
            assert data["code"] == "EGRESS_DENIED" and data["reason"] == "POLICY_LOCAL_ONLY"
            assert data["audit"]["destinationZone"] == "lan"
            assert data["audit"]["contentClass"] == "snippet"
            assert data["audit"]["collections"] == ["notes"]
            assert data["audit"]["effectivePolicySource"] == "config_default"

            set_policy(config_path, "notes", "lan")
            status, _, body = await lan.call("tools/call", SEARCH, AUTH, "gno_search")
            assert status == 200, body
            assert body["result"]["structuredContent"]["results"]

            # The same session from a remote peer is judged anew, and refused.
            remote = asgi_leg(era, gateway, "203.0.113.5")
            remote.session = lan.session
            status, _, body = await remote.call("tools/call", SEARCH, AUTH, "gno_search")
            assert status == 403
            assert body["error"]["data"]["reason"] == "POLICY_LAN_ONLY"
            assert body["error"]["data"]["audit"]["destinationZone"] == "remote"

            read = {"uri": "gno://notes/alpha.md"}
            status, _, body = await remote.call("resources/read", read, AUTH, read["uri"])
            assert status == 403
            assert body["error"]["data"]["audit"]["contentClass"] == "source"
            set_policy(config_path, "notes", "remote")
            status, _, body = await remote.call("resources/read", read, AUTH, read["uri"])
            assert status == 200, body


@pytest.mark.parametrize("era", ERAS)
async def test_a_policy_change_during_a_request_answers_409(era: Era, tmp_path: Path) -> None:
    config_path = tmp_path / "config" / "index.yml"
    folder = tmp_path / "notes"
    folder.mkdir()
    with Engine.open(dirs=Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")) as e:
        e.collections.add(str(folder), name="notes")
    set_policy(config_path, "notes", "remote")
    async with remote_gateway(build_echo_app(), tmp_path, config_path) as gateway:
        leg = asgi_leg(era, gateway, "203.0.113.5")
        await leg.open(AUTH)
        slow = {"name": "slow", "arguments": {"steps": 4, "delay": 0.05}}
        status, _, body = await leg.call("tools/call", slow, AUTH, "slow")
        assert status == 200, body  # allowed while the policy holds
        outcome: list[Any] = []

        async def call() -> None:
            outcome.append(await leg.call("tools/call", slow, AUTH, "slow"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            await wait_for_admitted(gateway, 1)
            set_policy(config_path, "notes", "lan")
        status, _, body = outcome[0]
        assert status == 409
        assert body["id"] == 5
        assert body["error"]["data"]["code"] == "EGRESS_POLICY_CHANGED"
        # The next request is judged under the new policy.
        status, _, body = await leg.call("tools/call", slow, AUTH, "slow")
        assert status == 403 and body["error"]["data"]["reason"] == "POLICY_LAN_ONLY"


async def test_loopback_peer_is_served_whatever_the_policy(evals_dirs: Dirs) -> None:  # noqa: F811
    with engine_app(evals_dirs) as (app, engine):
        policies = PolicyBook(evals_dirs.config_file, engine.config.collections)
        async with (
            running_gateway(app, policies=policies) as running,
            httpx.AsyncClient() as client,
        ):
            leg = http_leg("modern", client, running.url)
            search = {"name": "gno_search", "arguments": {"query": "error", "collection": "evals"}}
            status, _, body = await leg.call("tools/call", search, {}, "gno_search")
            assert status == 200 and body["result"]["structuredContent"]["results"]


async def test_a_real_non_loopback_socket_peer_is_judged_by_its_zone(
    notes_dirs: Dirs, tmp_path: Path
) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("no non-loopback address to connect to")
    sock = open_listening_socket("0.0.0.0", 0)
    port = sock.getsockname()[1]
    settings = GatewaySettings(
        mode="daemon",
        host="0.0.0.0",
        port=port,
        token_file=daemon_settings(tmp_path).token_file,
        allowed_hosts=(f"{address}:{port}", f"127.0.0.1:{port}"),
        allowed_origins=(f"http://{address}:{port}",),
        limits=RELAXED,
    )
    auth = {"authorization": f"Bearer {TOKEN}"}
    with engine_app(notes_dirs) as (app, engine):
        policies = PolicyBook(notes_dirs.config_file, engine.config.collections)
        gateway = running_gateway(app, settings, policies=policies, sock=sock)
        async with gateway, httpx.AsyncClient() as client:
            far = http_leg("modern", client, f"http://{address}:{port}/mcp")
            status, _, body = await far.call("tools/call", SEARCH, auth, "gno_search")
            assert status == 403
            assert body["error"]["data"]["audit"]["destinationZone"] in ("lan", "remote")
            near = http_leg("modern", client, f"http://127.0.0.1:{port}/mcp")
            status, _, _ = await near.call("tools/call", SEARCH, auth, "gno_search")
            assert status == 200
            unauthenticated = await client.post(
                f"http://{address}:{port}/mcp",
                headers=modern_headers("tools/list"),
                json=rpc("tools/list", modern_params()),
            )
            assert_boundary_error(unauthenticated.status_code, unauthenticated.content, 401)


async def test_a_loopback_listener_refuses_non_loopback_peers(tmp_path: Path) -> None:
    settings = GatewaySettings(port=4444, limits=RELAXED)
    async with gateway_app(build_echo_app(), settings, policies=PolicyBook(None)) as gateway:
        for peer in ("192.168.1.20", "203.0.113.5", "::ffff:10.0.0.1"):
            response = await asgi_call(
                gateway,
                peer=peer,
                headers={**modern_headers("tools/list"), "host": "127.0.0.1:4444"},
                body=json.dumps(rpc("tools/list", modern_params())).encode(),
            )
            assert_boundary_error(response.status, response.body, 403)
        for peer in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"):
            response = await asgi_call(
                gateway,
                peer=peer,
                headers={**modern_headers("tools/list"), "host": "127.0.0.1:4444"},
                body=json.dumps(rpc("tools/list", modern_params())).encode(),
            )
            assert response.status == 200, peer


# -- metrics -----------------------------------------------------------------------------------


async def test_transport_metrics_count_each_leg_and_each_refusal() -> None:
    async with running_gateway(build_echo_app()) as running, httpx.AsyncClient() as client:
        for era in ERAS:
            leg = http_leg(era, client, running.url)
            await leg.open({})
            await leg.call("tools/list", {}, {})
            await leg.call("tools/call", {"name": "gno_remember", "arguments": {}}, {}, "x")
        await client.post(running.url, headers=legacy_headers(), content=b"{")
        metrics = (await client.get(running.base + "/api/resident/metrics")).json()
        assert metrics["requests"]["legacy"] == 3  # initialize, list, write-gated call
        assert metrics["requests"]["modern"] == 2
        assert metrics["refusals"]["write-disabled"] == 2
        assert metrics["refusals"]["decode--32700"] == 1
        assert metrics["statuses"]["403"] == 2
        assert metrics["sessions"]["opened"] == 1
        status = (await client.get(running.endpoint.status_url)).json()
        check_schema("resident-status", status)
        assert status["transport"]["activeSessions"] == 1
