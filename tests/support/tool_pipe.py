"""A spawned ``gno-trio mcp`` whose every tool answer is checked against its schema.

Tool tests over the wire want the same few moves: list the tools once to learn
their output schemas, call a tool and check its ``structuredContent``, expect
a coded tool error, wait for a background job to finish. Also here: the small
tree writer those tests build their vaults with.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from gno_trio.server.schemas import output_schema_errors
from tests.support.stdio_session import ProcessSession, open_mcp_server
from tests.support.tool_results import tool_error_code


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root`` and return ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


class Pipe:
    """A server session that checks every structuredContent against its tool's schema."""

    def __init__(self, session: ProcessSession) -> None:
        self.session = session
        self.process = session.process
        self.schemas: dict[str, dict[str, Any]] = {}

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.session.call(method, params)

    async def list_tools(self) -> dict[str, dict[str, Any]]:
        listed = (await self.call("tools/list"))["result"]["tools"]
        self.schemas = {tool["name"]: tool["outputSchema"] for tool in listed}
        return {tool["name"]: tool for tool in listed}

    def checked(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        structured: dict[str, Any] = result["structuredContent"]
        if not result.get("isError"):
            assert output_schema_errors(self.schemas[name], structured) == [], (name, structured)
        return structured

    async def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.tool(name, arguments)
        assert not result.get("isError"), result
        return self.checked(name, result)

    async def tool_error(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.session.tool(name, arguments)
        assert result["isError"] is True, result
        assert result["content"][0]["text"].startswith("Error: ")
        return str(tool_error_code(result))

    async def wait_for_job(self, job_id: str) -> dict[str, Any]:
        with trio.fail_after(15):
            while True:
                status = await self.tool("gno_job_status", {"jobId": job_id})
                if status["status"] != "running":
                    return status
                await trio.sleep(0.02)


@asynccontextmanager
async def mcp_server(env: dict[str, str], *flags: str) -> AsyncIterator[Pipe]:
    """Spawn ``gno-trio mcp *flags`` over ``env``'s index, initialized, its tools listed."""
    async with open_mcp_server(env, *flags, client_name="links-jobs-test") as session:
        pipe = Pipe(session)
        await pipe.list_tools()
        yield pipe
