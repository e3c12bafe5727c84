"""Converting documents in bounded worker processes, in parallel, with progress.

A document converter parses untrusted bytes with C libraries and large
parsers; one hostile or broken file must cost that file only. So each
conversion runs in a worker process (:mod:`.worker`) that

- is a fresh, isolated interpreter started with ``subprocess`` (never ``fork``
  of a server that runs threads; nothing in the working directory is
  importable in it, :mod:`gno_trio.children`), in its own session so a terminal's Ctrl-C
  reaches only the parent, and reused across files: start-up (about 0.3 s
  with the parsing libraries preloaded) is paid once per worker, not per file;
- limits its own address space, so memory exhaustion fails inside it;
- is killed when its job passes the wall-time limit (``CONVERSION_TIMEOUT``);
  a crash or kill of a worker is ``CONVERSION_FAILED`` for its file, and the
  next job gets a new worker.

Up to ``workers`` conversions run at once (default: the usable cores). The
runner reports each job's progress (pages, sheets, slides) as the worker
sends it, so a progress bar moves during one big file, and a job silent for
:data:`STALL_S` seconds as ``(0, 0)`` units every second, so the bar can
name the files still being converted; an exception raised
by the progress callback (a stop request) or :meth:`ConversionRunner.cancel`
from another thread ends the run and kills the busy workers.

Everything here is synchronous (the engine never runs on an event loop) and
POSIX: the loop waits on the workers' pipes with ``selectors``.
"""

from __future__ import annotations

import collections
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.children import isolated_module
from gno_trio.engine.ingest.convert import Converted
from gno_trio.engine.ingest.documents import frames
from gno_trio.engine.ingest.documents.limits import DEFAULT_LIMITS, ConversionLimits
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, CONVERSION_TIMEOUT
from gno_trio.engine.ingest.documents.routing import route
from gno_trio.errors import GnoError

WORKER_MODULE: Final = "gno_trio.engine.ingest.documents.worker"
PRELOAD: Final = ("pypdfium2", "docx", "openpyxl", "pptx")
START_TIMEOUT_S: Final = 60.0
JOBS_PER_WORKER: Final = 2000
"""A worker is replaced after this many jobs, so fragmentation cannot accumulate."""
_POLL_S: Final = 0.25
STALL_S: Final = 2.0
"""A job silent this long is reported every second as ``(job, 0, 0)``: still converting."""
_START_ATTEMPTS: Final = 3
_STDERR_TAIL: Final = 2048


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class ConversionJob:
    """One file to convert; ``key`` is the caller's handle, returned with the outcome."""

    rel_path: str
    data: bytes
    key: Any = None


@dataclass(frozen=True, slots=True)
class ConversionOutcome:
    """Exactly one of ``converted`` and ``error`` is set."""

    job: ConversionJob
    converted: Converted | None
    error: GnoError | None
    seconds: float
    unsupported: bool = False
    """Not indexed because of the file's type (see :class:`.routing.Route`)."""


ProgressFn = Callable[[ConversionJob, int, int], None]


@dataclass(slots=True)
class _Worker:
    process: subprocess.Popen[bytes]
    reader: frames.FrameReader = field(default_factory=frames.FrameReader)
    ready: bool = False
    started: float = field(default_factory=time.monotonic)
    job: tuple[int, ConversionJob, str] | None = None  # (sequence, job, converter ID)
    deadline: float = 0.0
    job_started: float = 0.0
    heard: float = 0.0  # when the job was dispatched or last sent progress
    jobs_done: int = 0
    stderr_tail: bytes = b""

    @property
    def stdout_fd(self) -> int:
        assert self.process.stdout is not None
        return self.process.stdout.fileno()


