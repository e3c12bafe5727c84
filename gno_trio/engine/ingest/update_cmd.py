"""A collection's ``updateCmd``: the user's own command, run in its folder before a sync.

GNO lets each collection name a shell command (``git pull``, an export
script ...) that brings its folder up to date before indexing. It is the
user's command, from the user's private ``index.yml``, so only the command
line runs it (``gno-trio update``); the MCP tools refuse to run it for an
agent (``runUpdateCmd``), and a server never runs it by itself.

The command runs in the collection's folder through the shell, with stdin
closed, a time limit, and its output kept to a bounded tail. It runs
without the write lease: it changes files, not the index, and a slow
``git pull`` must not hold up other writers.
"""

from __future__ import annotations

from typing import Any, Final

from gno_trio.config import Collection
from gno_trio.engine.ingest.child_process import run_bounded

UPDATE_CMD_TIMEOUT_S: Final = 600.0
UPDATE_CMD_FAILED: Final = "UPDATE_CMD_FAILED"


def run_update_command(
    collection: Collection, *, timeout_s: float = UPDATE_CMD_TIMEOUT_S
) -> dict[str, Any] | None:
    """Run ``collection.update_cmd`` in its folder; what happened (None when it has none).

    The answer is ``{collection, command, exitCode, ok, output}``; ``output``
    is the end of what the command wrote (stdout and stderr together).
    ``exitCode`` is None when it could not start or ran out of time; on
    timeout the command's whole process group is killed, so a ``git pull``
    started by the shell does not linger.
    """
    command = (collection.update_cmd or "").strip()
    if not command:
        return None
    done = run_bounded(command, shell=True, cwd=collection.path, timeout_s=timeout_s)
    return {
        "collection": collection.name,
        "command": command,
        "exitCode": done.exit_code,
        "ok": done.exit_code == 0,
        "output": done.output,
    }


__all__ = ["UPDATE_CMD_FAILED", "UPDATE_CMD_TIMEOUT_S", "run_update_command"]
