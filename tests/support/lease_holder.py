"""Another process holding the shared write lease, for contention tests.

The holder takes a plain ``flock`` on the lock file (not gno-trio's own
code), so the tests show that gno-trio contends with any process that
follows the same OS convention.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLD = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)


class LeaseHolder:
    """A child process that holds ``lock_path`` until released or killed."""

    def __init__(self, lock_path: Path) -> None:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HOLD, str(lock_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "held"

    def release(self) -> None:
        """Let the holder exit normally (it unlocks on the way out); idempotent."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("\n")
            self.process.stdin.flush()
            self.process.wait(timeout=10)

    def kill(self) -> None:
        """Kill the holder without unlocking: the kernel must release the lease."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


@contextmanager
def lease_held_elsewhere(lock_path: Path) -> Iterator[LeaseHolder]:
    """Another process holds the write lease until the block ends."""
    holder = LeaseHolder(lock_path)
    try:
        yield holder
    finally:
        if holder.process.poll() is None:
            holder.kill()
