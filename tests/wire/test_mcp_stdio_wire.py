"""Raw JSON-RPC over real pipes against the echo app: what a stdio client sees byte for byte."""

from __future__ import annotations

import json
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.support.stdio_session import (
    RawWire,
    modern,
    open_stdio_process,
    raw_initialize_params,
)
from tests.support.tool_results import tool_error_code

MODERN = "2026-07-28"
CAPABILITIES = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
}
SERVER_INFO = {"name": "gno-echo", "version": "0.0.1"}


class Wire(RawWire):
    """One spawned echo server and the raw lines exchanged with it."""

    def __init__(self, process: trio.Process, stderr_path: Path) -> None:
        super().__init__(process, stderr_path, timeout=15.0)

    async def handshake(self) -> None:
        await self.call(0, "initialize", raw_initialize_params())
        await self.notify("notifications/initialized")


@asynccontextmanager
async def spawn(tmp_path: Path, *args: str) -> AsyncIterator[Wire]:
    stderr_path = tmp_path / f"stderr-{uuid.uuid4().hex}.log"
    with stderr_path.open("wb") as stderr:
        command = [sys.executable, "-m", "tests.support.mcp_echo_app", *args]
        async with open_stdio_process(command, stderr=stderr) as process:
            yield Wire(process, stderr_path)


# -- legacy era ---------------------------------------------------------------------------


