"""Background job records on both stores: one process's memory, or a deployment's table.

The same rules hold either way (one job at a time, ``JOB_CONFLICT`` naming
the running job, status and listing of finished jobs, a job whose first
step fails leaves nothing behind). On PostgreSQL they hold across
processes: another gateway sees the job and is refused a second one, and a
job whose process was killed is reported failed by whoever looks next.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from gno_trio.engine.jobs import JobBook, JobControl, JobManager, JobPlan
from gno_trio.engine.team.database import TeamDatabase
from gno_trio.engine.team.jobs import TeamJobs
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError
from tests.conftest import STORES


@pytest.fixture(params=STORES)
def books(request: pytest.FixtureRequest) -> Callable[[], JobBook | None]:
    """Each call: the record keeping of one more process (None: this process's memory)."""
    if request.param == "sqlite":
        return lambda: None
    database: TeamDatabase = request.getfixturevalue("team")
    return lambda: TeamJobs(database)


def gated(
    release: threading.Event, fields: dict[str, Any]
) -> Callable[[contextlib.ExitStack], JobPlan]:
    def work(control: JobControl) -> dict[str, Any]:
        control.report({"filesProcessed": 1})
        assert release.wait(30)
        return fields

    return lambda hold: JobPlan(work, ("notes",))


def test_one_job_at_a_time_then_its_result(books: Callable[[], JobBook | None]) -> None:
    manager = JobManager(book=books())
    release = threading.Event()
    try:
        ticket = manager.start("sync", gated(release, {"filesAdded": 3}))
        with pytest.raises(GnoError) as refused:
            manager.start("sync", gated(release, {}))
        assert refused.value.code == "JOB_CONFLICT" and ticket.job_id in refused.value.message
        running = manager.status(ticket.job_id)
        assert running["status"] == "running" and running["collections"] == ["notes"]
        assert [job["jobId"] for job in manager.listing(10)["active"]] == [ticket.job_id]
        release.set()
        assert manager.wait(ticket.job_id, 30)
        done = manager.status(ticket.job_id)
        assert done["status"] == "completed" and done["filesAdded"] == 3
        assert manager.listing(10)["recent"][0]["jobId"] == ticket.job_id
        again = manager.start("sync", gated(release, {}))  # the slot is free again
        assert manager.wait(again.job_id, 30)
    finally:
        release.set()
        manager.close()


def test_a_job_whose_first_step_fails_leaves_nothing(books: Callable[[], JobBook | None]) -> None:
    manager = JobManager(book=books())

    def refuse(hold: contextlib.ExitStack) -> JobPlan:
        raise GnoError("NOT_FOUND", "no such collection")

    try:
        with pytest.raises(GnoError):
            manager.start("add", refuse)
        assert manager.listing(10) == {"active": [], "recent": []}
        release = threading.Event()
        release.set()
        ticket = manager.start("add", gated(release, {}))
        assert manager.wait(ticket.job_id, 30)
    finally:
        manager.close()


def test_another_gateway_sees_the_job_and_is_refused_a_second(team: TeamDatabase) -> None:
    here, there = JobManager(book=TeamJobs(team)), JobManager(book=TeamJobs(team))
    release = threading.Event()
    try:
        ticket = here.start("embed", gated(release, {"embedded": 2}))
        with pytest.raises(GnoError) as refused:
            there.start("sync", gated(release, {}))
        assert refused.value.code == "JOB_CONFLICT" and ticket.job_id in refused.value.message
        assert there.status(ticket.job_id)["status"] == "running"
        release.set()
        assert here.wait(ticket.job_id, 30)
        seen = there.status(ticket.job_id)
        assert seen["status"] == "completed" and seen["embedded"] == 2
        with pytest.raises(GnoError) as unknown:
            there.status("no-such-job")
        assert unknown.value.code == "NOT_FOUND"
    finally:
        release.set()
        here.close()
        there.close()


def test_a_job_of_a_killed_process_is_reported_failed(
    team: TeamDatabase, team_store: TeamStore
) -> None:
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, threading\n"
            "from gno_trio.engine.jobs import JobManager, JobPlan\n"
            "from gno_trio.engine.team.database import open_team\n"
            "from gno_trio.engine.team.jobs import TeamJobs\n"
            "from gno_trio.engine.team.url import TeamStore\n"
            "book = TeamJobs(open_team(TeamStore(sys.argv[1])), stale_seconds=1.0)\n"
            "never = threading.Event()\n"
            "ticket = JobManager(book=book).start(\n"
            "    'sync', lambda hold: JobPlan(lambda control: never.wait() or {}))\n"
            "print(ticket.job_id, flush=True)\n"
            "never.wait()\n",
            team_store.url,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        job_id = owner.stdout.readline().strip()
        # The owner beats every third of a second; the watcher gives up on it after 5 s
        # without a beat (a margin for a loaded machine), so past a second it is alive.
        watcher = JobManager(book=TeamJobs(team, stale_seconds=5.0))
        time.sleep(1.5)
        assert watcher.status(job_id)["status"] == "running"
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 30
        while (status := watcher.status(job_id))["status"] == "running":
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        assert status["status"] == "failed" and status["errorCode"] == "RUNTIME"
        release = threading.Event()
        release.set()
        assert watcher.wait(watcher.start("sync", gated(release, {})).job_id, 30)
        watcher.close()
    finally:
        owner.kill()
        owner.wait()
