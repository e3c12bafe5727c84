"""The write lease: one exclusive lease shared by every gno-trio writer of an index.

Embedded (the default), MCP write tools, the memory service and CLI writers
of the same data directory serialise on ``<data>/.mcp-write.lock``. The lock
is an ``flock`` on an open file description, so it is released by the kernel
if the holder dies, and two holders in one process (two threads) contend
like two processes do. In team mode the lease is a PostgreSQL advisory lock
instead (:mod:`gno_trio.engine.team.lease`); both answer to :class:`Lease`,
with one contract: wait up to a bound, stop waiting when the caller is
cancelled, and on giving up raise ``LOCKED`` naming the holder when known.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from gno_trio.config.environment import WRITE_LOCK_WAIT_MS, variable
from gno_trio.errors import GnoError

DEFAULT_WAIT_SECONDS = 5.0
MEMORY_WAIT_SECONDS = 120.0
_POLL_SECONDS = 0.02
LOCKED_MESSAGE = "Another GNO write operation is running. Try again later."


def wait_from_env(default: float) -> float:
    """The lease wait in seconds: ``GNO_WRITE_LOCK_WAIT_MS`` when set, else ``default``.

    Tests and impatient users shorten waits with it; a value that is not a
    finite, non-negative number of milliseconds is ignored.
    """
    raw = variable(WRITE_LOCK_WAIT_MS)
    if raw is None:
        return default
    try:
        millis = float(raw)
    except ValueError:
        return default
    if not math.isfinite(millis) or millis < 0:
        return default
    return millis / 1000


class HeldLease:
    """Proof that the holder has the write lease; valid until its ``with`` block ends.

    Engine writers take the lease themselves unless they are handed one of
    these, so a caller that must keep the lease across several writes (a
    background job, ``update`` reconciling then syncing) passes it along
    instead of taking the lease twice.
    """

    __slots__ = ("active", "where")

    def __init__(self, where: str) -> None:
        self.where = where
        """Which lease this proves: :attr:`Lease.where` of the lease that made it."""
        self.active = True


class Lease(Protocol):
    """The write lease of one index, whatever holds it (a lock file, a database lock)."""

    @property
    def where(self) -> str:
        """What this lease locks, as :attr:`HeldLease.where` names it."""
        ...

    def hold(
        self,
        *,
        wait_seconds: float | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
        should_stop: Callable[[], bool] | None = None,
    ) -> AbstractContextManager[HeldLease]:
        """Hold the lease for the block (see :func:`write_lease` for the waiting rules)."""
        ...

    def is_held(self) -> bool:
        """Whether another holder has it right now (never waits)."""
        ...


def stopped_waiting(busy_code: str) -> GnoError:
    """The error of a writer whose call was cancelled while it queued for the lease."""
    return GnoError(busy_code, "Stopped waiting for the write lease: the call was cancelled")


class FileLease:
    """The embedded lease: ``flock`` on a lock file in the data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def where(self) -> str:
        return str(self.path)

    def hold(
        self,
        *,
        wait_seconds: float | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
        should_stop: Callable[[], bool] | None = None,
    ) -> AbstractContextManager[HeldLease]:
        return write_lease(
            self.path,
            wait_seconds=wait_seconds,
            busy_code=busy_code,
            busy_message=busy_message,
            should_stop=should_stop,
        )

    def is_held(self) -> bool:
        return is_held(self.path)


def _holder_of(fd: int) -> int | None:
    """The live process the lock file names, if it names one (GNO itself may not)."""
    try:
        raw = os.pread(fd, 32, 0)
        pid = int(raw.decode("ascii").strip() or "0")
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid  # alive, someone else's
    return pid


def _busy(code: str, message: str, fd: int) -> GnoError:
    pid = _holder_of(fd)
    if pid is not None:
        message = f"{message} (the write lease is held by process {pid})"
    return GnoError(code, message, details={"holderPid": pid} if pid is not None else None)


def _record_holder(fd: int) -> None:
    """Write this process's pid into the lock file, so a waiting writer can name it."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)


@contextlib.contextmanager
def write_lease(
    path: Path,
    *,
    wait_seconds: float | None = None,
    busy_code: str = "LOCKED",
    busy_message: str = LOCKED_MESSAGE,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[HeldLease]:
    """Hold the exclusive lease for the ``with`` block, waiting up to ``wait_seconds``.

    ``should_stop`` is polled while waiting: a request cancelled by its client
    stops queueing for the lease (``busy_code``) instead of writing later for
    nobody. A writer that gives up names the holder's pid when it can.
    """
    wait = wait_from_env(DEFAULT_WAIT_SECONDS) if wait_seconds is None else wait_seconds
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if should_stop is not None and should_stop():
                    raise stopped_waiting(busy_code) from None
                if time.monotonic() >= deadline:
                    raise _busy(busy_code, busy_message, fd) from None
                time.sleep(_POLL_SECONDS)
        _record_holder(fd)
        held = HeldLease(str(path))
        try:
            yield held
        finally:
            held.active = False
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # nobody's name stays behind in the file
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_held(path: Path) -> bool:
    """Whether another open file description holds the lease right now (never waits).

    A probe for ``doctor``: it creates nothing and takes the lock only for
    the instant of the test.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the description also drops a lock taken above
    return False
