"""``gno_list_jobs`` over stdio: each job's text line reads status, id and type apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from tests.conftest import write_corpus
from tests.server.test_mcp_gno_server import Wire, spawn
from tests.support.cli_support import make_cli

JOB_WAIT_S = 30.0


async def tool(wire: Wire, request_id: int, tool_name: str, **arguments: Any) -> dict[str, Any]:
    answer = await wire.call(request_id, "tools/call", {"name": tool_name, "arguments": arguments})
    result: dict[str, Any] = answer["result"]
    assert not result.get("isError"), result
    return result


async def finished_job(wire: Wire, job_id: str) -> dict[str, Any]:
    """The job's status once it has left ``running`` (bounded)."""
    with trio.fail_after(JOB_WAIT_S):
        for request_id in range(1000, 10_000):
            status = (await tool(wire, request_id, "gno_job_status", jobId=job_id))[
                "structuredContent"
            ]
            if status["status"] != "running":
                return status
            await trio.sleep(0.05)
    raise AssertionError("unreachable")


async def test_the_job_list_text_separates_status_and_id(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    cli.run("init")
    notes = write_corpus(tmp_path / "notes", {"a.md": "# A\n"})
    env = cli.dirs_env
    async with spawn(env, tmp_path, "--enable-write") as wire:
        await wire.handshake()
        added = await tool(wire, 1, "gno_add_collection", path=str(notes), name="notes")
        job_id = added["structuredContent"]["jobId"]
        assert (await finished_job(wire, job_id))["status"] == "completed"
        listing = await tool(wire, 2, "gno_list_jobs")
    (line,) = listing["content"][0]["text"].splitlines()
    assert line.split()[:3] == ["completed", job_id, "add"]
