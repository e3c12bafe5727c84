"""A real server (``build_app`` over a real index) on in-memory stdio streams.

Tests that want the whole stdio transport without a child process connect
here: the client end speaks raw JSON-RPC in either era, so identity comes from
a real ``initialize`` or a real ``_meta`` envelope, and every successful tool
result is checked against the schema the server advertised.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from gno_trio.compose import build_app
from gno_trio.engine import Engine
from gno_trio.runtime import Runtime
from gno_trio.transports.stdio import serve_stdio
from tests.support.memory_schemas import check_schema, seed_recall_schema
from tests.support.stdio_session import MODERN_VERSION as MODERN
from tests.support.stdio_session import PROTOCOL_VERSION as LEGACY
from tests.support.stdio_session import StdioSession
from tests.support.tool_results import tool_error_code


class Conversation:
    """A client end of one in-process stdio connection, speaking raw JSON-RPC."""

    def __init__(self, send: trio.abc.SendStream, receive: trio.abc.ReceiveStream) -> None:
        self.wire = StdioSession(send, receive, timeout=20)
        self.era = LEGACY
        self.envelope: dict[str, Any] = {}
        self.schemas: dict[str, dict[str, Any]] = {}

    async def send(self, message: dict[str, Any]) -> None:
        await self.wire.send(message)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.era == MODERN:
            params = {**(params or {}), "_meta": self.envelope}
        return await self.wire.call(method, params)

    async def open_legacy(self, client_info: dict[str, Any]) -> None:
        answer = await self.request(
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": client_info},
        )
        assert answer["result"]["protocolVersion"] == LEGACY
        await self.wire.notify("notifications/initialized")

    async def open_modern(self, client_info: dict[str, Any] | None) -> None:
        self.era = MODERN
        self.envelope = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        if client_info is not None:
            self.envelope["io.modelcontextprotocol/clientInfo"] = client_info
        answer = await self.request("server/discover")
        assert answer["result"]["supportedVersions"] == [MODERN]

    async def tools(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = (await self.request("tools/list"))["result"]["tools"]
        self.schemas = {tool["name"]: tool.get("outputSchema") or {} for tool in listed}
        return listed

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool result; a successful one is checked against the advertised output schema."""
        answer = await self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        if not result.get("isError"):
            if not self.schemas:
                await self.tools()
            check_schema(self.schemas[name], result["structuredContent"])
            if name == "gno_recall":
                check_schema(seed_recall_schema(), result["structuredContent"])
        return result

    async def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert not result.get("isError"), result
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    async def error(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.call(name, arguments)
        assert result.get("isError"), result
        code: str = tool_error_code(result)
        assert result["content"][0]["text"].startswith("Error: ")
        return code


@asynccontextmanager
async def serving(
    engine: Engine, *, write: bool = True, profile: str = "full"
) -> AsyncIterator[tuple[Conversation, Runtime]]:
    """Serve ``engine`` over in-memory stdio; yield the client end and the runtime."""
    runtime = Runtime(engine=engine, write_enabled=write, tool_profile=profile)
    app = build_app(runtime)
    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    from_server_send, from_server_receive = trio.testing.memory_stream_one_way_pair()
    async with trio.open_nursery() as nursery:

        async def run() -> None:
            await serve_stdio(
                app, stdin=to_server_receive, stdout=from_server_send, handle_signals=False
            )

        nursery.start_soon(run)
        try:
            yield Conversation(to_server_send, from_server_receive), runtime
        finally:
            await to_server_send.aclose()
