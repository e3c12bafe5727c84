"""Hosts of a team: a data directory per host over one PostgreSQL store.

Team-mode tests start one gateway process per host; each host has its own
directories with a memory collection, and sessions made on one host are
finished on another. Also here: a writer on one host's side holding the
team's write lease, and how to find a gateway's NOTIFY listener
connections on the store, to cut them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import httpx
import psycopg

from gno_trio.config.dirs import Dirs
from gno_trio.config.features import RetrievalTraces, TraceRetention
from gno_trio.engine import Engine
from gno_trio.engine.team.url import TeamStore
from tests.conftest import gno_env
from tests.support.gateway_process import gateway_process, memory_index
from tests.support.http_gateway_support import initialize_body, legacy_headers, rpc

HOLD_LEASE = (
    "import sys\n"
    "from gno_trio.engine import Engine, Team\n"
    "from gno_trio.engine.team.url import TeamStore\n"
    "engine = Engine.open()  # the directories of the host, from the environment\n"
    "engine.join_team(Team.open(TeamStore(sys.argv[1]), 'default'))\n"
    "with engine.lease():\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.readline()\n"
)


def hold_lease(
    store: TeamStore, base: Path, script: str = HOLD_LEASE, *argv: str
) -> subprocess.Popen[str]:
    """A writer on host ``base``'s side that holds the team's write lease until killed.

    ``script`` is run with the store's URL and ``argv``; it prints ``held`` once it holds it.
    """
    holder = subprocess.Popen(
        [sys.executable, "-c", script, store.url, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=gno_env(base),
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def host(base: Path, *, traced: bool = False) -> Path:
    """One host's data directory, with a memory collection (and, ``traced``, tracing on)."""
    base.mkdir(parents=True)
    memory_index(base)
    if traced:
        dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
        tracing = RetrievalTraces(
            enabled=True, redaction_mode="metadata", retention=TraceRetention()
        )
        with Engine.open(dirs=dirs) as engine:
            engine.update_config(lambda current: attrs.evolve(current, retrieval_traces=tracing))
    return base


@asynccontextmanager
async def okapi_gateways(tmp_path: Path, store: TeamStore) -> AsyncIterator[tuple[Path, str, str]]:
    """Writable gateways A and B (hosts ``tmp_path/a`` and ``/b``, no embedding or folder
    watch) on ``store``, A having seeded the team with collection ``notes`` (one note about
    the okapi); the notes folder and the two MCP URLs."""
    a, b = host(tmp_path / "a"), host(tmp_path / "b")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "okapi.md").write_text("# Okapi\n\nThe okapi is a forest giraffe.\n")
    with Engine.open(dirs=Dirs(a / "config", a / "data", a / "cache")) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
    serve = ("serve", "--store", store.url, "--mcp-enable-write", "--no-embed", "--no-watch")
    async with gateway_process(a, *serve) as on_a, gateway_process(b, *serve) as on_b:
        yield notes, on_a["url"], on_b["url"]


async def open_session(client: httpx.AsyncClient, url: str, ready_on: str) -> str:
    """A 2025-era session made on ``url``; ``notifications/initialized`` goes to ``ready_on``."""
    made = await client.post(url, headers=legacy_headers(), json=initialize_body())
    assert made.status_code == 200
    session = made.headers["mcp-session-id"]
    ready = await client.post(
        ready_on, headers=legacy_headers(session), json=rpc("notifications/initialized", None, None)
    )
    assert ready.status_code == 202
    return session


def listener_pids(store: TeamStore, gateway_pid: int) -> list[int]:
    """The server processes of a gateway's NOTIFY listener connections."""
    with psycopg.connect(store.url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s "
            "AND query LIKE 'LISTEN%%'",
            (f"gno-trio:{gateway_pid}@%",),
        ).fetchall()
    return [row[0] for row in rows]
