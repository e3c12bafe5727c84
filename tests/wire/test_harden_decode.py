"""Untrusted bytes never kill a server: every decode failure is a parse error, then service goes on.

A deeply nested message used to raise ``RecursionError`` out of msgspec: the
stdio server exited and the gateway answered 500. Nesting is now bounded
before msgspec runs, and any decode failure is ``-32700``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.config.dirs import Dirs
from gno_trio.protocol.jsonrpc import MAX_NESTING_DEPTH, decode_line, nesting_exceeds
from tests.support.http_gateway_support import (
    LEGACY_POST_HEADERS,
    modern_headers,
    modern_params,
    rpc,
    running_gateway,
)
from tests.support.mcp_echo_app import build_app
from tests.support.stdio_session import ProcessSession, open_stdio_process, server_environment

DEEP = b"[" * 1000 + b"]" * 1000


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}\n'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(_json, st.integers(min_value=0, max_value=6))
def test_the_depth_bound_agrees_with_the_real_nesting(value: Any, limit: int) -> None:
    encoded = json.dumps(value).encode()
    assert nesting_exceeds(encoded, limit) == (_depth(value) > limit)


def _ping_nested(levels: int) -> bytes:
    """A ping whose whole message nests ``levels`` deep (the envelope and params are two)."""
    nested: Any = 1
    for _ in range(levels - 2):
        nested = [nested]
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": nested}}
    ).encode()


def test_a_thousand_levels_is_a_parse_error_and_the_limit_itself_decodes() -> None:
    assert getattr(decode_line(DEEP), "code", None) == -32700
    assert getattr(decode_line(_ping_nested(MAX_NESTING_DEPTH)), "method", None) == "ping"
    too_deep = decode_line(_ping_nested(MAX_NESTING_DEPTH + 1))
    assert getattr(too_deep, "code", None) == -32700


async def test_stdio_answers_deep_nesting_with_parse_error_then_ping(dirs: Dirs) -> None:
    dirs.config.mkdir(parents=True)
    command = [sys.executable, "-m", "gno_trio", "mcp"]
    async with open_stdio_process(command, env=server_environment(dirs)) as process:
        session = ProcessSession(process)
        await session.initialize("deep-probe")
        for line in (
            DEEP,
            b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":' + DEEP + b"}}",
            b"[" * 200_000,
        ):
            await session.send_stream.send_all(line + b"\n")
            answer = await session.receive()
            assert answer["error"]["code"] == -32700, answer
            assert answer["id"] is None
        pong = await session.call("ping")
        assert pong["result"] == {}
        assert process.returncode is None


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_http_answers_deep_nesting_with_400_and_keeps_serving(era: str) -> None:
    headers = LEGACY_POST_HEADERS if era == "legacy" else modern_headers("tools/list")
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        reply = await client.post(running.url, content=DEEP, headers=headers)
        assert reply.status_code == 400
        assert reply.json()["error"]["code"] == -32700
        follow = await client.post(
            running.url,
            json=rpc("tools/list", modern_params()),
            headers=modern_headers("tools/list"),
        )
        assert follow.status_code == 200
        assert follow.json()["result"]["tools"]
