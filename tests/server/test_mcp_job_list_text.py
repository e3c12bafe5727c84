"""``gno_list_jobs`` over stdio: each job's text line reads status, id and type apart."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_corpus
from tests.support.cli_support import make_cli
from tests.support.stdio_session import finished_job, spawn, tool


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
