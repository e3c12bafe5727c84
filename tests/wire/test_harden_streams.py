"""GET streams never outlive their rights, and idle streams cannot lock sessions out.

* Rotating or deleting the token file ends an open stream at its next
  keep-alive, with no other request needed to notice.
* A stream lives at most one session idle timeout; a session whose client
  does not come back is then reaped, and a full session store answers a clear
  429 with ``Retry-After`` meanwhile.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
import trio
import trio.testing

from gno_trio.config import GatewayLimits
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.http_gateway_support import (
    RELAXED,
    idle_for,
    initialize_body,
    legacy_headers,
    running_gateway,
)
from tests.support.mcp_echo_app import build_app
from tests.support.waiting import real_time_limit

TOKEN = "s" * 48


def _write_token(path: Path, token: str) -> None:
    path.write_text(token + "\n")
    os.chmod(path, 0o600)


async def _open_session(client: httpx.AsyncClient, url: str, **headers: str) -> str:
    opened = await client.post(url, headers={**legacy_headers(), **headers}, json=initialize_body())
    assert opened.status_code == 200, opened.text
    session_id: str = opened.headers["mcp-session-id"]
    return session_id


def _stream_headers(session_id: str, **headers: str) -> dict[str, str]:
    return {
        **legacy_headers(session_id),
        "accept": "text/event-stream",
        **headers,
    }


async def _seconds_until_stream_ends(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], change: object, limit: float
) -> float:
    """Open a GET stream, call ``change()`` once it is flowing, time until the server ends it."""
    async with client.stream("GET", url, headers=headers) as stream:
        assert stream.status_code == 200
        chunks = stream.aiter_bytes()
        with trio.fail_after(5):
            assert b"keep-alive" in await chunks.__anext__()
        assert callable(change)
        change()
        started = trio.current_time()
        with trio.fail_after(limit):
            async for _ in chunks:
                pass
        return trio.current_time() - started


@pytest.mark.parametrize("how", ["rotated", "deleted"])
async def test_token_change_ends_an_open_stream_at_the_next_keep_alive(
    tmp_path: Path, how: str
) -> None:
    token_path = tmp_path / "token"
    _write_token(token_path, TOKEN)
    settings = GatewaySettings(port=0, limits=RELAXED, token_file=token_path, stream_keepalive=0.2)
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with running_gateway(build_app(), settings) as running, httpx.AsyncClient() as client:
        session_id = await _open_session(client, running.url, **auth)

        def change() -> None:
            if how == "rotated":
                _write_token(token_path, "n" * 48)
            else:
                token_path.unlink()

        waited = await _seconds_until_stream_ends(
            client, running.url, _stream_headers(session_id, **auth), change, limit=3.0
        )
        assert waited < 1.5
        # The session went with the credentials it was opened under.
        gone = await client.post(
            running.url, headers={**legacy_headers(session_id), **auth}, json=initialize_body()
        )
        assert gone.status_code in (401, 404, 503)


async def test_idle_streams_expire_so_new_sessions_get_in(
    mock_clock: trio.testing.MockClock,
) -> None:
    """Trio's clock stands still here and the test jumps it: the streams end by
    themselves at one idle timeout, not before, whatever the machine's load."""
    limits = GatewayLimits(
        max_requests_per_minute=100_000, max_sessions=2, session_idle_timeout_ms=1000
    )
    settings = GatewaySettings(port=0, limits=limits, stream_keepalive=0.2)
    with real_time_limit():
        async with (
            running_gateway(build_app(), settings) as running,
            httpx.AsyncClient() as client,
        ):
            ended: list[float] = []

            async def hold_stream(
                session_id: str, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
            ) -> None:
                async with client.stream(
                    "GET", running.url, headers=_stream_headers(session_id)
                ) as stream:
                    task_status.started()
                    async for _ in stream.aiter_bytes():
                        pass
                ended.append(trio.current_time())

            async with trio.open_nursery() as nursery:
                for _ in range(2):
                    await nursery.start(hold_stream, await _open_session(client, running.url))
                full = await client.post(
                    running.url, headers=legacy_headers(), json=initialize_body(9)
                )
                assert full.status_code == 429
                assert full.json()["id"] == 9
                assert "sessions are in use" in full.json()["error"]["message"]
                assert 1 <= int(full.headers["retry-after"]) <= 2
                await idle_for(mock_clock, 0.9)
                assert ended == []  # not before one idle timeout
                await idle_for(mock_clock, 0.2)
            # Each stream ended after one idle timeout, not when the client chose.
            assert len(ended) == 2
            # Nobody came back: the sessions are reaped and a newcomer gets in.
            for _ in range(20):  # reaper passes, a quarter of the idle timeout apart
                retry = await client.post(
                    running.url, headers=legacy_headers(), json=initialize_body(10)
                )
                if retry.status_code == 200:
                    break
                assert retry.status_code == 429
                await idle_for(mock_clock, 0.25)
            assert retry.status_code == 200