def _signal_name(returncode: int | None) -> str:
    if returncode is None or returncode >= 0:
        return f"exit status {returncode}"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class ConversionRunner:
    """A pool of conversion workers (see the module docstring). Use as a context manager."""

    def __init__(self, limits: ConversionLimits = DEFAULT_LIMITS, *, workers: int = 0) -> None:
        self.limits = limits
        self.max_workers = workers if workers > 0 else usable_cores()
        self._workers: list[_Worker] = []
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._cancelled = threading.Event()
        self._closed = False
        self._start_failures = 0
        self._start_error = ""

    # -- lifecycle --------------------------------------------------------
    def __enter__(self) -> ConversionRunner:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def cancel(self) -> None:
        """Stop the running :meth:`run` from any thread (it raises ``CANCELLED``)."""
        self._cancelled.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def close(self) -> None:
        """Stop every worker (idle ones exit on end of input; busy ones are killed)."""
        if self._closed:
            return
        self._closed = True
        for worker in list(self._workers):
            self._retire(worker, kill=worker.job is not None)
        self._selector.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def worker_pids(self) -> list[int]:
        """Process IDs of the running workers (for diagnostics)."""
        return [w.process.pid for w in self._workers]

    # -- one file ---------------------------------------------------------
    def convert(self, rel_path: str, data: bytes) -> Converted:
        """Convert one file in a worker; raises its :class:`GnoError` on failure."""
        for outcome in self.run([ConversionJob(rel_path, data)]):
            if outcome.error is not None:
                raise outcome.error
            assert outcome.converted is not None
            return outcome.converted
        raise AssertionError("run() yields one outcome per job")

    # -- many files -------------------------------------------------------
    def run(
        self,
        jobs: Iterable[ConversionJob],
        *,
        on_progress: ProgressFn | None = None,
        ordered: bool = False,
    ) -> Iterator[ConversionOutcome]:
        """Convert ``jobs`` with up to ``max_workers`` at once; one outcome per job.

        Jobs are drawn from ``jobs`` only as workers free up, so a lazy
        iterable keeps at most a few files in memory. Outcomes come in
        completion order, or in input order with ``ordered``. Time the caller
        spends between two outcomes is not charged to the running jobs.
        """
        if self._closed:
            raise GnoError("CANCELLED", "the conversion runner is closed")
        source = iter(jobs)
        exhausted = False
        pending: collections.deque[tuple[int, ConversionJob, str]] = collections.deque()
        next_seq = 0
        finished: dict[int, ConversionOutcome] = {}
        emit_seq = 0
        try:
            while True:
                if self._cancelled.is_set():
                    raise GnoError("CANCELLED", "document conversion was cancelled")
                in_flight = sum(1 for w in self._workers if w.job is not None)
                while in_flight + len(finished) < self.max_workers * 2:
                    if not pending:
                        job = None if exhausted else next(source, None)
                        if job is None:
                            exhausted = True
                            break
                        routed = route(job.rel_path, job.data, self.limits)
                        if routed.converter_id is None:
                            finished[next_seq] = ConversionOutcome(
                                job, routed.converted, routed.error, 0.0, routed.unsupported
                            )
                        else:
                            pending.append((next_seq, job, routed.converter_id))
                        next_seq += 1
                        continue
                    idle = self._idle_worker()
                    if idle is None:
                        break
                    self._dispatch(idle, *pending.popleft())
                    in_flight += 1
                if pending and self._idle_worker() is None:
                    self._grow()
                    if not self._workers:  # no worker could start: fail what waits
                        seq, job, _ = pending.popleft()
                        why = f"no conversion worker could start ({self._start_error})"
                        finished[seq] = self._failed(job, why)
                # Hand over what is finished (in order when asked).
                ready = sorted(finished) if not ordered else []
                if ordered:
                    while emit_seq in finished:
                        ready.append(emit_seq)
                        emit_seq += 1
                if ready:
                    outside = time.monotonic()
                    for seq in ready:
                        yield finished.pop(seq)
                    self._extend_deadlines(time.monotonic() - outside)
                    continue
                busy = any(w.job is not None for w in self._workers)
                if exhausted and not pending and not busy and not finished:
                    return
                self._poll(on_progress, finished)
        finally:
            for worker in list(self._workers):
                if worker.job is not None:
                    self._retire(worker, kill=True)

    # -- internals --------------------------------------------------------
    @staticmethod
    def _failed(job: ConversionJob, why: str, code: str = CONVERSION_FAILED) -> ConversionOutcome:
        return ConversionOutcome(job, None, GnoError(code, f"{job.rel_path}: {why}"), 0.0)

    def _idle_worker(self) -> _Worker | None:
        for worker in self._workers:
            if worker.ready and worker.job is None:
                return worker
        return None

    def _grow(self) -> None:
        starting = sum(1 for w in self._workers if not w.ready)
        if starting or len(self._workers) >= self.max_workers:
            return
        if self._start_failures >= _START_ATTEMPTS:
            return
        try:
            self._spawn()
        except OSError:
            return

    def _spawn(self) -> None:
        process = subprocess.Popen(
            isolated_module(WORKER_MODULE),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        worker = _Worker(process)
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        hello = {"op": "hello", "limits": list(self.limits.as_tuple()), "preload": list(PRELOAD)}
        frames.write_all(process.stdin.fileno(), frames.encode(hello))
        for stream in (process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
        self._selector.register(process.stdout, selectors.EVENT_READ, (worker, "out"))
        self._selector.register(process.stderr, selectors.EVENT_READ, (worker, "err"))
        self._workers.append(worker)

    def _dispatch(self, worker: _Worker, seq: int, job: ConversionJob, converter_id: str) -> None:
        assert worker.process.stdin is not None
        worker.job = (seq, job, converter_id)
        worker.job_started = worker.heard = time.monotonic()
        worker.deadline = worker.job_started + self.limits.timeout_s
        message: dict[str, Any] = {
            "op": "convert",
            "converter": converter_id,
            "rel_path": job.rel_path,
            "data": job.data,
        }
        # A worker that died meanwhile reports its crash by its end of file on stdout.
        with contextlib.suppress(OSError):
            frames.write_all(worker.process.stdin.fileno(), frames.encode(message))

    def _extend_deadlines(self, seconds: float) -> None:
        for worker in self._workers:
            if worker.job is not None:
                worker.deadline += seconds

    def _poll(self, on_progress: ProgressFn | None, finished: dict[int, ConversionOutcome]) -> None:
        now = time.monotonic()
        deadlines = [w.deadline for w in self._workers if w.job is not None]
        deadlines += [w.started + START_TIMEOUT_S for w in self._workers if not w.ready]
        timeout = min([_POLL_S, *(d - now for d in deadlines)])
        for key, _ in self._selector.select(max(0.0, timeout)):
            if key.data is None:
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, 4096)
                continue
            worker, stream = key.data
            if worker not in self._workers:
                continue
            try:
                chunk = os.read(key.fd, 1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if stream == "err":
                if chunk:
                    worker.stderr_tail = (worker.stderr_tail + chunk)[-_STDERR_TAIL:]
                else:
                    self._selector.unregister(key.fileobj)
                continue
            if not chunk:
                self._on_exit(worker, finished)
                continue
            for message in worker.reader.feed(chunk):
                self._on_message(worker, message, on_progress, finished)
        now = time.monotonic()
        for worker in self._workers:
            if worker.job is not None and on_progress is not None and now - worker.heard >= STALL_S:
                worker.heard = now - STALL_S + 1.0  # again in a second while it stays silent
                on_progress(worker.job[1], 0, 0)
        for worker in list(self._workers):
            if worker.job is not None and now >= worker.deadline:
                seq, job, _ = worker.job
                why = f"stopped after {self.limits.timeout_s:g} s (the conversion time limit)"
                finished[seq] = self._failed(job, why, CONVERSION_TIMEOUT)
                self._retire(worker, kill=True)
            elif not worker.ready and now >= worker.started + START_TIMEOUT_S:
                self._retire(worker, kill=True)

    def _on_message(
        self,
        worker: _Worker,
        message: dict[str, Any],
        on_progress: ProgressFn | None,
        finished: dict[int, ConversionOutcome],
    ) -> None:
        op = message.get("op")
        if op == "ready":
            worker.ready = True
            self._start_failures = 0
            return
        if worker.job is None:
            return
        seq, job, _ = worker.job
        if op == "progress":
            worker.heard = time.monotonic()
            if on_progress is not None:
                on_progress(job, int(message["done"]), int(message["total"]))
            return
        seconds = time.monotonic() - worker.job_started
        if op == "ok":
            converted = Converted(
                markdown=message["markdown"],
                mime=message["mime"],
                ext=message["ext"],
                converter_id=message["converter_id"],
                converter_version=message["converter_version"],
                language=None,
                is_code=False,
                warnings=tuple(message["warnings"]),
            )
            finished[seq] = ConversionOutcome(job, converted, None, seconds)
        else:
            error = GnoError(str(message.get("code")), str(message.get("message")))
            finished[seq] = ConversionOutcome(job, None, error, seconds)
        worker.job = None
        worker.jobs_done += 1
        if worker.jobs_done >= JOBS_PER_WORKER:
            self._retire(worker, kill=False)

    def _on_exit(self, worker: _Worker, finished: dict[int, ConversionOutcome]) -> None:
        """A worker's output ended: it crashed, was killed, or could not start."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(timeout=1.0)
        how = _signal_name(worker.process.returncode)
        if not worker.ready:
            self._start_failures += 1
            tail = worker.stderr_tail.decode("utf-8", "replace").strip().splitlines()
            self._start_error = f"{how}: {tail[-1] if tail else 'no message'}"
        if worker.job is not None:
            seq, job, _ = worker.job
            worker.job = None
            why = f"the converter crashed ({how}; out of memory or a damaged file)"
            finished[seq] = self._failed(job, why)
        self._retire(worker, kill=True)

    def _retire(self, worker: _Worker, *, kill: bool) -> None:
        if worker in self._workers:
            self._workers.remove(worker)
        process = worker.process
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(KeyError, ValueError):
                    self._selector.unregister(stream)
        if kill and process.poll() is None:
            with contextlib.suppress(OSError):
                process.kill()
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
