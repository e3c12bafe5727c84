"""A team gateway whose session registry is slow keeps answering everything else.

The 2025-era session rows of team mode live in PostgreSQL, one network round
trip per lookup; a registry call that waits (on a lock another host holds,
on a slow network) must hold up only the request that needs it. Here the
test itself holds what those calls wait for: the advisory lock that counts
the session limits (every ``initialize`` takes it), then the session's row
(every ``resources/subscribe`` locks it), then the whole session table;
meanwhile a sessionless 2026-07-28 request to the same gateway (discover,
``gno_status``, which reports the session count) must answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import psycopg
import trio

from gno_trio.engine.team.database import advisory_key
from gno_trio.engine.team.url import TeamStore
from tests.support.gateway_process import NOTE, gateway_process, notes_index
from tests.support.http_gateway_support import (
    initialize_body,
    legacy_headers,
    modern_headers,
    modern_params,
    rpc,
)

WAIT_S = 30.0
"""How long the blocked call is held at most: the other request must answer within it."""


async def _discover(url: str) -> httpx.Response | None:
    """``server/discover``; None when no answer came within WAIT_S."""
    await trio.sleep(0.5)  # let the blocked request reach the registry
    async with httpx.AsyncClient(timeout=WAIT_S * 2) as client:
        with trio.move_on_after(WAIT_S):
            return await client.post(
                url,
                headers=modern_headers("server/discover"),
                json=rpc("server/discover", modern_params()),
            )
    return None


async def _post_in_background(
    url: str, headers: dict[str, str], body: dict[str, Any], into: list[httpx.Response]
) -> None:
    async with httpx.AsyncClient(timeout=WAIT_S * 4) as client:
        into.append(await client.post(url, headers=headers, json=body))


async def test_a_registry_call_that_waits_holds_up_only_its_own_request(
    tmp_path: Path, team_store: TeamStore
) -> None:
    notes_index(tmp_path)
    args = ("serve", "--store", team_store.url, "--subscriptions", "--no-embed", "--no-watch")
    async with gateway_process(tmp_path, *args) as announced:
        url = announced["url"]
        with (
            psycopg.connect(team_store.url, autocommit=True) as holder,
            trio.fail_after(WAIT_S * 6),
        ):
            # 1. Every initialize waits for the session-limit lock.
            holder.execute("BEGIN")
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("session-limits"),))
            opened: list[httpx.Response] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    _post_in_background, url, legacy_headers(), initialize_body(), opened
                )
                answered = await _discover(url)
                assert not opened  # the initialize still waits...
                holder.execute("COMMIT")  # ...until the lock is let go
            assert answered is not None, "server/discover waited for another request's registry"
            assert answered.status_code == 200 and "result" in answered.json()
            assert opened[0].status_code == 200
            session = opened[0].headers["mcp-session-id"]
            async with httpx.AsyncClient(timeout=WAIT_S) as client:
                ready = await client.post(
                    url,
                    headers=legacy_headers(session),
                    json=rpc("notifications/initialized", None, None),
                )
                assert ready.status_code == 202

            # 2. Every resources/subscribe of the session waits for its row.
            holder.execute("BEGIN")
            holder.execute(
                "SELECT 1 FROM gno_gateway_sessions WHERE id = %s FOR UPDATE", (session,)
            )
            subscribed: list[httpx.Response] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    _post_in_background,
                    url,
                    legacy_headers(session),
                    rpc("resources/subscribe", {"uri": NOTE}, 2),
                    subscribed,
                )
                answered = await _discover(url)
                assert not subscribed
                holder.execute("COMMIT")
            assert answered is not None, "server/discover waited for another request's registry"
            assert subscribed[0].status_code == 200
            assert subscribed[0].json()["result"] == {}

            # 3. gno_status reports the gateway's sessions without reading the table on the loop.
            holder.execute("BEGIN")
            holder.execute("LOCK TABLE gno_gateway_sessions IN ACCESS EXCLUSIVE MODE")
            status_answered = False
            async with httpx.AsyncClient(timeout=WAIT_S * 2) as client:
                with trio.move_on_after(WAIT_S):
                    status = await client.post(
                        url,
                        headers=modern_headers("tools/call", "gno_status"),
                        json=rpc("tools/call", modern_params(name="gno_status", arguments={})),
                    )
                    status_answered = True
                holder.execute("COMMIT")
            assert status_answered, "gno_status waited for the session table"
            assert status.status_code == 200 and "result" in status.json()
