"""serve_stdio over in-memory streams: framing and failure paths that need no subprocess."""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec
import trio
import trio.testing

from gno_trio.server.context import ToolCallContext
from gno_trio.server.dispatch import McpApp
from gno_trio.server.tooltypes import BoundTool, ToolResult, ToolSpec
from gno_trio.transports.stdio import serve_stdio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "memory", "version": "1"},
    },
}


class NoInput(msgspec.Struct):
    pass


async def undecodable(args: NoInput, ctx: ToolCallContext) -> ToolResult:
    # A file name read with surrogateescape: valid Python, not valid UTF-8 JSON.
    return ToolResult(text="bad \udcff name", structured=None)


async def fine(args: NoInput, ctx: ToolCallContext) -> ToolResult:
    return ToolResult(text=f"ok {ctx.request_id}", structured=None)


def tool(name: str, handler: Any) -> BoundTool:
    spec = ToolSpec(name, name, NoInput, {"type": "object"}, None, {})
    return BoundTool(spec, handler)


APP = McpApp(
    name="memory",
    version="1",
    tools=[tool("undecodable", undecodable), tool("fine", fine)],
    instance_id="inst-1",
)


async def exchange(chunks: list[bytes], app: McpApp = APP) -> tuple[int, list[dict[str, Any]]]:
    """Feed ``chunks`` to a server, close its input, and collect every output line."""
    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    from_server_send, from_server_receive = trio.testing.memory_stream_one_way_pair()
    status: list[int] = []
    output = bytearray()

    async def run_server() -> None:
        status.append(
            await serve_stdio(
                app, stdin=to_server_receive, stdout=from_server_send, handle_signals=False
            )
        )
        await from_server_send.aclose()

    async def collect() -> None:
        while chunk := await from_server_receive.receive_some():
            output.extend(chunk)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_server)
            nursery.start_soon(collect)
            for chunk in chunks:
                await to_server_send.send_all(chunk)
                await trio.sleep(0)
            await to_server_send.aclose()
    assert output.endswith(b"\n")
    return status[0], [json.loads(line) for line in output.splitlines()]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call(request_id: int, name: str) -> bytes:
    params = {"name": name, "arguments": {}}
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


async def test_unencodable_result_becomes_internal_error() -> None:
    status, messages = await exchange([line(INITIALIZE), call(1, "undecodable"), call(2, "fine")])
    by_id = {message["id"]: message for message in messages}
    assert status == 0
    assert by_id[1]["error"]["code"] == -32603
    assert by_id[2]["result"]["content"][0]["text"] == "ok 2"


async def test_pipelined_requests_each_get_one_intact_line() -> None:
    requests = b"".join(call(i, "fine") for i in range(1, 201))
    status, messages = await exchange([line(INITIALIZE), requests])
    assert status == 0
    answered = sorted(message["id"] for message in messages)
    assert answered == list(range(201))
    assert all(m["result"]["content"][0]["text"] == f"ok {m['id']}" for m in messages if m["id"])


async def test_a_line_split_into_single_bytes_is_reassembled() -> None:
    data = line(INITIALIZE) + call(1, "fine")
    status, messages = await exchange([data[i : i + 1] for i in range(len(data))])
    assert status == 0 and {message["id"] for message in messages} == {0, 1}


async def test_final_line_without_newline_is_served() -> None:
    status, messages = await exchange([line(INITIALIZE), call(1, "fine").rstrip(b"\n")])
    assert status == 0 and {message["id"] for message in messages} == {0, 1}


async def test_session_identity_defaults_to_the_app_instance_id() -> None:
    async def whoami(args: NoInput, ctx: ToolCallContext) -> ToolResult:
        return ToolResult(text=ctx.session_id, structured=None)

    app = McpApp(name="memory", version="1", tools=[tool("whoami", whoami)], instance_id="inst-9")
    _, messages = await exchange([line(INITIALIZE), call(1, "whoami")], app)
    assert messages[-1]["result"]["content"][0]["text"] == "inst-9"


class _StalledStdout(trio.abc.SendStream):
    """A client that never reads what the server writes."""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.sleep_forever()

    async def wait_send_all_might_not_block(self) -> None:
        await trio.sleep_forever()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def _flood_a_client_that_never_reads(answer_bytes: int, requests: int) -> int:
    """How many of ``requests`` calls the server ran before it stopped taking more."""
    ran = 0

    async def big(args: NoInput, ctx: ToolCallContext) -> ToolResult:
        nonlocal ran
        ran += 1
        return ToolResult(text="x" * answer_bytes, structured=None)

    app = McpApp(name="memory", version="1", tools=[tool("big", big)], instance_id="inst-1")
    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    flood = line(INITIALIZE) + b"".join(call(i, "big") for i in range(1, requests + 1))
    await to_server_send.send_all(flood)
    with trio.move_on_after(3):
        await serve_stdio(
            app, stdin=to_server_receive, stdout=_StalledStdout(), handle_signals=False
        )
    return ran


async def test_a_client_that_never_reads_stops_being_served_small_answers() -> None:
    # Without a bound every request would run and its answer wait in memory. The
    # bound: 32 requests in flight, 256 lines queued, and the one batch the writer
    # took before its write stalled (at most one line per request slot).
    ran = await _flood_a_client_that_never_reads(answer_bytes=10, requests=2000)
    assert 32 <= ran <= 32 + 256 + 32


async def test_a_client_that_never_reads_holds_a_bounded_number_of_large_answers() -> None:
    # 1 MiB answers: the outbox's byte budget (32 MiB) bounds them, not its line count.
    ran = await _flood_a_client_that_never_reads(answer_bytes=1024 * 1024, requests=200)
    assert 32 <= ran <= 32 + 33 + 2


async def test_answers_larger_than_the_stdout_pipe_arrive_whole_and_in_order() -> None:
    # Each answer is bigger than a pipe's buffer, so writing it straight to the
    # pipe stops part-way: the rest must follow before any other line starts.
    body = 300_000

    async def large(args: NoInput, ctx: ToolCallContext) -> ToolResult:
        return ToolResult(text=f"{ctx.request_id}:" + "x" * body, structured=None)

    app = McpApp(name="memory", version="1", tools=[tool("large", large)], instance_id="i")
    read_fd, write_fd = os.pipe()
    stdout = trio.lowlevel.FdStream(write_fd)
    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    output = bytearray()

    async def serve() -> None:
        await serve_stdio(app, stdin=to_server_receive, stdout=stdout, handle_signals=False)
        await stdout.aclose()

    async def collect() -> None:
        async with trio.lowlevel.FdStream(read_fd) as reader:
            while chunk := await reader.receive_some(4096):  # slower than the server writes
                output.extend(chunk)
                await trio.sleep(0)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            nursery.start_soon(collect)
            await to_server_send.send_all(
                line(INITIALIZE) + b"".join(call(i, "large") for i in range(1, 21))
            )
            await to_server_send.aclose()
    messages = [json.loads(raw) for raw in output.splitlines()]
    assert sorted(message["id"] for message in messages) == list(range(21))
    for message in messages:
        if message["id"]:
            assert message["result"]["content"][0]["text"] == f"{message['id']}:" + "x" * body
