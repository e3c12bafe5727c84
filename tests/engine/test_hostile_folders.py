"""Hostile folders: names that are not UTF-8, files swapped between the walk and the read,
FIFOs, device nodes and links. A sync lists what it does not index and goes on."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from gno_trio.engine.ingest.markdown_links import MATCHES_READ
from tests.support.cli_support import COMMAND_TIMEOUT_S, Cli, make_cli
from tests.support.stdio_session import spawn

NOT_UTF8 = b"bad\xff\xfe.md"
NOT_UTF8_URI = "gno://notes/bad%FF%FE.md"


def _notes(tmp_path: Path) -> tuple[Cli, Path]:
    cli = make_cli(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    cli.run("init", str(notes), "--name", "notes")
    return cli, notes


def _server_env(cli: Cli) -> dict[str, str]:
    return {k: v for k, v in cli.env.items() if k.startswith("GNO_")}


def _driven(cli: Cli, tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A command run by ``script`` in the sandbox, with a step of it made to misbehave."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        env=cli.env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )


async def _tool(wire: Any, request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    answer = await wire.call(request_id, "tools/call", {"name": name, "arguments": arguments})
    assert not answer["result"].get("isError"), answer
    structured: dict[str, Any] = answer["result"]["structuredContent"]
    return structured


async def test_a_name_that_is_not_utf8_is_indexed_under_its_escaped_bytes(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    (notes / "a.md").write_text("# A\nalpha\n")
    with open(os.path.join(os.fsencode(notes), NOT_UTF8), "wb") as handle:
        handle.write(b"# Bad\nbravo words\n")
    (notes / "z.md").write_text("# Z\nzulu\n")

    assert "3 added" in cli.run("update").stdout
    uris = [doc["uri"] for doc in cli.json("ls")["documents"]]
    assert uris == ["gno://notes/a.md", NOT_UTF8_URI, "gno://notes/z.md"]
    assert "bravo words" in cli.run("get", NOT_UTF8_URI).stdout
    (hit,) = cli.json("search", "bravo")["results"]
    assert hit["uri"] == NOT_UTF8_URI
    # The URI is stable: the next sync finds the file unchanged under it.
    assert "3 unchanged" in cli.run("update").stdout

    async with spawn(_server_env(cli), tmp_path) as wire:
        await wire.handshake()
        got = await _tool(wire, 1, "gno_get", ref=NOT_UTF8_URI)
        assert "bravo words" in got["content"]
        assert got["uri"] == NOT_UTF8_URI


def _skipped(cli: Cli) -> dict[str, str]:
    (collection,) = cli.json("status")["collections"]
    assert collection["skippedCount"] == len(collection["skipped"])
    return {entry["relPath"]: entry["code"] for entry in collection["skipped"]}


def test_links_fifos_sockets_and_devices_are_listed_with_a_reason(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\noutsideword\n")
    (notes / "kept.md").write_text("# Kept\nkeptword\n")
    (notes / "link.md").symlink_to(outside)
    (notes / "sub").mkdir()
    os.mkfifo(notes / "sub" / "pipe.md")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(notes / "sock.md"))
        expected = {"link.md": "SYMLINK", "sub/pipe.md": "SPECIAL_FILE", "sock.md": "SPECIAL_FILE"}
        with contextlib.suppress(PermissionError):  # device nodes need the right to make them
            os.mknod(notes / "null.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))
            expected["null.md"] = "SPECIAL_FILE"
        out = cli.run("update").stdout
        assert f"{len(expected)} skipped" in out
        assert _skipped(cli) == expected
        assert cli.json("search", "keptword")["results"]
        assert not cli.json("search", "outsideword")["results"]
        # Listed again by the next sync, and gone once the name is gone.
        assert _skipped(cli) == expected
        (notes / "link.md").unlink()
        cli.run("update")
        del expected["link.md"]
        assert _skipped(cli) == expected


SWAP_AFTER_WALK = """
import os, sys
from gno_trio.cli.main import main
from gno_trio.engine.ingest import sync

notes, outside = sys.argv[1], sys.argv[2]
walk = sync.walked

