"""A PostgreSQL store that is slow or goes away under a running call (team mode).

Engine calls run in worker threads through :class:`~gno_trio.runtime.Runtime`,
as on the embedded store. A caller that gives up (a cancelled request, a
client gone) must not leave its statement running on the server, holding a
pooled connection and a worker thread: the statement is cancelled and the
connection goes back to the pool, usable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Team
from gno_trio.engine.team.database import POOL_SIZE
from gno_trio.engine.team.url import TeamStore
from gno_trio.runtime import Runtime


@pytest.fixture
def team_runtime(tmp_path: Path, team_store: TeamStore) -> Iterator[Runtime]:
    """A runtime over an engine joined to a team on the test's own database."""
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.join_team(Team.open(team_store, engine.location.index_name))
        yield Runtime(engine=engine)


def waiting_statements(store: TeamStore) -> int:
    """Statements of this database that wait on a lock (a cancelled one no longer does)."""
    with psycopg.connect(store.url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


async def test_a_cancelled_call_cancels_its_statement_and_returns_the_connection(
    team_runtime: Runtime, team_store: TeamStore
) -> None:
    engine = team_runtime.engine
    assert (await team_runtime.run(engine.traces.list))["traces"] == []
    # Another session holds the traces table: listing them now waits on the server.
    with psycopg.connect(team_store.url) as blocker:
        blocker.execute("LOCK TABLE gno_traces IN ACCESS EXCLUSIVE MODE")
        for _ in range(POOL_SIZE):  # as many as the pool has connections
            with trio.move_on_after(1.0) as gave_up:
                await team_runtime.run(engine.traces.list)
            assert gave_up.cancelled_caught
        with trio.fail_after(10):  # generous for a loaded machine; uncancelled, never
            while await trio.to_thread.run_sync(waiting_statements, team_store):
                await trio.sleep(0.05)
        # The pool is whole again while the table is still locked: the audit answers.
        with trio.fail_after(30):
            listed = await team_runtime.run(engine.egress.audit_list)
        assert listed["receipts"] == []
        blocker.rollback()
    with trio.fail_after(30):
        assert (await team_runtime.run(engine.traces.list))["traces"] == []
