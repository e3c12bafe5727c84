"""The sessionless 2026-07-28 leg over the real listener: every rejection row, headers, results."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.support.http_gateway_support import (
    ENVELOPE,
    MODERN,
    initialize_body,
    legacy_headers,
    mcp_head_for,
    modern_headers,
    modern_params,
    raw_exchange,
    rpc,
    running_gateway,
    sse_messages,
)
from tests.support.mcp_echo_app import build_app

SERVER_INFO = {"name": "gno-echo", "version": "0.0.1"}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


async def post(
    client: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]
) -> httpx.Response:
    return await client.post(url, headers=headers, content=json.dumps(body).encode())


def echo_call(text: str = "hi", request_id: int = 1, **meta: Any) -> dict[str, Any]:
    return rpc(
        "tools/call", modern_params(name="echo", arguments={"text": text}, _meta=meta), request_id
    )


def assert_error(response: httpx.Response, status: int, code: int, request_id: Any = 1) -> Any:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code
    assert body["id"] == request_id
    assert "mcp-session-id" not in response.headers
    return body["error"]


async def test_discover_and_lists_carry_modern_stamps() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        discovered = await post(
            client, url, rpc("server/discover", modern_params()), modern_headers("server/discover")
        )
        assert discovered.status_code == 200
        assert "mcp-session-id" not in discovered.headers
        result = discovered.json()["result"]
        assert result["resultType"] == "complete"
        assert result["supportedVersions"] == [MODERN]
        assert result["_meta"][SERVER_INFO_KEY] == SERVER_INFO
        assert (result["ttlMs"], result["cacheScope"]) == (0, "private")

        listings = []
        for method, name in (
            ("tools/list", None),
            ("tools/list", None),
            ("resources/list", None),
            ("resources/templates/list", None),
            ("resources/read", "echo://greeting"),
        ):
            params = modern_params(uri=name) if name else modern_params()
            answer = await post(client, url, rpc(method, params, 2), modern_headers(method, name))
            assert answer.status_code == 200, answer.text
            stamped = answer.json()["result"]
            assert stamped["resultType"] == "complete"
            assert isinstance(stamped["ttlMs"], int) and stamped["ttlMs"] >= 0
            assert stamped["cacheScope"] in ("public", "private")
            assert stamped["_meta"][SERVER_INFO_KEY] == SERVER_INFO
            listings.append(stamped)
        assert [t["name"] for t in listings[0]["tools"]] == [
            t["name"] for t in listings[1]["tools"]
        ]

        called = await post(
            client, url, echo_call(trace="abc"), modern_headers("tools/call", "echo")
        )
        result = called.json()["result"]
        assert result["resultType"] == "complete" and "ttlMs" not in result
        assert result["structuredContent"]["era"] == "modern"
        assert result["structuredContent"]["meta"] == {"trace": "abc"}  # custom _meta reaches tools

        note = await post(
            client, url, rpc("notifications/initialized", None, None), modern_headers("x")
        )
        assert note.status_code == 202 and note.content == b""


async def test_envelope_rows_of_the_rejection_table() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        headers = modern_headers("tools/list")
        # Header without an envelope: -32602 (missing _meta), id echoed.
        empty: tuple[dict[str, Any] | None, ...] = ({}, None, {"_meta": {}})
        for params in empty:
            answer = await post(client, url, rpc("tools/list", params, 5), headers)
            assert_error(answer, 400, -32602, 5)
        # Malformed envelope values.
        broken_envelopes: tuple[dict[str, Any], ...] = (
            {"io.modelcontextprotocol/clientCapabilities": {}},
            {VERSION_KEY: MODERN},
            {VERSION_KEY: MODERN, "io.modelcontextprotocol/clientCapabilities": []},
            {**ENVELOPE, "io.modelcontextprotocol/clientInfo": {"name": 3}},
            {**ENVELOPE, VERSION_KEY: 2026},
        )
        for broken in broken_envelopes:
            answer = await post(client, url, rpc("tools/list", {"_meta": broken}), headers)
            assert_error(answer, 400, -32602)
        # clientInfo is optional.
        bare = {VERSION_KEY: MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
        ok = await post(client, url, rpc("tools/list", {"_meta": bare}), headers)
        assert ok.status_code == 200


async def test_version_rows_of_the_rejection_table() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        future = modern_params(_meta={VERSION_KEY: "v999.0.0"})
        # Header 2026-07-28 but body v999: the client disagrees with itself.
        mismatch = await post(client, url, rpc("tools/list", future), modern_headers("tools/list"))
        error = assert_error(mismatch, 400, -32020)
        assert error["data"]["mismatch"]["header"] == "MCP-Protocol-Version"
        # Both say v999: unsupported, naming what is served.
        both = await post(
            client,
            url,
            rpc("tools/list", future),
            modern_headers("tools/list", **{"mcp-protocol-version": "v999.0.0"}),
        )
        error = assert_error(both, 400, -32022)
        assert error["data"] == {"supported": [MODERN], "requested": "v999.0.0"}
        assert error["message"] == "Unsupported protocol version: v999.0.0"
        # Envelope present, header absent: the header is required (-32020).
        headers = modern_headers("tools/list")
        del headers["mcp-protocol-version"]
        absent = await post(client, url, rpc("tools/list", modern_params()), headers)
        error = assert_error(absent, 400, -32020)
        assert error["data"]["mismatch"] == {
            "header": "MCP-Protocol-Version",
            "problem": "missing",
        }
        # A legacy version header on an enveloped body is a mismatch too.
        legacy = await post(
            client,
            url,
            rpc("tools/list", modern_params()),
            modern_headers("tools/list", **{"mcp-protocol-version": "2025-11-25"}),
        )
        assert_error(legacy, 400, -32020)


async def test_routing_header_rows_of_the_rejection_table() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        call = echo_call()
        method_cases = [
            {k: v for k, v in modern_headers("tools/call", "echo").items() if k != "mcp-method"},
            modern_headers("TOOLS/CALL", "echo"),
            modern_headers("tools/list", "echo"),
        ]
        for headers in method_cases:
            error = assert_error(await post(client, url, call, headers), 400, -32020)
            assert error["data"]["mismatch"]["header"] == "Mcp-Method"
        name_cases = [
            modern_headers("tools/call"),
            modern_headers("tools/call", "slow"),
            modern_headers("tools/call", "=?base64?ZWNobw?="),  # bad padding
            modern_headers("tools/call", "=?base64?ZW*obw==?="),  # outside the alphabet
            modern_headers("tools/call", "=?base64?ZWNobw=="),  # half-wrapped: literal
            modern_headers("tools/call", "ZWNobw==?="),
        ]
        for headers in name_cases:
            error = assert_error(await post(client, url, call, headers), 400, -32020)
            assert error["data"]["mismatch"]["header"] == "Mcp-Name"
        ok = await post(client, url, call, modern_headers("tools/call", "=?base64?ZWNobw==?="))
        assert ok.status_code == 200, ok.text
        # Optional whitespace around a value is not part of it (sent raw: clients trim it).
        body = json.dumps(call).encode()
        port = running.endpoint.port
        for padded in ("  echo  ", "\techo"):
            head = mcp_head_for(
                port,
                {
                    "MCP-Protocol-Version": MODERN,
                    "Mcp-Method": "tools/call",
                    "Mcp-Name": padded,
                    "Content-Length": str(len(body)),
                },
            )
            padded_ok = await raw_exchange(port, head + body)
            assert padded_ok.status == 200, padded_ok.body
        # resources/read mirrors params.uri, sentinel-encoded when it is not plain ASCII.
        uri = "echo://grüße"
        read = rpc("resources/read", modern_params(uri=uri))
        encoded = "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
        ok = await post(client, url, read, modern_headers("resources/read", encoded))
        assert ok.status_code == 200
        assert ok.json()["result"]["contents"][0]["text"] == "grüße"
        wrong = await post(client, url, read, modern_headers("resources/read", "echo://other"))
        assert_error(wrong, 400, -32020)
        gone = rpc("resources/read", modern_params(uri="echo://missing"))
        error = assert_error(
            await post(client, url, gone, modern_headers("resources/read", "echo://missing")),
            400,
            -32602,
        )
        assert error["data"] == {"uri": "echo://missing"}


async def test_header_names_are_case_insensitive_and_duplicates_mismatch() -> None:
    async with running_gateway(build_app()) as running:
        port = running.endpoint.port
        body = json.dumps(echo_call()).encode()
        upper = {
            "MCP-PROTOCOL-VERSION": MODERN,
            "MCP-METHOD": "tools/call",
            "mcp-NAME": "echo",
            "Content-Length": str(len(body)),
        }
        ok = await raw_exchange(port, mcp_head_for(port, upper) + body)
        assert ok.status == 200, ok.body
        doubled = mcp_head_for(port, {**upper, "Content-Length": str(len(body))})
        doubled = doubled.replace(
            b"MCP-METHOD: tools/call\r\n", b"MCP-METHOD: tools/call\r\nmcp-method: tools/call\r\n"
        )
        refused = await raw_exchange(port, doubled + body)
        assert refused.status == 400
        assert refused.json()["error"]["code"] == -32020


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
        "no/such/method",
    ],
)
async def test_methods_not_served_on_the_modern_leg_are_404(method: str) -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        params = modern_params(notifications={"toolsListChanged": True})
        answer = await post(client, running.url, rpc(method, params, "r-7"), modern_headers(method))
        error = assert_error(answer, 404, -32601, "r-7")
        assert error["data"] == {"method": method}


async def test_sessions_and_batches_are_refused_on_the_modern_leg() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        url = running.url
        opened = await client.post(url, headers=legacy_headers(), json=initialize_body())
        session_id = opened.headers["mcp-session-id"]
        named = await post(
            client,
            url,
            echo_call(),
            modern_headers("tools/call", "echo", **{"mcp-session-id": session_id}),
        )
        assert_error(named, 400, -32600)
        # The named session was neither used nor disturbed.
        alive = await client.post(url, headers=legacy_headers(session_id), json=rpc("ping"))
        assert alive.status_code == 200
        batch = await post(
            client,
            url,
            [echo_call(), echo_call(request_id=2)],
            modern_headers("tools/call", "echo"),
        )
        assert batch.status_code == 400
        assert batch.json()["error"]["code"] == -32600 and batch.json()["id"] is None
        reply = await post(
            client, url, {"jsonrpc": "2.0", "id": 1, "result": {}}, modern_headers("x")
        )
        assert reply.status_code == 400
        unknown_tool = await post(
            client,
            url,
            rpc("tools/call", modern_params(name="nope", arguments={})),
            modern_headers("tools/call", "nope"),
        )
        assert_error(unknown_tool, 400, -32602)
        for method in ("GET", "DELETE"):
            answer = await client.request(
                method, url, headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN}
            )
            assert answer.status_code == 400  # no legacy session named: never a modern stream


async def test_per_caller_identity_is_stable_and_distinct(tmp_path: Path) -> None:
    app = build_app()

    async def label(running_url: str, **headers: str) -> str:
        async with httpx.AsyncClient() as client:
            answer = await post(
                client,
                running_url,
                echo_call(),
                {**modern_headers("tools/call", "echo"), **headers},
            )
        session: str = answer.json()["result"]["structuredContent"]["session"]
        assert re.fullmatch(r"http:[0-9a-f]{16}", session)
        return session

    async with running_gateway(app) as running:
        loopback = await label(running.url)
        assert await label(running.url) == loopback  # unauthenticated loopback callers share one
    token_path = tmp_path / "token"
    tokens = ["d" * 40, "e" * 40]
    labels = []
    for token in tokens:
        token_path.write_text(token)
        token_path.chmod(0o600)
        async with running_gateway(app, token_file=token_path) as running:
            labels.append(await label(running.url, authorization=f"Bearer {token}"))
    assert len({loopback, *labels}) == 3
    for token, found in zip(tokens, labels, strict=True):
        assert hashlib.sha256(token.encode()).hexdigest()[:16] not in found


async def test_a_client_hanging_up_on_a_plain_json_call_cancels_it() -> None:
    """No progress token, so the answer would be one JSON body: a client that closes its
    connection while the tool runs gets the tool cancelled and the slots back at once
    (the tool would otherwise sleep for ten seconds)."""
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        call = rpc(
            "tools/call", modern_params(name="slow", arguments={"steps": 200, "delay": 0.05}), 11
        )
        body = json.dumps(call).encode()
        headers = {**modern_headers("tools/call", "slow"), "Content-Length": str(len(body))}
        stream = await trio.open_tcp_stream("127.0.0.1", running.endpoint.port)
        await stream.send_all(mcp_head_for(running.endpoint.port, headers) + body)

        async def active() -> int:
            status = (await client.get(running.endpoint.status_url)).json()
            return int(status["transport"]["activeRequests"])

        with trio.fail_after(5):
            while await active() != 1:
                await trio.sleep(0.02)
        await stream.aclose()
        with trio.fail_after(3):
            while await active() != 0:
                await trio.sleep(0.02)
        status = (await client.get(running.endpoint.status_url)).json()
        assert status["readers"]["active"] == 0


async def test_progress_streams_and_a_dropped_stream_cancels_the_call() -> None:
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        call = rpc(
            "tools/call",
            modern_params(
                name="slow", arguments={"steps": 3, "delay": 0.01}, _meta={"progressToken": 4}
            ),
            9,
        )
        streamed = await post(client, running.url, call, modern_headers("tools/call", "slow"))
        assert streamed.headers["content-type"] == "text/event-stream"
        assert streamed.headers["x-accel-buffering"] == "no"
        messages = sse_messages(streamed.content)
        assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
        assert messages[-1]["id"] == 9 and messages[-1]["result"]["resultType"] == "complete"

        long_call = rpc(
            "tools/call",
            modern_params(
                name="slow", arguments={"steps": 200, "delay": 0.05}, _meta={"progressToken": 5}
            ),
            10,
        )
        seen: list[Any] = []
        async with client.stream(
            "POST",
            running.url,
            headers=modern_headers("tools/call", "slow"),
            content=json.dumps(long_call).encode(),
        ) as stream:
            async for line in stream.aiter_lines():
                if line.startswith("data:"):
                    seen.append(json.loads(line[5:]))
                    break
        # Closing the response stream is cancellation: the slots come back at once.
        with trio.fail_after(2):
            while True:
                status = (await client.get(running.endpoint.status_url)).json()
                if status["transport"]["activeRequests"] == 0:
                    break
                await trio.sleep(0.02)
        assert status["readers"]["active"] == 0
        assert seen[0]["method"] == "notifications/progress"
