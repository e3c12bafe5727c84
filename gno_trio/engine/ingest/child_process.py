"""A child process run to completion under a time limit, its output kept to a bounded tail.

Both steps that bring a collection's folder up to date before a sync (the
user's ``updateCmd`` and ``git pull``) run this way: stdin closed, in a new
session (so no terminal can be opened to prompt, and a timeout kills the
whole process group, grandchildren included), and only the end of what it
wrote kept.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

OUTPUT_TAIL_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Finished:
    """How a child ended: its exit code (None when it could not start or timed out) and output."""

    exit_code: int | None
    output: str
    timed_out: bool = False


def run_bounded(
    command: str | Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    shell: bool = False,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run ``command`` in ``cwd``; stdout and stderr together, cut to their last 64 KiB."""
    try:
        proc = subprocess.Popen(
            command,
            shell=shell,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return Finished(None, f"cannot run: {exc}")
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return Finished(None, _tail(output) + f"\n(stopped after {timeout_s:g} s)", timed_out=True)
    return Finished(proc.returncode, _tail(output))


def _tail(output: bytes) -> str:
    return output[-OUTPUT_TAIL_BYTES:].decode("utf-8", "replace")


__all__ = ["OUTPUT_TAIL_BYTES", "Finished", "run_bounded"]
