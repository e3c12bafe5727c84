"""The official MCP clients a host embeds walk every tool, over stdio and HTTP, in both eras.

A host lists the tools (which arms its client's check of every answer
against the tool's ``outputSchema``), then calls them; if the client throws,
the agent sees a schema error instead of the answer or of the error text.
Each test here runs :func:`tests.support.official_walk.walk` (every tool, valid and
bad input) through one official client against a real ``gno-trio mcp``
child (stdio) or ``gno-trio serve`` gateway (HTTP), with writes on:

* the Python SDK (``mcp``, as pinned in ``pyproject.toml``), every era;
* the TypeScript SDK 1.x (``@modelcontextprotocol/sdk``, 2025-11-25 only) and
  the 2.x client package (``@modelcontextprotocol/client``, both eras), pinned
  in ``tests/official_clients/package-lock.json`` and installed by
  ``npm ci`` there (``.ci/run`` does it). Under ``CI=true`` a missing install
  fails; elsewhere those tests skip and say how to install.

All walks share one index, each with its own label for what it writes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gno_trio.config.dirs import Dirs
from gno_trio.tools import CATALOGUE
from tests.support.official_walk import (
    Caller,
    Outcome,
    WalkState,
    build_walk_index,
    walk,
    walk_extra_folder,
    walk_problems,
)
from tests.support.shared import unavailable
from tests.support.stdio_session import LineBuffer, server_environment

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENTS = Path(__file__).resolve().parents[1] / "official_clients"
NODE = CLIENTS / "node_modules" / "node" / "bin" / "node"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
WALK_DEADLINE_S = 300
NODE_ANSWER_S = 120


@pytest.fixture(scope="module")
def walk_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Dirs]]:
    base = tmp_path_factory.mktemp("official-walks")
    yield base, build_walk_index(base)


def _state(base: Path, label: str) -> WalkState:
    return WalkState(label=label, extra=walk_extra_folder(base, label))


def _listing(tools: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    listed = {str(tool["name"]): tool for tool in tools}
    assert list(listed) == CATALOGUE.select("full", True), "writes on: every tool is listed"
    return listed


def _serve_command(*flags: str) -> list[str]:
    return [sys.executable, "-m", "gno_trio", *flags]


@asynccontextmanager
async def gateway(dirs: Dirs) -> AsyncIterator[str]:
    """``gno-trio serve`` with HTTP writes on over ``dirs``; yields its MCP URL."""
    process = await trio.lowlevel.open_process(
        _serve_command("serve", "--port", "0", "--json", "--mcp-enable-write", "--no-embed"),
        stdout=subprocess.PIPE,
        env=server_environment(dirs),
        cwd=REPO_ROOT,
    )
    assert process.stdout is not None
    try:
        line = await LineBuffer(process.stdout).next_line(30)
        assert line, "serve exited before it printed its URL"
        yield str(json.loads(line)["url"])
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            with trio.move_on_after(15):
                await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


# -- the Python SDK ----------------------------------------------------------------------


def _python_outcome(result: Any) -> Outcome:
    return {"result": result.model_dump(by_alias=True, exclude_none=True, mode="json")}


async def _python_walk(client: Client, base: Path, label: str) -> list[str]:
    listed = _listing(
        [tool.model_dump(by_alias=True, mode="json") for tool in (await client.list_tools()).tools]
    )

    async def call(name: str, arguments: dict[str, Any]) -> Outcome:
        try:
            return _python_outcome(await client.call_tool(name, arguments))
        except Exception as error:  # what a host would show instead of the answer
            return {"thrown": {"name": type(error).__name__, "message": str(error)}}

    called = await walk(call, listed, _state(base, label))
    return walk_problems(called, listed)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_python_client_over_stdio(mode: str, walk_base: tuple[Path, Dirs]) -> None:
    base, dirs = walk_base
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gno_trio", "mcp", "--enable-write"],
        env=server_environment(dirs),
        cwd=REPO_ROOT,
    )
    with trio.fail_after(WALK_DEADLINE_S):
        async with Client(params, mode=mode, cache=None) as client:
            assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
            problems = await _python_walk(client, base, f"py-stdio-{mode}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_python_client_over_http(mode: str, walk_base: tuple[Path, Dirs]) -> None:
    base, dirs = walk_base
    with trio.fail_after(WALK_DEADLINE_S):
        async with gateway(dirs) as url, Client(url, mode=mode, cache=None) as client:
            assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
            problems = await _python_walk(client, base, f"py-http-{mode}")
    assert problems == [], "\n".join(problems)


# -- the TypeScript SDKs, through tests/official_clients/driver.mjs ----------------------


def _node_or_skip() -> Path:
    if NODE.exists():
        return NODE
    unavailable(
        "the official TypeScript clients are not installed: run `npm ci` in tests/official_clients"
    )


def _pinned(package: str) -> str:
    manifest = json.loads((CLIENTS / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"][package])


class NodeClient:
    """driver.mjs: one official TypeScript client, one JSON line per command."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.lines = LineBuffer(process.stdout)

    async def send(self, command: Mapping[str, Any]) -> dict[str, Any]:
        await self.stdin.send_all(json.dumps(command).encode() + b"\n")
        line = await self.lines.next_line(NODE_ANSWER_S)
        assert line is not None, "the driver exited"
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def ok(self, command: Mapping[str, Any]) -> Any:
        answer = await self.send(command)
        assert "ok" in answer, (command, answer)
        return answer["ok"]

    def caller(self) -> Caller:
        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            answer = await self.send({"op": "call", "name": name, "arguments": arguments})
            return {"result": answer["ok"]} if "ok" in answer else {"thrown": answer["thrown"]}

        return call


