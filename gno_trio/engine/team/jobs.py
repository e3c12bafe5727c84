"""Background job records shared by every gateway of a deployment.

A job still runs in the process that started it (its thread holds the write
lease); what the other hosts need is its record: ``gno_job_status`` and
``gno_list_jobs`` answer from any host, and a second start anywhere is
``JOB_CONFLICT`` while one runs (a partial unique index allows one running
row). The owner beats a heartbeat while its jobs run; a running row whose
owner has not beaten for :data:`STALE_SECONDS` (the process or host died)
is marked failed by whoever looks next, which also frees the slot.
Finished records are kept for an hour and at most a hundred, as in one
process.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any, Final

from gno_trio.engine.jobs import RETENTION_COUNT, RETENTION_SECONDS, JobKind
from gno_trio.engine.team.database import TeamDatabase, holder_name
from gno_trio.errors import GnoError

logger = logging.getLogger("gno_trio.engine.team")

HEARTBEAT_SECONDS: Final = 5.0
STALE_SECONDS: Final = 30.0
_NOW_ISO: Final = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
_ORPHANED: Final = "The process running this job stopped without finishing it (no heartbeat)"


class TeamJobs:
    """The job records of a PostgreSQL store, as one process's :class:`JobManager` keeps them."""

    def __init__(
        self,
        database: TeamDatabase,
        owner: str | None = None,
        *,
        stale_seconds: float = STALE_SECONDS,
    ) -> None:
        self._database = database
        self.owner = owner if owner is not None else holder_name()
        self._stale = stale_seconds
        self._beat_every = min(HEARTBEAT_SECONDS, stale_seconds / 3)
        self._stop = threading.Event()
        self._beater: threading.Thread | None = None

    # -- the owner's side ---------------------------------------------------

    def reserve(self, job_id: str, kind: JobKind, view: Mapping[str, Any]) -> None:
        """Take the deployment's job slot for ``job_id``; ``JOB_CONFLICT`` naming the holder."""
        import psycopg

        with self._database.connection() as conn:
            self._fail_orphans(conn)
            try:
                conn.execute(
                    "INSERT INTO gno_jobs (id, kind, owner, state, view) "
                    "VALUES (%s, %s, %s, 'running', %s)",
                    (job_id, kind, self.owner, json.dumps(dict(view))),
                )
            except psycopg.errors.UniqueViolation:
                row = conn.execute("SELECT id FROM gno_jobs WHERE state = 'running'").fetchone()
                running = row[0] if row is not None else "another job"
                raise GnoError(
                    "JOB_CONFLICT",
                    f"Job {running} is still running; poll gno_job_status with that ID and "
                    "start again once it has finished",
                ) from None
        self._beat_while_running()

    def update(self, job_id: str, view: Mapping[str, Any]) -> None:
        """Record a running job's status (progress, collections); also a heartbeat."""
        with self._database.connection() as conn:
            conn.execute(
                "UPDATE gno_jobs SET view = %s, heartbeat_at = now() "
                "WHERE id = %s AND state = 'running'",
                (json.dumps(dict(view)), job_id),
            )

    def finish(self, job_id: str, view: Mapping[str, Any]) -> None:
        """Record how a job ended (``view["status"]`` is completed or failed)."""
        with self._database.connection() as conn:
            conn.execute(
                "UPDATE gno_jobs SET state = %s, view = %s, completed_at = now() WHERE id = %s",
                (view["status"], json.dumps(dict(view)), job_id),
            )

    def release(self, job_id: str) -> None:
        """The job never started (its first step failed): no record of it stays."""
        with self._database.connection() as conn:
            conn.execute("DELETE FROM gno_jobs WHERE id = %s", (job_id,))

    def _beat_while_running(self) -> None:
        if self._beater is not None and self._beater.is_alive():
            return
        self._beater = threading.Thread(target=self._beat, name="gno-job-heartbeat", daemon=True)
        self._beater.start()

    def _beat(self) -> None:
        while not self._stop.wait(self._beat_every):
            try:
                with self._database.connection() as conn:
                    beating = conn.execute(
                        "UPDATE gno_jobs SET heartbeat_at = now() "
                        "WHERE owner = %s AND state = 'running'",
                        (self.owner,),
                    ).rowcount
            except GnoError as exc:  # the store is away; the next beat tries again
                logger.warning("job heartbeat failed: %s", exc.message)
                continue
            if not beating:
                return

    def close(self) -> None:
        self._stop.set()

    # -- anyone's side ------------------------------------------------------

    def _fail_orphans(self, conn: Any) -> None:
        conn.execute(
            "UPDATE gno_jobs SET state = 'failed', completed_at = now(), view = view || "
            f"jsonb_build_object('status', 'failed', 'completedAt', {_NOW_ISO}, "
            "'error', %s::text, 'errorCode', 'RUNTIME') "
            "WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => %s)",
            (_ORPHANED, self._stale),
        )
        conn.execute(
            "DELETE FROM gno_jobs WHERE state <> 'running' AND (completed_at < now() - "
            "make_interval(secs => %s) OR id IN (SELECT id FROM gno_jobs WHERE state <> 'running' "
            "ORDER BY completed_at DESC OFFSET %s))",
            (RETENTION_SECONDS, RETENTION_COUNT),
        )

    def status(self, job_id: str) -> dict[str, Any] | None:
        """The status object of a job started on any host, or None."""
        with self._database.connection() as conn:
            self._fail_orphans(conn)
            row = conn.execute("SELECT view FROM gno_jobs WHERE id = %s", (job_id,)).fetchone()
        return None if row is None else dict(row[0])

    def listing(self, limit: int) -> dict[str, Any]:
        """``{active, recent}`` over the deployment, newest first, as one process lists."""
        with self._database.connection() as conn:
            self._fail_orphans(conn)
            rows = conn.execute(
                "SELECT state, view FROM gno_jobs ORDER BY completed_at DESC NULLS FIRST"
            ).fetchall()
        active = [
            {key: view[key] for key in ("jobId", "type", "startedAt")}
            for state, view in rows
            if state == "running"
        ]
        recent = [
            {key: view.get(key) for key in ("jobId", "type", "status", "completedAt")}
            for state, view in rows
            if state != "running"
        ]
        return {"active": active, "recent": recent[: max(0, limit)]}


__all__ = ["HEARTBEAT_SECONDS", "STALE_SECONDS", "TeamJobs"]
