"""The 2025-11-25 leg over the real listener: sessions, GET streams, DELETE, statuses."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from gno_trio.config import GatewayLimits
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.http_gateway_support import (
    ACCEPT_BOTH,
    RELAXED,
    asgi_call,
    assert_boundary_error,
    gateway_app,
    idle_for,
    initialize_body,
    legacy_headers,
    rpc,
    running_gateway,
    sse_messages,
    wait_for_requests,
)
from tests.support.mcp_echo_app import build_app
from tests.support.waiting import real_time_limit


async def initialize(client: httpx.AsyncClient, url: str) -> str:
    response = await client.post(url, headers=legacy_headers(), json=initialize_body())
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"
    session_id = response.headers["mcp-session-id"]
    notified = await client.post(
        url, headers=legacy_headers(session_id), json=rpc("notifications/initialized", None, None)
    )
    assert notified.status_code == 202 and notified.content == b""
    return session_id


async def test_session_lifecycle_from_initialize_to_delete() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        session_id = await initialize(client, url)
        assert len(session_id) >= 32
        assert all(0x21 <= ord(ch) <= 0x7E for ch in session_id)
        other = await initialize(client, url)
        assert other != session_id

        listed = await client.post(url, headers=legacy_headers(session_id), json=rpc("tools/list"))
        assert listed.status_code == 200
        assert listed.json()["result"]["tools"][0]["name"] == "echo"
        assert "resultType" not in listed.json()["result"]
        pong = await client.post(url, headers=legacy_headers(session_id), json=rpc("ping"))
        assert pong.json()["result"] == {}

        # Handler errors ride in a 200 body; transport errors have their own statuses.
        unknown_tool = await client.post(
            url,
            headers=legacy_headers(session_id),
            json=rpc("tools/call", {"name": "nope", "arguments": {}}, 3),
        )
        assert unknown_tool.status_code == 200
        assert unknown_tool.json()["error"]["code"] == -32602
        unknown_method = await client.post(
            url, headers=legacy_headers(session_id), json=rpc("no/such", {}, 4)
        )
        assert unknown_method.status_code == 200
        assert unknown_method.json()["error"]["code"] == -32601
        missing = await client.post(
            url,
            headers=legacy_headers(session_id),
            json=rpc("resources/read", {"uri": "echo://missing"}, 6),
        )
        assert missing.status_code == 200
        assert missing.json()["error"]["code"] == -32002
        assert missing.json()["error"]["data"] == {"uri": "echo://missing"}
        client_reply = await client.post(
            url, headers=legacy_headers(session_id), json={"jsonrpc": "2.0", "id": 9, "result": {}}
        )
        assert client_reply.status_code == 202

        no_session = await client.post(url, headers=legacy_headers(), json=rpc("tools/list"))
        assert no_session.status_code == 400
        assert no_session.json()["error"]["code"] == -32600
        # server/discover without an envelope is a session-less legacy POST like any other.
        probe = await client.post(url, headers=legacy_headers(), json=rpc("server/discover", {}))
        assert probe.status_code == 400
        missing_note = await client.post(
            url, headers=legacy_headers(), json=rpc("notifications/initialized", None, None)
        )
        assert missing_note.status_code == 400
        unknown = await client.post(
            url, headers=legacy_headers("not-a-session"), json=rpc("tools/list", None, 5)
        )
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == -32001
        assert unknown.json()["id"] == 5

        deleted = await client.delete(url, headers={"mcp-session-id": session_id})
        assert deleted.status_code == 204
        after = await client.post(url, headers=legacy_headers(session_id), json=rpc("ping"))
        assert after.status_code == 404
        again = await client.delete(url, headers={"mcp-session-id": session_id})
        assert again.status_code == 404
        no_id = await client.delete(url)
        assert no_id.status_code == 400
        # The other session is untouched.
        still = await client.post(url, headers=legacy_headers(other), json=rpc("ping"))
        assert still.status_code == 200


async def test_initialize_rules() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        for version, expected in (("1999-01-01", "2025-11-25"), ("2025-06-18", "2025-06-18")):
            answer = await client.post(
                url, headers=legacy_headers(), json=initialize_body(version=version)
            )
            assert answer.json()["result"]["protocolVersion"] == expected
        # An initialize naming 2026-07-28 is a 2025-era opening and is negotiated down.
        down = await client.post(
            url, headers=legacy_headers(), json=initialize_body(version="2026-07-28")
        )
        assert down.json()["result"]["protocolVersion"] == "2025-11-25"
        assert "mcp-session-id" in down.headers

        broken = await client.post(url, headers=legacy_headers(), json=rpc("initialize", {}, 8))
        assert broken.status_code == 400
        assert broken.json()["error"]["code"] == -32602 and broken.json()["id"] == 8
        assert "mcp-session-id" not in broken.headers

        session_id = await initialize(client, url)
        twice = await client.post(url, headers=legacy_headers(session_id), json=initialize_body(2))
        assert twice.status_code == 400 and twice.json()["error"]["code"] == -32600
        bad_version = await client.post(
            url,
            headers=legacy_headers(session_id, **{"mcp-protocol-version": "1999-01-01"}),
            json=rpc("ping"),
        )
        assert bad_version.status_code == 400
        older = await client.post(
            url,
            headers=legacy_headers(session_id, **{"mcp-protocol-version": "2025-06-18"}),
            json=rpc("ping"),
        )
        assert older.status_code == 200
        resume = await client.post(
            url, headers=legacy_headers(session_id, **{"last-event-id": "1"}), json=rpc("ping")
        )
        assert resume.status_code == 400


async def test_get_stream_is_one_per_session_and_ends_with_the_session() -> None:
    settings = GatewaySettings(port=0, limits=RELAXED, stream_keepalive=0.2)
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        url = running.url
        session_id = await initialize(client, url)
        stream_headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
        received = bytearray()
        async with client.stream("GET", url, headers=stream_headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"] == "text/event-stream"
            assert stream.headers["x-accel-buffering"] == "no"
            second = await client.get(url, headers=stream_headers)
            assert second.status_code == 409

            async def read_all() -> None:
                async for chunk in stream.aiter_bytes():
                    received.extend(chunk)

            # read_all returns only once the server ends the stream.
            with trio.fail_after(3):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(read_all)
                    while b": keep-alive" not in received:
                        await trio.sleep(0.01)
                    deleted = await client.delete(url, headers={"mcp-session-id": session_id})
                    assert deleted.status_code == 204
        assert b": keep-alive" in received
        assert sse_messages(bytes(received)) == []

        fresh = await initialize(client, url)
        for headers, status in (
            ({"accept": "application/json", "mcp-session-id": fresh}, 406),
            ({"accept": "text/event-stream"}, 400),
            ({"accept": "text/event-stream", "mcp-session-id": "gone"}, 404),
            ({"accept": "text/event-stream", "mcp-session-id": fresh, "last-event-id": "3"}, 400),
        ):
            answer = await client.get(url, headers=headers)
            assert answer.status_code == status, headers


async def test_a_silent_get_stream_answers_its_head_at_once() -> None:
    """A client opening a GET stream waits on its status line: the head must not wait for the
    stream's first event or keep-alive, which may be minutes away."""
    settings = GatewaySettings(port=0, limits=RELAXED, stream_keepalive=3600)
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        session_id = await initialize(client, running.url)
        stream_headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
        with real_time_limit(10):
            async with client.stream("GET", running.url, headers=stream_headers) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"] == "text/event-stream"


