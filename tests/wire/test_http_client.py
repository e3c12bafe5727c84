"""The official Python SDK client (mcp 2.3.0) against the real gateway over the gno-evals index."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.tools import CATALOGUE
from tests.support.http_gateway_support import (
    engine_app,
    evals_dirs,  # noqa: F401  (fixture)
    running_gateway,
)

EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}
MODES = list(EXPECTED_VERSION)


@pytest.mark.parametrize("mode", MODES)
async def test_search_get_and_read_in_every_mode(mode: str, evals_dirs: Dirs) -> None:  # noqa: F811
    with engine_app(evals_dirs) as (app, _):
        async with (
            running_gateway(app) as running,
            Client(running.url, mode=mode, cache=None) as client,
        ):
            assert client.protocol_version == EXPECTED_VERSION[mode]
            if mode != "2026-07-28":  # a pinned modern client never asks who we are
                assert client.server_info is not None and client.server_info.name == "gno"

            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "gno_search" in names and "gno_get" in names
            assert not CATALOGUE.write_names & set(names)

            found = await client.call_tool(
                "gno_search", {"query": "error handling", "collection": "evals"}
            )
            assert not found.is_error
            structured: Any = found.structured_content
            hits = structured["results"]
            assert hits and all(hit["uri"].startswith("gno://evals/") for hit in hits)

            got = await client.call_tool("gno_get", {"ref": hits[0]["uri"], "lineCount": 5})
            assert not got.is_error
            read = await client.read_resource(hits[0]["uri"])
            assert hits[0]["docid"] in read.contents[0].text  # type: ignore[union-attr]

            with pytest.raises(MCPError) as unknown:
                await client.call_tool("gno_nope", {})
            assert unknown.value.error.code == -32602


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_client_with_a_bearer_token(mode: str, evals_dirs: Dirs, tmp_path: Path) -> None:  # noqa: F811
    token_path = tmp_path / "token"
    with engine_app(evals_dirs) as (app, _):
        async with running_gateway(app, token_file=token_path) as running:
            token = token_path.read_text().strip()
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            async with (
                http,
                Client(
                    streamable_http_client(running.url, http_client=http), mode=mode, cache=None
                ) as client,
            ):
                result = await client.call_tool("gno_status", {})
                assert not result.is_error


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_memory_tools_see_the_transport_identity(mode: str, tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(folder), name="memory", memory_managed=True)
    with engine_app(dirs, write_enabled=True) as (app, _):
        async with running_gateway(app, enable_write=True) as running:
            sessions = []
            for _ in range(2):
                async with Client(running.url, mode=mode, cache=None) as client:
                    stored = await client.call_tool(
                        "gno_remember",
                        {
                            "text": "The gateway runs on hypercorn's trio worker.",
                            "collection": "memory",
                            "scopes": ["ops"],
                            "decision": "add",
                        },
                    )
                    assert not stored.is_error, stored.content
                    recalled = await client.call_tool(
                        "gno_recall",
                        {"query": "gateway worker", "collection": "memory", "scopes": ["ops"]},
                    )
                    receipt: Any = recalled.structured_content
                    sessions.append(receipt["receipt"]["session"])
    if mode == "legacy":
        # Each HTTP session is its own memory session.
        assert sessions[0] != sessions[1]
        assert all(not s.startswith("http:") for s in sessions)
    else:
        # Sessionless: one label per caller identity (unauthenticated loopback is one caller).
        assert sessions[0] == sessions[1]
        assert re.fullmatch(r"http:[0-9a-f]{16}", sessions[0])