def walked_then_swapped(spec):
    found = walk(spec)
    # Between the walk and the read: a link to an outside file, a FIFO, and a
    # parent folder swapped for a link to an outside folder holding the same names.
    os.replace(os.path.join(notes, "link.md"), os.path.join(outside, "was-link.md"))
    os.symlink(os.path.join(outside, "secret.md"), os.path.join(notes, "link.md"))
    os.unlink(os.path.join(notes, "pipe.md"))
    os.mkfifo(os.path.join(notes, "pipe.md"))
    os.rename(os.path.join(notes, "sub"), os.path.join(outside, "old-sub"))
    os.symlink(os.path.join(outside, "sub"), os.path.join(notes, "sub"))
    return found

sync.walked = walked_then_swapped
sys.exit(main(["update"]))
"""


def test_a_file_swapped_between_walk_and_read_is_not_read(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.md").write_text("# Secret\nsecretword\n")
    (outside / "sub" / "deep.md").write_text("# Deep\nsecretword deep\n")
    (notes / "kept.md").write_text("# Kept\nkeptword\n")
    (notes / "link.md").write_text("# Link\nlinkword\n")
    (notes / "pipe.md").write_text("# Pipe\npipeword\n")
    (notes / "sub").mkdir()
    (notes / "sub" / "deep.md").write_text("# Deep\ndeepword\n")

    # Before the fix the FIFO blocked this sync for good (the run's timeout fails it).
    done = _driven(cli, tmp_path, SWAP_AFTER_WALK, str(notes), str(outside))
    assert done.returncode == 0, done.stderr
    assert not cli.json("search", "secretword")["results"]
    assert cli.json("search", "keptword")["results"]
    (collection,) = cli.json("status")["collections"]
    refused = {entry["relPath"]: entry["code"] for entry in collection["errors"]}
    assert refused == {
        "link.md": "SYMLINK",
        "pipe.md": "SPECIAL_FILE",
        "sub/deep.md": "FILE_REPLACED",
    }
    # The write lease was given back: a capture goes through.
    cli.run("capture", "-c", "notes", "--title", "After", "after words")


def test_a_note_of_one_long_line_of_links_indexes_in_one_pass(tmp_path: Path) -> None:
    """7.8 MB on one line, 1.3 M wiki links: every link once looked back to the line's start
    (minutes under the write lease); the scan now costs one pass and a bounded number of links."""
    cli, notes = _notes(tmp_path)
    (notes / "z.md").write_text("# Z\nzulu\n")
    (notes / "long.md").write_text("# Long\n" + "[[z]] " * 1_300_000 + "tailword\n")
    cli.run("update")  # within the command timeout, which the quadratic scan overran
    assert cli.json("search", "tailword")["results"]
    links = cli.json("links", "notes/long.md")["links"]
    assert len(links) == MATCHES_READ
    assert (links[-1]["startLine"], links[-1]["startCol"]) == (2, (MATCHES_READ - 1) * 6 + 1)
    assert links[-1]["resolvedUri"] == "gno://notes/z.md"


def test_temporary_copies_a_killed_write_left_are_reported_then_removed(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    (notes / "deep" / "er").mkdir(parents=True)
    (notes / "kept.md").write_text("# Kept\nkeptword\n")
    cli.run("update")
    # What a rename or move applied by a process killed with SIGKILL leaves: whole
    # copies of notes under the atomic writer's temporary names, in any folder.
    left = [notes / ".gno-tmp-0123456789abcdef.tmp", notes / "deep" / "er" / ".gno-tmp-feed.tmp"]
    for path in left:
        path.write_text("# Kept\nkeptword copy\n")
    (notes / "deep" / "notes-gno-tmp-.tmp").write_text("a file of the user's\n")

    doctor = {c["name"]: c for c in cli.json("doctor")["checks"]}["temporary-files"]
    assert doctor["status"] == "warn" and doctor["details"], doctor
    assert "2 temporary files" in doctor["message"]
    assert "notes/deep/er/.gno-tmp-feed.tmp" in doctor["message"]

    cli.run("update")
    assert not any(path.exists() for path in left)
    assert (notes / "deep" / "notes-gno-tmp-.tmp").exists()
    doctor = {c["name"]: c for c in cli.json("doctor")["checks"]}["temporary-files"]
    assert doctor["status"] == "ok"
    assert len(cli.json("search", "keptword")["results"]) == 1


CAPTURE_THEN = """
import os, signal, sys
from gno_trio.cli.main import main
from gno_trio.engine.ingest import capture

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def failed(*args, **kwargs):
    raise MemoryError("the index write failed")