async def test_progress_turns_the_answer_into_an_sse_stream() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        session_id = await initialize(client, running.url)
        response = await client.post(
            running.url,
            headers=legacy_headers(session_id),
            json=rpc(
                "tools/call",
                {
                    "name": "slow",
                    "arguments": {"steps": 3, "delay": 0.01},
                    "_meta": {"progressToken": "p"},
                },
                11,
            ),
        )
        assert response.headers["content-type"] == "text/event-stream"
        messages = sse_messages(response.content)
        progress = [m["params"]["progress"] for m in messages if m.get("method")]
        assert progress == [1, 2, 3]
        assert all(m["params"]["progressToken"] == "p" for m in messages[:-1])
        assert messages[-1]["id"] == 11 and messages[-1]["result"]["content"][0]["text"]
        # Without a progress token the same call is plain JSON.
        plain = await client.post(
            running.url,
            headers=legacy_headers(session_id),
            json=rpc("tools/call", {"name": "slow", "arguments": {"steps": 2, "delay": 0.01}}, 12),
        )
        assert plain.headers["content-type"] == "application/json"


async def test_session_limit_answers_429_until_one_ends() -> None:
    limits = GatewayLimits(max_requests_per_minute=1000, max_sessions=2)
    async with (
        running_gateway(build_app(), limits=limits) as running,
        httpx.AsyncClient() as client,
    ):
        first = await initialize(client, running.url)
        await initialize(client, running.url)
        full = await client.post(running.url, headers=legacy_headers(), json=initialize_body(7))
        assert full.status_code == 429
        assert full.json()["id"] == 7
        assert "2 sessions are in use" in full.json()["error"]["message"]
        assert 1 <= int(full.headers["retry-after"]) <= 300
        await client.delete(running.url, headers={"mcp-session-id": first})
        assert await initialize(client, running.url)


