"""A gateway whose PostgreSQL connections drop mid-request (team mode).

The server ends every connection of the gateway (an administrator's
``pg_terminate_backend``, as a failover or a restart does) while a request
is running on one of them. The caller gets a retryable error with a precise
code (``STORE_UNAVAILABLE``), and the gateway's next requests work: the pool
replaces the lost connections, the 2025-era session made before the drop is
still served, and the listener comes back. While the database refuses
connections altogether, the gateway answers what needs its session rows
with 503 and ``Retry-After``.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import trio

from gno_trio.engine.team.url import TeamStore
from tests.support.gateway_process import gateway_process
from tests.support.http_gateway_support import (
    check_schema,
    legacy_headers,
    modern_headers,
    modern_params,
    rpc,
)
from tests.support.team_hosts import host, listener_pids, open_session


async def trace_list(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    answer = await client.post(
        url,
        headers=modern_headers("tools/call", "gno_trace_list"),
        json=rpc("tools/call", modern_params(name="gno_trace_list", arguments={})),
    )
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()["result"]
    return result


def backends_of(
    store: TeamStore,
    gateway_pid: int,
    *,
    waiting: bool = False,
    through: psycopg.Connection[Any] | None = None,
) -> list[int]:
    """The server processes of a gateway's connections (``waiting``: those blocked on a lock)."""
    with contextlib.ExitStack() as stack:
        conn = through or stack.enter_context(psycopg.connect(store.url, autocommit=True))
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s"
            + (" AND wait_event_type = 'Lock'" if waiting else ""),
            (f"gno-trio:{gateway_pid}@%",),
        ).fetchall()
    return [row[0] for row in rows]


def drop_connections(
    store: TeamStore, gateway_pid: int, *, through: psycopg.Connection[Any] | None = None
) -> int:
    """End every connection the gateway holds (``through`` an open connection); how many."""
    pids = backends_of(store, gateway_pid, through=through)
    with contextlib.ExitStack() as stack:
        conn = through or stack.enter_context(psycopg.connect(store.url, autocommit=True))
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return len(pids)


async def test_a_request_cut_off_by_the_database_is_retryable_and_the_gateway_reconnects(
    tmp_path: Path, team_store: TeamStore
) -> None:
    base = host(tmp_path / "a")
    serve = ("serve", "--store", team_store.url, "--no-embed", "--no-watch")
    async with gateway_process(base, *serve) as gateway, httpx.AsyncClient(timeout=60) as client:
        url, pid = gateway["url"], gateway["process"].pid
        session = await open_session(client, url, ready_on=url)
        assert not (await trace_list(client, url)).get("isError")

        with psycopg.connect(team_store.url) as blocker:
            blocker.execute("LOCK TABLE gno_traces IN ACCESS EXCLUSIVE MODE")
            answered: list[dict[str, Any]] = []
            async with trio.open_nursery() as nursery:

                async def in_flight() -> None:
                    answered.append(await trace_list(client, url))

                nursery.start_soon(in_flight)
                with trio.fail_after(30):  # the listing now waits on the server
                    while not await trio.to_thread.run_sync(
                        lambda: backends_of(team_store, pid, waiting=True)
                    ):
                        await trio.sleep(0.05)
                assert await trio.to_thread.run_sync(drop_connections, team_store, pid) >= 2
            blocker.rollback()
        cut = answered[0]
        assert cut.get("isError"), cut
        said = cut["content"][0]["text"]
        assert said.startswith("Error: STORE_UNAVAILABLE: ") and "try again" in said, cut

        # Tried again, it works: the pool replaced the connections the server ended.
        assert not (await trace_list(client, url)).get("isError")
        listed = await client.post(url, headers=legacy_headers(session), json=rpc("tools/list"))
        assert listed.status_code == 200 and listed.json()["result"]["tools"]
        with trio.fail_after(30):  # the listener is back on the store too
            while not await trio.to_thread.run_sync(listener_pids, team_store, pid):
                await trio.sleep(0.1)

        # While the database refuses every connection, the session rows cannot be read:
        # a 2025-era request is answered 503 with Retry-After, not a bare failure.
        with store_away(team_store, pid):
            away = await client.post(url, headers=legacy_headers(session), json=rpc("tools/list"))
        assert away.status_code == 503 and away.headers["retry-after"] == "1", away.text
        check_schema("mcp-http-error", away.json())
        back = await client.post(url, headers=legacy_headers(session), json=rpc("tools/list"))
        assert back.status_code == 200 and back.json()["result"]["tools"]


@contextmanager
def store_away(store: TeamStore, gateway_pid: int) -> Iterator[None]:
    """The store's database refuses new connections, and the gateway's are ended."""
    parts = urllib.parse.urlsplit(store.url)
    database = parts.path.lstrip("/")
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false".encode())
        try:
            drop_connections(store, gateway_pid, through=conn)
            yield
        finally:
            conn.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true".encode())
