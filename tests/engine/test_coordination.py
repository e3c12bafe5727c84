"""The coordination plane: the write lease on both stores; on PostgreSQL the rows written
once, the config revision, NOTIFY and a database that drops its connections.

Each PostgreSQL test gets a database of its own on the run's throwaway server
(``team_store``, :mod:`tests.support.postgres`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gno_trio.engine.store.lease import LOCKED_MESSAGE, FileLease, Lease
from gno_trio.engine.team.database import TeamDatabase, connect, open_team
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.engine.team.notify import Listener
from gno_trio.engine.team.sessions import SESSIONS_CHANNEL, TeamSessions
from gno_trio.engine.team.shared import TeamConfig, deployment_caller_key
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError
from tests.conftest import STORES


class Leases:
    """The write lease of one store, as many holders as a test needs, and a holder process."""

    def __init__(self, make: Callable[[str], Lease], holder: list[str]) -> None:
        self.make = make
        self.holder = holder
        """argv of a process that holds index ``default``'s lease until killed."""


_HOLDERS = {
    "sqlite": (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from gno_trio.engine.store.lease import FileLease\n"
        "with FileLease(Path(sys.argv[1])).hold():\n"
        "    print('held', flush=True); time.sleep(600)\n"
    ),
    "postgresql": (
        "import sys, time\n"
        "from gno_trio.engine.team.database import open_team\n"
        "from gno_trio.engine.team.lease import AdvisoryLease\n"
        "from gno_trio.engine.team.url import TeamStore\n"
        "with AdvisoryLease(open_team(TeamStore(sys.argv[1])), 'default').hold():\n"
        "    print('held', flush=True); time.sleep(600)\n"
    ),
}


@pytest.fixture(params=STORES)
def leases(request: pytest.FixtureRequest, tmp_path: Path) -> Leases:
    """The embedded lease (a lock file per data directory) or team mode's (per index)."""
    if request.param == "sqlite":
        path = tmp_path / "default.lock"
        holder = [sys.executable, "-c", _HOLDERS["sqlite"], str(path)]
        return Leases(lambda index: FileLease(tmp_path / f"{index}.lock"), holder)
    team: TeamDatabase = request.getfixturevalue("team")
    holder = [sys.executable, "-c", _HOLDERS["postgresql"], team.store.url]
    return Leases(lambda index: AdvisoryLease(team, index), holder)


def test_the_lease_is_refused_to_a_second_holder(leases: Leases) -> None:
    first, second = leases.make("default"), leases.make("default")
    with first.hold(wait_seconds=0):
        assert second.is_held()
        with pytest.raises(GnoError) as refused:
            second.hold(wait_seconds=0.1).__enter__()
        assert refused.value.code == "LOCKED"
        assert refused.value.message.startswith(LOCKED_MESSAGE)
        with leases.make("other").hold(wait_seconds=0):
            pass  # another index (or data directory) has a lease of its own
    assert not second.is_held()
    with second.hold(wait_seconds=0) as held:
        assert held.active and held.where == second.where
    assert not held.active


def test_a_waiting_writer_stops_when_its_call_is_cancelled(leases: Leases) -> None:
    lease = leases.make("default")
    with lease.hold(wait_seconds=0), pytest.raises(GnoError) as stopped:
        lease.hold(wait_seconds=60, should_stop=lambda: True).__enter__()
    assert stopped.value.code == "LOCKED" and "cancelled" in stopped.value.message


def test_a_holder_killed_hard_loses_the_lease_and_was_named(leases: Leases) -> None:
    holder = subprocess.Popen(leases.holder, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        lease = leases.make("default")
        with pytest.raises(GnoError) as refused:
            lease.hold(wait_seconds=0).__enter__()
        assert refused.value.details is not None
        assert refused.value.details["holderPid"] == holder.pid
        assert f"held by process {holder.pid}" in refused.value.message
        holder.kill()
        holder.wait()
        with lease.hold(wait_seconds=30) as held:  # the kernel or the server lets it go
            assert held.active
    finally:
        holder.kill()
        holder.wait()


def test_the_team_lease_names_a_holder_in_this_process_too(team: TeamDatabase) -> None:
    with AdvisoryLease(team, "default").hold(wait_seconds=0), pytest.raises(GnoError) as refused:
        AdvisoryLease(team, "default").hold(wait_seconds=0).__enter__()
    assert refused.value.details is not None
    assert refused.value.details["holderPid"] == os.getpid()


def test_every_gateway_gets_the_deployment_caller_key_made_once(
    team: TeamDatabase, team_store: TeamStore
) -> None:
    key = deployment_caller_key(team)
    assert len(key) == 32
    other = open_team(team_store)
    try:
        assert deployment_caller_key(other) == key
    finally:
        other.close()


def test_a_config_change_from_a_stale_revision_is_a_conflict(team: TeamDatabase) -> None:
    here, there = TeamConfig(team, "default"), TeamConfig(team, "default")
    assert here.read() == (None, 0)
    assert here.replace("collections: []\n", 0) == 1
    assert there.read() == ("collections: []\n", 1)
    assert there.replace("collections: [a]\n", 1) == 2
    with pytest.raises(GnoError) as stale:
        here.replace("collections: [b]\n", 1)
    assert stale.value.code == "CONFLICT"
    with pytest.raises(GnoError):
        TeamConfig(team, "default").replace("again\n", 0)  # a first write only once
    assert here.read() == ("collections: [a]\n", 2)
    assert TeamConfig(team, "other").read() == (None, 0)


def test_an_ended_session_is_announced_to_listeners(team: TeamDatabase) -> None:
    sessions = TeamSessions(team)
    listener = Listener(team, [SESSIONS_CHANNEL])
    try:
        assert sessions.reserve("s1", "loopback", 10.0, 8, 8) is None
        assert sessions.reserve("s2", "loopback", 10.0, 8, 8) is None
        assert listener.wait(0.05) == []
        sessions.remove("s1")
        assert listener.wait(10) == [(SESSIONS_CHANNEL, "s1")]
        assert sessions.expire(11.0) == ["s2"]
        assert listener.wait(10) == [(SESSIONS_CHANNEL, "s2")]
    finally:
        listener.close()


def test_a_listener_closed_from_another_thread_stops_waiting(team: TeamDatabase) -> None:
    listener = Listener(team, [SESSIONS_CHANNEL])
    outcome: list[object] = []
    waiter = threading.Thread(target=lambda: outcome.append(_wait(listener)))
    waiter.start()
    listener.close()
    waiter.join(30)
    assert not waiter.is_alive()


def _wait(listener: Listener) -> object:
    try:
        return listener.wait(20)
    except GnoError as exc:
        return exc


def test_the_store_is_used_again_after_the_database_dropped_its_connections(
    team: TeamDatabase, team_store: TeamStore
) -> None:
    sessions = TeamSessions(team)
    assert sessions.reserve("s1", "loopback", 10.0, 8, 8) is None
    with connect(team_store) as admin:  # a restart or failover drops every connection
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert sessions.lookup("s1") == ("loopback", None)  # unlogged rows outlive a disconnect
    assert sessions.count() == 1