async def test_one_identity_may_hold_only_its_share_of_the_sessions() -> None:
    limits = GatewayLimits(
        max_requests_per_minute=1000, max_sessions=32, max_sessions_per_identity=3
    )
    async with (
        running_gateway(build_app(), limits=limits) as running,
        httpx.AsyncClient() as client,
    ):
        held = [await initialize(client, running.url) for _ in range(3)]
        full = await client.post(running.url, headers=legacy_headers(), json=initialize_body(9))
        assert full.status_code == 429
        error = full.json()["error"]
        assert full.json()["id"] == 9
        assert "maxSessionsPerIdentity" in error["message"] and "3 sessions" in error["message"]
        assert error["data"]["maxSessionsPerIdentity"] == 3
        assert 1 <= int(full.headers["retry-after"]) <= 300
        status = (await client.get(running.endpoint.status_url)).json()
        assert status["transport"]["activeSessions"] == 3  # far below the gateway's 32
        await client.delete(running.url, headers={"mcp-session-id": held[0]})
        assert await initialize(client, running.url)


async def test_idle_sessions_are_reaped(mock_clock: trio.testing.MockClock) -> None:
    """The reaper's clock is trio's: time stands still here except when the test jumps it."""
    limits = GatewayLimits(max_requests_per_minute=1000, session_idle_timeout_ms=1000)
    with real_time_limit():
        async with (
            running_gateway(build_app(), limits=limits) as running,
            httpx.AsyncClient() as client,
        ):
            session_id = await initialize(client, running.url)
            ping = rpc("ping")
            await idle_for(mock_clock, 0.6)
            kept = await client.post(running.url, headers=legacy_headers(session_id), json=ping)
            assert kept.status_code == 200  # activity restarts the idle clock
            await idle_for(mock_clock, 0.6)
            again = await client.post(running.url, headers=legacy_headers(session_id), json=ping)
            assert again.status_code == 200  # 1.2 s since it began, but only 0.6 s idle
            await idle_for(mock_clock, 1.6)
            reaped = await client.post(running.url, headers=legacy_headers(session_id), json=ping)
            assert reaped.status_code == 404
            metrics = (await client.get(running.base + "/api/resident/metrics")).json()
            assert metrics["sessions"]["closed_idle"] == 1


