"""Read options as GNO users spell them: ``get --limit``, ``ls --offset``, and globs.

A glob's ``*`` and ``?`` stay inside one folder (as minimatch's do) and only
``**`` crosses folders, on the CLI's ``multi-get`` and on ``gno_multi_get``
alike: both ask the engine, whose one glob translation the collection
patterns and excludes use too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.stdio_session import spawn

NOTES = {
    "a.md": "# A\n" + "".join(f"a line {n}\n" for n in range(2, 11)),
    "b.md": "# B\nbee\n",
    "c.md": "# C\nsea\n",
    "scratch/today.md": "# Today\nscratch note\n",
    "scratch/archive/x.md": "# X\narchived note\n",
    "scratch/archive/deep/y.md": "# Y\ndeeper note\n",
}


@pytest.fixture(scope="module")
def ready(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    sandbox = make_cli(tmp_path_factory.mktemp("reads"))
    root = write_corpus(sandbox.home / "notes", NOTES)
    sandbox.run("init", str(root), "--name", "notes")
    sandbox.run("update")
    return sandbox


@pytest.mark.parametrize("flag", ["--limit", "--lines", "-l"])
def test_get_limit_lines_and_l_all_bound_the_lines(ready: Cli, flag: str) -> None:
    shown = ready.run("get", "notes/a.md", "--from", "3", flag, "2").stdout
    assert shown == "a line 3\na line 4\n"


def test_ls_offset_pages_through_the_listing(ready: Cli) -> None:
    everything = [d["uri"] for d in ready.json("ls", "notes")["documents"]]
    assert len(everything) == len(NOTES)
    page = ready.json("ls", "notes", "--limit", "2", "--offset", "2")
    assert [d["uri"] for d in page["documents"]] == everything[2:4]
    assert page["meta"] == {"total": len(NOTES), "returned": 2, "offset": 2}
    human = ready.run("ls", "--limit", "2", "--offset", "4")
    assert [line.split()[1] for line in human.stdout.splitlines()] == everything[4:]
    assert ready.run("ls", "--offset", "-1", code=1).stderr.startswith("Error")


def _globbed(cli: Cli, pattern: str) -> list[str]:
    return [d["uri"] for d in cli.json("multi-get", pattern)["documents"]]


def test_cli_glob_star_stays_in_its_folder_and_double_star_crosses(ready: Cli) -> None:
    assert _globbed(ready, "notes/scratch/*.md") == ["gno://notes/scratch/today.md"]
    assert _globbed(ready, "scratch/*.md") == ["gno://notes/scratch/today.md"]
    assert _globbed(ready, "gno://notes/*.md") == [
        "gno://notes/a.md",
        "gno://notes/b.md",
        "gno://notes/c.md",
    ]
    assert _globbed(ready, "scratch/**/*.md") == [
        "gno://notes/scratch/archive/deep/y.md",
        "gno://notes/scratch/archive/x.md",
        "gno://notes/scratch/today.md",
    ]
    assert _globbed(ready, "scratch/archive/**") == [
        "gno://notes/scratch/archive/deep/y.md",
        "gno://notes/scratch/archive/x.md",
    ]
    assert _globbed(ready, "notes/?.md") == [
        "gno://notes/a.md",
        "gno://notes/b.md",
        "gno://notes/c.md",
    ]
    assert _globbed(ready, "notes/[ab].md") == ["gno://notes/a.md", "gno://notes/b.md"]
    assert _globbed(ready, "notes/[!ab].md") == ["gno://notes/c.md"]
    missing = ready.run("multi-get", "scratch/*.txt")
    assert "No documents match scratch/*.txt" in missing.stderr


async def test_gno_multi_get_globs_the_same_way(ready: Cli, tmp_path: Path) -> None:
    env = {"GNO_CONFIG_DIR": str(ready.config_dir), "GNO_DATA_DIR": str(ready.data_dir)}
    async with spawn(env, tmp_path) as wire:
        await wire.handshake()
        call = {"name": "gno_multi_get", "arguments": {"pattern": "scratch/*.md"}}
        answer = await wire.call(1, "tools/call", call)
    found = answer["result"]["structuredContent"]["documents"]
    assert [d["uri"] for d in found] == ["gno://notes/scratch/today.md"]