@asynccontextmanager
async def node_client(node: Path) -> AsyncIterator[NodeClient]:
    process = await trio.lowlevel.open_process(
        [str(node), str(CLIENTS / "driver.mjs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=CLIENTS,
    )
    try:
        yield NodeClient(process)
    finally:
        assert process.stdin is not None
        with trio.move_on_after(15):
            await process.stdin.aclose()
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


NODE_CASES = [
    ("v1", "stdio", "legacy"),
    ("v1", "http", "legacy"),
    ("v2", "stdio", "legacy"),
    ("v2", "stdio", MODERN),
    ("v2", "http", "legacy"),
    ("v2", "http", MODERN),
]
PACKAGES = {"v1": "@modelcontextprotocol/sdk", "v2": "@modelcontextprotocol/client"}


@pytest.mark.parametrize(("sdk", "transport", "era"), NODE_CASES)
async def test_typescript_client(
    sdk: str, transport: str, era: str, walk_base: tuple[Path, Dirs]
) -> None:
    node = _node_or_skip()
    base, dirs = walk_base
    label = f"ts-{sdk}-{transport}-{era}"
    connect: dict[str, Any] = {"op": "connect", "sdk": sdk, "transport": transport, "era": era}
    with trio.fail_after(WALK_DEADLINE_S):
        async with node_client(node) as client:
            if transport == "stdio":
                connect.update(
                    command=sys.executable,
                    args=["-m", "gno_trio", "mcp", "--enable-write"],
                    env=server_environment(dirs),
                    cwd=str(REPO_ROOT),
                )
                problems = await _node_walk(client, connect, base, label, sdk, era)
            else:
                async with gateway(dirs) as url:
                    connect["url"] = url
                    problems = await _node_walk(client, connect, base, label, sdk, era)
    assert problems == [], "\n".join(problems)


async def _node_walk(
    client: NodeClient, connect: dict[str, Any], base: Path, label: str, sdk: str, era: str
) -> list[str]:
    connected = await client.ok(connect)
    assert connected["sdk"] == _pinned(PACKAGES[sdk])
    if connected["protocolVersion"] is not None:
        assert connected["protocolVersion"] == (LEGACY if era == "legacy" else era)
    listed = _listing((await client.ok({"op": "list"}))["tools"])
    called = await walk(client.caller(), listed, _state(base, label))
    await client.ok({"op": "close"})
    return walk_problems(called, listed)