async def test_notifications_cancelled_stops_the_request_and_frees_its_slot() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        session_id = await initialize(client, running.url)
        outcome: dict[str, Any] = {}

        async def slow_call() -> None:
            response = await client.post(
                running.url,
                headers=legacy_headers(session_id),
                json=rpc(
                    "tools/call", {"name": "slow", "arguments": {"steps": 100, "delay": 0.05}}, 21
                ),
            )
            outcome["response"] = response

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_call)
            await wait_for_requests(client, running, active=1)
            cancel = await client.post(
                running.url,
                headers=legacy_headers(session_id),
                json=rpc("notifications/cancelled", {"requestId": 21, "reason": "user"}, None),
            )
            assert cancel.status_code == 202
        response = outcome["response"]
        assert response.status_code == 200
        assert sse_messages(response.content) == []  # no JSON-RPC response for it
        status = (await client.get(running.endpoint.status_url)).json()
        assert status["transport"]["activeRequests"] == 0
        assert status["readers"]["active"] == 0


async def test_a_session_used_by_another_identity_is_closed_with_403() -> None:
    settings = GatewaySettings(port=0, limits=RELAXED)
    async with gateway_app(build_app(), settings, policies=PolicyBook(None)) as gateway:
        host = {"host": "127.0.0.1:4444"}
        opened = await asgi_call(
            gateway,
            peer="127.0.0.1",
            headers={**legacy_headers(), **host},
            body=json.dumps(initialize_body()).encode(),
        )
        session_id = opened.headers["mcp-session-id"]
        # Pretend the session had been created by a bearer identity.
        session = await gateway.state.sessions.get(session_id)
        assert session is not None
        session.identity = "bearer:" + "0" * 64
        stolen = await asgi_call(
            gateway,
            peer="127.0.0.1",
            headers={**legacy_headers(session_id), **host},
            body=json.dumps(rpc("ping")).encode(),
        )
        assert_boundary_error(stolen.status, stolen.body, 403)
        assert await gateway.state.sessions.get(session_id) is None
        session.identity = "loopback"
        gone = await asgi_call(
            gateway,
            peer="127.0.0.1",
            headers={**legacy_headers(session_id), **host},
            body=json.dumps(rpc("ping")).encode(),
        )
        assert gone.status == 404


@pytest.mark.parametrize("accept", [ACCEPT_BOTH, "*/*"])
async def test_notifications_need_no_response_body(accept: str) -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        session_id = await initialize(client, running.url)
        answer = await client.post(
            running.url,
            headers={**legacy_headers(session_id), "accept": accept},
            json=rpc("notifications/roots/list_changed", None, None),
        )
        assert answer.status_code == 202 and answer.content == b""


async def test_server_messages_reach_the_session_get_stream() -> None:
    settings = GatewaySettings(port=0, limits=RELAXED, stream_keepalive=5.0)
    host = {"host": "127.0.0.1:4444"}
    async with gateway_app(build_app(), settings, policies=PolicyBook(None)) as gateway:
        opened = await asgi_call(
            gateway,
            peer="127.0.0.1",
            headers={**legacy_headers(), **host},
            body=json.dumps(initialize_body()).encode(),
        )
        session_id = opened.headers["mcp-session-id"]
        session = await gateway.state.sessions.get(session_id)
        assert session is not None
        assert not session.push(b'{"jsonrpc":"2.0","method":"early"}\n')  # no stream yet
        streamed: list[Any] = []

        async def stream() -> None:
            streamed.append(
                await asgi_call(
                    gateway,
                    peer="127.0.0.1",
                    method="GET",
                    headers={"accept": "text/event-stream", "mcp-session-id": session_id, **host},
                )
            )

        with trio.fail_after(3):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(stream)
                while session.stream is None:
                    await trio.sleep(0.01)
                line = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
                assert session.push(line)
                # In process, nothing else runs: once every task waits, the line went out.
                await trio.testing.wait_all_tasks_blocked()
                await gateway.state.sessions.close(session, "test")
        response = streamed[0]
        assert response.status == 200
        assert sse_messages(response.body) == [
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        ]
