"""The official Python SDK client (mcp 2.3.0) driving the echo app over stdio, in every mode."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

REPO_ROOT = Path(__file__).resolve().parents[2]
ECHO_SERVER = StdioServerParameters(
    command=sys.executable, args=["-m", "tests.support.mcp_echo_app"], cwd=REPO_ROOT
)
EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
async def test_list_call_and_read_in_every_mode(mode: str) -> None:
    seen_progress: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen_progress.append(progress)

    with trio.fail_after(15):
        async with Client(ECHO_SERVER, mode=mode, cache=None) as client:
            assert client.protocol_version == EXPECTED_VERSION[mode]
            if mode != "2026-07-28":  # a pinned modern client never asks who we are
                assert client.server_info is not None and client.server_info.name == "gno-echo"

            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["echo", "slow", "fail", "noisy"]
            assert tools.tools[0].input_schema["required"] == ["text"]

            echoed = await client.call_tool("echo", {"text": "hi", "repeat": 2})
            assert not echoed.is_error
            assert echoed.content[0].text == "hihi"  # type: ignore[union-attr]
            structured: Any = echoed.structured_content
            assert structured["client"] == "mcp"  # the SDK's default clientInfo name
            assert structured["era"] == ("legacy" if mode == "legacy" else "modern")

            invalid = await client.call_tool("echo", {"text": 5})
            assert invalid.is_error and "$.text" in invalid.content[0].text  # type: ignore[union-attr]

            slow = await client.call_tool(
                "slow", {"steps": 3, "delay": 0.01}, progress_callback=on_progress
            )
            assert not slow.is_error

            read = await client.read_resource("echo://greeting")
            assert read.contents[0].text == "hello from gno-echo"  # type: ignore[union-attr]

            with pytest.raises(MCPError) as unknown:
                await client.call_tool("gno_nope", {})
            assert unknown.value.error.code == -32602

    assert seen_progress == [1, 2, 3]
