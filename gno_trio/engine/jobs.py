"""Background jobs of one server process: indexing work that outlives the call starting it.

``gno_add_collection`` and ``gno_sync`` answer at once with a job ID; the
work continues here and ``gno_job_status`` / ``gno_list_jobs`` report it.
The rules come from GNO: one job at a time per process (a second start is
``JOB_CONFLICT`` naming the running job), finished jobs are kept for an hour
and at most a hundred of them, and everything lives in memory, so after a
restart a job ID is simply ``NOT_FOUND``.

Each job runs in its own daemon thread rather than a trio task. The work is
the synchronous engine, which would occupy a worker thread anyway; a plain
thread needs no nursery threaded through the stdio and HTTP transports, and
it is not tied to the request that started it, which has returned long
before the job ends. The manager records everything under one lock, and
:meth:`JobManager.close` (called when a server shuts down) asks running work
to stop at its next progress report and waits for it. A job that still does
not finish cannot hold the process open (the thread is a daemon) and cannot
corrupt the index: SQLite rolls back its open transaction and the kernel
drops its write lease.

In team mode the manager also keeps each job's record in a :class:`JobBook`
shared by every gateway of the deployment (the PostgreSQL store's jobs
table): the single slot is then the deployment's, and a job's status can be
asked on any host. The work itself still runs here.

Whatever must stay held for the whole job (the write lease) is entered by
the caller's ``begin`` step on an :class:`~contextlib.ExitStack` and closed
by the job thread when the work ends, however it ends.

The manager lives in the engine, not beside the event loop: it uses plain
threads and locks, never trio, and its work is engine work, so the CLI, the
stdio server and every HTTP worker can run jobs without an async runtime
around them. The :class:`~gno_trio.runtime.Runtime` of a server owns one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

from gno_trio.errors import GnoError

logger = logging.getLogger("gno_trio.engine.jobs")

JobKind = Literal["add", "sync", "embed", "index"]
JobState = Literal["running", "completed", "failed"]

RETENTION_SECONDS: Final = 3600.0
RETENTION_COUNT: Final = 100
SHUTDOWN_WAIT_SECONDS: Final = 10.0
STOPPED_CODE: Final = "CANCELLED"


class JobStopped(Exception):
    """Raised inside running work when the manager is shutting down."""


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class _Job:
    job_id: str
    kind: JobKind
    collections: tuple[str, ...]
    started_at: str
    state: JobState = "running"
    completed_at: str | None = None
    finished_at: float | None = None  # manager clock, for retention
    fields: dict[str, Any] = field(default_factory=dict)  # result fields of a finished job
    error: str | None = None
    error_code: str | None = None
    progress: dict[str, Any] | None = None

    def status(self) -> dict[str, Any]:
        view: dict[str, Any] = {
            "jobId": self.job_id,
            "type": self.kind,
            "status": self.state,
            "startedAt": self.started_at,
        }
        if self.completed_at is not None:
            view["completedAt"] = self.completed_at
        view["collections"] = list(self.collections)
        if self.progress is not None:
            view["progress"] = dict(self.progress)
        view.update(self.fields)
        if self.error is not None:
            view["error"] = self.error
            view["errorCode"] = self.error_code
        return view


class JobBook(Protocol):
    """Job records shared beyond this process (team mode); every call may raise ``GnoError``."""

    def reserve(self, job_id: str, kind: JobKind, view: Mapping[str, Any]) -> None:
        """Take the shared job slot (``JOB_CONFLICT`` while any job runs anywhere)."""
        ...

    def update(self, job_id: str, view: Mapping[str, Any]) -> None: ...
    def finish(self, job_id: str, view: Mapping[str, Any]) -> None: ...
    def release(self, job_id: str) -> None: ...
    def status(self, job_id: str) -> dict[str, Any] | None: ...
    def listing(self, limit: int) -> dict[str, Any]: ...
    def close(self) -> None: ...


_PUBLISH_EVERY: Final = 1.0
"""At most one shared progress record per job per second."""


class JobControl:
    """What running work may do: report progress, and learn that it should stop."""

    __slots__ = ("_job", "_lock", "_publish", "_published", "_stop")

    def __init__(
        self,
        job: _Job,
        lock: threading.Lock,
        stop: threading.Event,
        publish: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self._job = job
        self._lock = lock
        self._stop = stop
        self._publish = publish
        self._published = float("-inf")

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def report(self, progress: Mapping[str, Any]) -> None:
        """Record progress; raises :class:`JobStopped` once the server is shutting down.

        Work calls this between units (files), so a stop request takes effect
        between two units, never in the middle of one.
        """
        with self._lock:
            self._job.progress = dict(progress)
            view = self._job.status()
        now = time.monotonic()
        if self._publish is not None and now - self._published >= _PUBLISH_EVERY:
            self._published = now
            self._publish(view)
        if self._stop.is_set():
            raise JobStopped


Work = Callable[[JobControl], Mapping[str, Any]]
"""Runs in the job thread; returns the fields a finished job adds to its status."""


@dataclass(frozen=True, slots=True)
class JobPlan:
    """What ``begin`` hands back: the work to run and the collections it covers."""

    work: Work
    collections: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JobTicket:
    job_id: str
    collections: tuple[str, ...]


class JobManager:
    """The jobs of one server process; every method is safe to call from any thread."""

    def __init__(
        self,
        *,
        retention_seconds: float = RETENTION_SECONDS,
        retention_count: int = RETENTION_COUNT,
        clock: Callable[[], float] = time.monotonic,
        book: JobBook | None = None,
    ) -> None:
        self._book = book
        self._retention_seconds = retention_seconds
        self._retention_count = retention_count
        self._clock = clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._jobs: dict[str, _Job] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._active: str | None = None  # reserved or running
        self._closed = False

    def start(self, kind: JobKind, begin: Callable[[contextlib.ExitStack], JobPlan]) -> JobTicket:
        """Reserve the single job slot, run ``begin`` here, then the work in a new thread.

        The slot is taken first, so a second start fails at once with
        ``JOB_CONFLICT`` instead of queueing for the write lease the running
        job holds. ``begin`` runs in the caller's thread: it takes the lease
        and makes any up-front change (registering a collection), pushing
        what must stay held onto the stack. If it raises, the slot is freed,
        the stack is closed and its error propagates; no job is recorded.
        """
        with self._lock:
            if self._closed:
                raise GnoError("RUNTIME", "The server is shutting down; no new job can start")
            if self._active is not None:
                raise GnoError(
                    "JOB_CONFLICT",
                    f"Job {self._active} is still running; poll gno_job_status with that ID "
                    "and start again once it has finished",
                )
            job_id = str(uuid.uuid4())
            self._active = job_id
        started_at = _now_iso()
        if self._book is not None:
            try:
                self._book.reserve(job_id, kind, _Job(job_id, kind, (), started_at).status())
            except BaseException:
                with self._lock:
                    self._active = None
                raise
        hold = contextlib.ExitStack()
        try:
            plan = begin(hold)
            job = _Job(job_id, kind, plan.collections, started_at=started_at)
            if self._book is not None:
                self._book.update(job_id, job.status())
            thread = threading.Thread(
                target=self._run,
                args=(job, plan.work, hold),
                name=f"gno-job-{kind}-{job_id[:8]}",
                daemon=True,
            )
            with self._lock:
                self._jobs[job_id] = job
                self._threads[job_id] = thread
            thread.start()
        except BaseException:
            hold.close()
            with self._lock:
                self._jobs.pop(job_id, None)
                self._threads.pop(job_id, None)
                self._active = None
            if self._book is not None:
                with contextlib.suppress(GnoError):
                    self._book.release(job_id)
            raise
        return JobTicket(job_id=job_id, collections=plan.collections)

    def _run(self, job: _Job, work: Work, hold: contextlib.ExitStack) -> None:
        state: JobState = "failed"
        fields: dict[str, Any] = {}
        error: GnoError | None = GnoError("RUNTIME", "The job ended without a result")
        try:
            # The stack (the write lease) is released before completion is
            # recorded: whoever sees "completed" may write again at once.
            with hold:
                control = JobControl(job, self._lock, self._stop, self._shared_update(job))
                fields = dict(work(control))
            state, error = "completed", None
        except JobStopped:
            error = GnoError(STOPPED_CODE, "Stopped: the server shut down before the job finished")
        except GnoError as failure:
            error = failure
        except Exception as failure:
            logger.exception("job %s failed", job.job_id)
            error = GnoError("RUNTIME", f"{type(failure).__name__}: {failure}")
        finally:
            ended = dataclasses.replace(
                job,
                state=state,
                fields=fields,
                error=error.message if error is not None else None,
                error_code=error.code if error is not None else None,
                completed_at=_now_iso(),
                finished_at=self._clock(),
            )
            if self._book is not None:  # recorded for everyone before the slot frees here
                try:
                    self._book.finish(job.job_id, ended.status())
                except GnoError as failure:  # the record goes stale and is failed by others
                    logger.warning("job %s: could not record its end: %s", job.job_id, failure)
            with self._lock:
                job.state, job.fields = ended.state, ended.fields
                job.error, job.error_code = ended.error, ended.error_code
                job.completed_at, job.finished_at = ended.completed_at, ended.finished_at
                self._threads.pop(job.job_id, None)
                if self._active == job.job_id:
                    self._active = None
                self._prune()

    def _shared_update(self, job: _Job) -> Callable[[dict[str, Any]], None] | None:
        book = self._book
        if book is None:
            return None

        def publish(view: dict[str, Any]) -> None:
            try:
                book.update(job.job_id, view)
            except GnoError as failure:
                logger.warning("job %s: could not record progress: %s", job.job_id, failure)

        return publish

    def _prune(self) -> None:
        """Drop finished jobs past their hour, then the oldest beyond the count (lock held)."""
        now = self._clock()
        finished = [job for job in self._jobs.values() if job.finished_at is not None]
        expired = {
            job.job_id
            for job in finished
            if job.finished_at is not None and now - job.finished_at > self._retention_seconds
        }
        kept = [job for job in finished if job.job_id not in expired]
        kept.sort(key=lambda job: job.finished_at or 0.0)
        expired.update(job.job_id for job in kept[: max(0, len(kept) - self._retention_count)])
        for job_id in expired:
            del self._jobs[job_id]

    def status(self, job_id: str) -> dict[str, Any]:
        """The status object of one job; ``NOT_FOUND`` when this process does not know it.

        In team mode a job started on another host is known too.
        """
        with self._lock:
            self._prune()
            job = self._jobs.get(job_id)
            if job is not None:
                return job.status()
        if self._book is not None:
            shared = self._book.status(job_id)
            if shared is not None:
                return shared
            raise GnoError(
                "NOT_FOUND", f"Job not found: {job_id} (finished jobs are kept for an hour)"
            )
        raise GnoError(
            "NOT_FOUND",
            f"Job not found: {job_id} (jobs live in server memory: finished jobs are "
            "kept for an hour, and none survive a restart)",
        )

    def listing(self, limit: int) -> dict[str, Any]:
        """``{active, recent}``: the running job and up to ``limit`` finished ones, newest first."""
        if self._book is not None:
            return self._book.listing(limit)
        with self._lock:
            self._prune()
            jobs = list(self._jobs.values())
        active = [
            {"jobId": job.job_id, "type": job.kind, "startedAt": job.started_at}
            for job in jobs
            if job.finished_at is None
        ]
        finished = sorted(
            (job for job in jobs if job.finished_at is not None),
            key=lambda job: job.finished_at or 0.0,
            reverse=True,
        )
        recent = [
            {
                "jobId": job.job_id,
                "type": job.kind,
                "status": job.state,
                "completedAt": job.completed_at,
            }
            for job in finished[: max(0, limit)]
        ]
        return {"active": active, "recent": recent}

    def wait(self, job_id: str, timeout: float | None = None) -> bool:
        """Block until the job's thread has ended; ``False`` if it is still running."""
        with self._lock:
            thread = self._threads.get(job_id)
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def close(self, timeout: float = SHUTDOWN_WAIT_SECONDS) -> bool:
        """Refuse new jobs, ask running ones to stop, wait up to ``timeout`` seconds.

        Returns whether every job thread has ended. Safe to call twice.
        """
        with self._lock:
            self._closed = True
            threads = list(self._threads.values())
        if self._book is not None:
            self._book.close()
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        still_running = [thread.name for thread in threads if thread.is_alive()]
        if still_running:
            logger.warning("jobs still running at shutdown: %s", ", ".join(still_running))
        return not still_running


__all__ = [
    "RETENTION_COUNT",
    "RETENTION_SECONDS",
    "SHUTDOWN_WAIT_SECONDS",
    "JobBook",
    "JobControl",
    "JobKind",
    "JobManager",
    "JobPlan",
    "JobState",
    "JobStopped",
    "JobTicket",
    "Work",
]