capture.index_written = killed if sys.argv[1] == "kill" else failed
sys.exit(main(["capture", "-c", "notes", "--title", "Lost", "lostword here"]))
"""


def _capture_then(cli: Cli, tmp_path: Path, what: str) -> subprocess.CompletedProcess[str]:
    return _driven(cli, tmp_path, CAPTURE_THEN, what)


def test_a_capture_killed_before_indexing_is_indexed_by_the_next_start(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    (notes / "kept.md").write_text("# Kept\nkeptword\n")
    cli.run("update")
    done = _capture_then(cli, tmp_path, "kill")
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert (notes / "lost.md").is_file()  # on disk, and the index never heard of it
    # The next process that opens the index (here a search) finishes the write first.
    (hit,) = cli.json("search", "lostword")["results"]
    assert hit["uri"] == "gno://notes/lost.md"
    # Once: the write is finished for good, and nothing else changed.
    assert len(cli.json("search", "keptword")["results"]) == 1
    assert "2 unchanged" in cli.run("update").stdout


def test_a_capture_that_fails_after_writing_takes_its_note_back(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    done = _capture_then(cli, tmp_path, "fail")
    assert done.returncode == 2, done.stderr
    assert not (notes / "lost.md").exists()
    assert not cli.json("search", "lostword")["results"]


RENAME_KILLED_HALF_WAY = """
import os, signal
from gno_trio.engine import Engine
from gno_trio.engine.ingest import refactor_apply

commit = refactor_apply.commit_files

def killed_after_the_target(plan, **_):
    def step(name):
        if name == "target":
            os.kill(os.getpid(), signal.SIGKILL)
    return commit(plan, fail_after=step)

refactor_apply.commit_files = killed_after_the_target
with Engine.open() as engine:
    plan = engine.notes.refactor("rename", "notes/target.md", name="renamed")
    engine.notes.refactor(
        "rename", "notes/target.md", name="renamed", apply_digest=plan["planDigest"]
    )
"""


def test_a_rename_killed_half_way_is_tidied_by_the_next_start(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    (notes / "target.md").write_text("# Target\ntargetword\n")
    (notes / "index.md").write_text("# Index\nSee [[target]].\n")
    cli.run("update")
    done = _driven(cli, tmp_path, RENAME_KILLED_HALF_WAY)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = sorted(p.name for p in notes.rglob(".gno-tmp-*.tmp"))
    assert left, "the killed apply left its staged copies"
    doctor = {c["name"]: c for c in cli.json("doctor")["checks"]}["temporary-files"]
    assert doctor["status"] == "warn"
    # The next process to open the index syncs the collection: copies gone, the
    # note the apply had already linked into place indexed.
    hits = {hit["uri"] for hit in cli.json("search", "targetword")["results"]}
    assert hits == {"gno://notes/target.md", "gno://notes/renamed.md"}
    assert not list(notes.rglob(".gno-tmp-*.tmp"))


RENAME_PREVIEW = """
from gno_trio.engine import Engine
from gno_trio.errors import GnoError

with Engine.open() as engine:
    try:
        engine.notes.refactor("rename", "notes/target.md", name="renamed")
    except GnoError as error:
        print(error.code, error.message)
"""


def test_a_note_swapped_for_a_fifo_is_not_read_by_a_rename(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    (notes / "target.md").write_text("# Target\ntargetword\n")
    cli.run("update")
    (notes / "target.md").unlink()
    os.mkfifo(notes / "target.md")
    # Before, opening the FIFO waited for a writer for good (the run's timeout fails it).
    done = _driven(cli, tmp_path, RENAME_PREVIEW)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PATH_NOT_FOUND "), done.stdout
    assert "a FIFO" in done.stdout