async def test_legacy_handshake_ping_and_listing(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        response = await wire.call(1, "initialize", raw_initialize_params())
        assert response["result"] == {
            "protocolVersion": "2025-11-25",
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
        }
        await wire.notify("notifications/initialized")
        assert (await wire.call(2, "ping"))["result"] == {}
        listed = (await wire.call(3, "tools/list"))["result"]
        assert [tool["name"] for tool in listed["tools"]] == ["echo", "slow", "fail", "noisy"]
        assert "resultType" not in listed and "_meta" not in listed
        called = await wire.call(4, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert called["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert called["result"]["structuredContent"]["client"] == "raw-legacy"
        missing = await wire.call(5, "resources/read", {"uri": "echo://missing"})
        assert missing["error"]["code"] == -32002
        assert missing["error"]["data"] == {"uri": "echo://missing"}
        unknown_tool = await wire.call(6, "tools/call", {"name": "nope", "arguments": {}})
        assert unknown_tool["error"]["code"] == -32602


NEGOTIATION = {
    "1999-01-01": "2025-11-25",
    "2025-06-18": "2025-06-18",
    "2025-03-26": "2025-03-26",
    "2024-11-05": "2024-11-05",
    MODERN: "2025-11-25",
}


async def test_initialize_negotiation(tmp_path: Path) -> None:
    negotiated: dict[str, str] = {}

    async def negotiate(requested: str) -> None:
        async with spawn(tmp_path) as wire:
            response = await wire.call(1, "initialize", raw_initialize_params(requested))
            negotiated[requested] = response["result"]["protocolVersion"]

    async with trio.open_nursery() as nursery:  # one process per case, run side by side
        for requested in NEGOTIATION:
            nursery.start_soon(negotiate, requested)
    assert negotiated == NEGOTIATION


async def test_legacy_requests_before_initialize_and_enveloped_requests(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        early = await wire.call(1, "tools/list")
        assert early["error"]["code"] == -32602
        assert (await wire.call(2, "ping"))["result"] == {}
        unknown = await wire.call(3, "prompts/list")
        assert unknown["error"]["code"] == -32601
        assert unknown["error"]["data"] == {"method": "prompts/list"}
        await wire.handshake()
        enveloped = await wire.call(4, "tools/list", modern())
        assert enveloped["error"]["code"] == -32600


# -- modern era ---------------------------------------------------------------------------


async def test_modern_connection_pinned_by_discover(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        discover = (await wire.call(1, "server/discover", modern()))["result"]
        assert discover == {
            "supportedVersions": [MODERN],
            "capabilities": CAPABILITIES,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
            "ttlMs": 0,
            "cacheScope": "private",
        }
        listed = (await wire.call(2, "tools/list", modern()))["result"]
        assert (listed["resultType"], listed["ttlMs"], listed["cacheScope"]) == (
            "complete",
            0,
            "private",
        )
        called = await wire.call(
            3,
            "tools/call",
            modern(name="echo", arguments={"text": "yo"}, _meta={"acme/trace": {"span": 7}}),
        )
        result = called["result"]
        assert result["resultType"] == "complete" and "ttlMs" not in result
        assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
        structured = result["structuredContent"]
        assert (structured["client"], structured["era"]) == ("raw-probe", "modern")
        assert structured["meta"] == {"acme/trace": {"span": 7}}

        late_initialize = await wire.call(4, "initialize", raw_initialize_params())
        assert late_initialize["error"]["code"] == -32022
        assert late_initialize["error"]["data"]["supported"] == [MODERN]

        for request_id, method in enumerate(
            ("ping", "logging/setLevel", "resources/subscribe", "subscriptions/listen"), start=10
        ):
            refused = await wire.call(request_id, method, modern())
            assert refused["error"]["code"] == -32601
            assert refused["error"]["data"] == {"method": method}

        no_capabilities = modern()
        del no_capabilities["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        malformed = await wire.call(20, "tools/list", no_capabilities)
        assert malformed["error"]["code"] == -32602
        assert malformed["error"]["message"] == "Invalid _meta envelope"
        no_envelope = await wire.call(21, "tools/list", {})
        assert no_envelope["error"]["code"] == -32602

        anonymous = modern()
        del anonymous["_meta"]["io.modelcontextprotocol/clientInfo"]
        served = await wire.call(
            22, "tools/call", {**anonymous, "name": "echo", "arguments": {"text": "a"}}
        )
        assert served["result"]["structuredContent"]["client"] == "mcp"

        old = await wire.call(
            23,
            "tools/list",
            modern(_meta={"io.modelcontextprotocol/protocolVersion": "1999-01-01"}),
        )
        assert old["error"]["code"] == -32022
        assert old["error"]["message"] == "Unsupported protocol version: 1999-01-01"
        assert old["error"]["data"] == {"supported": [MODERN], "requested": "1999-01-01"}

        missing = await wire.call(24, "resources/read", modern(uri="echo://missing"))
        assert missing["error"]["code"] == -32602
        assert missing["error"]["data"] == {"uri": "echo://missing"}


async def test_unsupported_version_as_the_first_message(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        envelope = modern(_meta={"io.modelcontextprotocol/protocolVersion": "1999-01-01"})
        response = await wire.call("first", "server/discover", envelope)
        assert response["error"]["code"] == -32022
        assert response["error"]["data"] == {"supported": [MODERN], "requested": "1999-01-01"}


# -- framing ------------------------------------------------------------------------------


async def test_malformed_lines_are_answered_and_never_kill_the_connection(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        await wire.send_bytes(b"this is not json\n")
        parse = await wire.response(None)
        assert parse["error"]["code"] == -32700
        await wire.send_bytes(b"\xff\xfe\xfd\n")
        assert (await wire.response(None))["error"]["code"] == -32700
        await wire.send_bytes(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
        batch = await wire.response(None)
        assert batch["error"] == {"code": -32600, "message": "batches are not supported"}
        await wire.send_bytes(b'{"jsonrpc":"2.0","id":7,"method":5}\n')
        assert (await wire.response(7))["error"]["code"] == -32600
        await wire.send_bytes(b"\n   \n\r\n")  # blank lines are skipped silently
        await wire.send_bytes(b'{"jsonrpc":"2.0","id":8,"method":"ping"}\r\n')
        assert (await wire.response(8))["result"] == {}


async def test_oversized_lines_are_refused_and_serving_continues(tmp_path: Path) -> None:
    async with spawn(tmp_path, "--max-line-bytes", "4096") as wire:
        await wire.handshake()
        big = {"name": "echo", "arguments": {"text": "x" * 8000}}
        await wire.request(1, "tools/call", big)
        refused = await wire.response(None)
        assert refused["error"]["code"] == -32600
        assert "4096" in refused["error"]["message"]
        # The same, arriving in small pieces with no newline for a while.
        for _ in range(10):
            await wire.send_bytes(b"y" * 1000)
            await trio.sleep(0.01)
        await wire.send_bytes(b"\n")
        assert (await wire.response(None))["error"]["code"] == -32600
        fits = await wire.call(2, "tools/call", {"name": "echo", "arguments": {"text": "z" * 3000}})
        assert fits["result"]["content"][0]["text"] == "z" * 3000


async def test_default_line_limit_is_four_mebibytes(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        near_limit = {"name": "echo", "arguments": {"text": "a" * (4 * 1024 * 1024 - 200)}}
        served = await wire.call(1, "tools/call", near_limit)
        assert len(served["result"]["content"][0]["text"]) == 4 * 1024 * 1024 - 200
        over = {"name": "echo", "arguments": {"text": "b" * (4 * 1024 * 1024 + 10)}}
        await wire.request(2, "tools/call", over)
        assert (await wire.response(None))["error"]["code"] == -32600
        assert (await wire.call(3, "ping"))["result"] == {}


async def test_stdout_carries_only_json_rpc(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        await wire.call(1, "tools/call", {"name": "noisy", "arguments": {"text": "LEAK"}})
        crash = await wire.call(2, "tools/call", {"name": "fail", "arguments": {"kind": "crash"}})
        assert tool_error_code(crash["result"]) == "RUNTIME"
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.exit_code() == 0
        for line in wire.raw_lines:
            assert b"LEAK" not in line
            assert json.loads(line)["jsonrpc"] == "2.0"
        log = wire.stderr()
        assert "print() LEAK" in log and "os.write(1) LEAK" in log
        assert "boom" in log  # the crash is logged to stderr


# -- concurrency: cancellation, progress, shutdown ------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_cancelled_request_never_gets_a_response(tmp_path: Path, era: str) -> None:
    def params(**fields: Any) -> dict[str, Any]:
        return modern(**fields) if era == "modern" else fields

    async with spawn(tmp_path) as wire:
        if era == "legacy":
            await wire.handshake()
        slow = params(
            name="slow", arguments={"steps": 1000, "delay": 0.02}, _meta={"progressToken": "p"}
        )
        await wire.request(5, "tools/call", slow)
        first = await wire.read()
        assert first is not None and first["method"] == "notifications/progress"
        await wire.notify("notifications/cancelled", {"requestId": 5, "reason": "user gave up"})
        await wire.request(6, "tools/list", params())
        while (message := await wire.read()) is not None and message.get("id") != 6:
            assert message.get("method") == "notifications/progress"  # queued before the cancel
        await trio.sleep(0.2)  # long enough for several more steps had the handler survived
        await wire.close_stdin()
        with trio.fail_after(4):  # the handler would need 20 s more; it must already be gone
            remaining = await wire.read_to_eof()
        assert remaining == []
        assert all(json.loads(line).get("id") != 5 for line in wire.raw_lines)
        assert await wire.exit_code() == 0


async def test_stray_cancels_produce_no_output(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        assert (await wire.call(1, "ping"))["result"] == {}
        await wire.notify("notifications/cancelled", {"requestId": 1})  # already finished
        await wire.notify("notifications/cancelled", {"requestId": 999})  # never existed
        await wire.notify("notifications/cancelled", {"requestId": True})  # malformed
        await wire.notify("notifications/cancelled")
        await wire.notify("notifications/progress", {"progressToken": 1, "progress": 1})
        assert (await wire.call(2, "ping"))["result"] == {}


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_progress_notifications_follow_the_token(tmp_path: Path, era: str) -> None:
    arguments = {"name": "slow", "arguments": {"steps": 3, "delay": 0.01}}
    async with spawn(tmp_path) as wire:
        if era == "legacy":
            await wire.handshake()
            params: dict[str, Any] = {**arguments, "_meta": {"progressToken": 42}}
            quiet_params: dict[str, Any] = dict(arguments)
        else:
            params = modern(**arguments, _meta={"progressToken": 42})
            quiet_params = modern(**arguments)
        await wire.request("with-token", "tools/call", params)
        progress = []
        while (message := await wire.read()) is not None and "method" in message:
            progress.append(message)
        assert message is not None and message["id"] == "with-token"
        assert [note["params"]["progress"] for note in progress] == [1, 2, 3]
        assert {note["params"]["progressToken"] for note in progress} == {42}
        assert progress[0]["params"] == {
            "progressToken": 42,
            "progress": 1,
            "total": 3,
            "message": "step 1",
        }
        quiet = await wire.call("without-token", "tools/call", quiet_params)
        assert quiet["result"]["structuredContent"] == {"steps": 3}


async def test_duplicate_in_flight_id_is_refused(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        slow = {"name": "slow", "arguments": {"steps": 2, "delay": 0.1}}
        await wire.request(9, "tools/call", slow)
        await wire.request(9, "ping")
        duplicate = await wire.response(9)
        assert duplicate["error"]["code"] == -32600
        assert "result" in await wire.response(9)


async def test_eof_drains_in_flight_requests_then_exits_zero(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        await wire.request(
            1, "tools/call", {"name": "slow", "arguments": {"steps": 3, "delay": 0.1}}
        )
        await wire.close_stdin()
        remaining = await wire.read_to_eof()
        assert [message["id"] for message in remaining] == [1]
        assert await wire.exit_code() == 0


async def test_eof_answers_a_request_slower_than_the_drain_timeout(tmp_path: Path) -> None:
    # Queued lines get 0.2 s to reach the client; a request read before EOF gets its own deadline.
    async with spawn(tmp_path, "--drain-timeout", "0.2") as wire:
        await wire.handshake()
        slow = {"name": "slow", "arguments": {"steps": 6, "delay": 0.2}}
        await wire.request(1, "tools/call", slow)
        await wire.request(2, "ping")
        await wire.close_stdin()
        remaining = await wire.read_to_eof()
        assert sorted(message["id"] for message in remaining) == [1, 2]
        answer = next(message for message in remaining if message["id"] == 1)
        assert answer["result"]["content"][0]["text"] == "slept 6 steps"
        assert await wire.exit_code() == 0


async def test_a_request_past_its_own_deadline_at_eof_gets_an_error_answer(
    tmp_path: Path,
) -> None:
    async with spawn(tmp_path, "--answer-deadline", "0.5") as wire:
        await wire.handshake()
        slow = {"name": "slow", "arguments": {"steps": 100, "delay": 0.1}}
        await wire.request(1, "tools/call", slow)
        await wire.close_stdin()
        (answer,) = await wire.read_to_eof(timeout=5.0)  # long before the 10 s the tool wants
        assert answer["id"] == 1 and answer["error"]["code"] == -32000
        assert "0.5 s deadline" in answer["error"]["message"]
        assert await wire.exit_code() == 0


async def test_sigterm_drains_then_exits_zero(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.handshake()
        slow = {
            "name": "slow",
            "arguments": {"steps": 4, "delay": 0.1},
            "_meta": {"progressToken": 1},
        }
        await wire.request(1, "tools/call", slow)
        first = await wire.read()
        assert first is not None and first["method"] == "notifications/progress"
        wire.process.send_signal(signal.SIGTERM)
        remaining = await wire.read_to_eof()
        assert remaining[-1]["id"] == 1 and "result" in remaining[-1]
        assert await wire.exit_code() == 0


async def test_exit_zero_at_eof_when_idle(tmp_path: Path) -> None:
    async with spawn(tmp_path) as wire:
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.exit_code() == 0
