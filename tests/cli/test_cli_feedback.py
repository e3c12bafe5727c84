"""What a user sees while and after indexing: pace and time left, the files a sync waits
on, summaries that list each problem once, and one health verdict."""

from __future__ import annotations

import io
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from gno_trio.cli import progress
from gno_trio.cli.progress import ProgressBar
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from tests.support import document_factory as make
from tests.support import message_factory as messages
from tests.support.cli_support import Cli, make_cli

BROKEN = 14


def test_the_bar_shows_rate_and_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    bar = ProgressBar("Embedding", unit="chunks", stream=stream, force=True)
    for step in range(0, 41):
        clock[0] = 100.0 + step * 0.5  # 10 chunks a second
        bar.update(step * 5, 1000)
    bar.close()
    last = stream.getvalue().rstrip("\n").split("\r")[-1]
    assert "200/1000 chunks" in last
    assert "10.0 chunks/s" in last
    assert "ETA 1m20s" in last  # 800 chunks left at 10 a second


def _worker_pids() -> list[int]:
    """This process's conversion workers (children running the worker module)."""
    pids = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        children = (task / "children").read_text().split()
        for pid in children:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"documents.worker" in cmdline:
                pids.append(int(pid))
    return pids


def test_a_stalled_bar_names_the_file_being_converted(dirs: Dirs, tmp_path: Path) -> None:
    root = tmp_path / "mail"
    root.mkdir()
    (root / "archive.mbox").write_bytes(messages.mbox_bytes("okapi", messages=4000))
    for n in range(3):
        (root / f"note{n}.md").write_text(f"# Note {n}\n\nsmall words\n", "utf-8")
    items: list[str] = []
    paused: list[int] = []

    def on_progress(done: int, total: int, item: str) -> None:
        items.append(item)
        if item.startswith("archive.mbox (") and not paused:
            # Freeze the worker mid-file, as a parser stuck in C would be, then let it go.
            paused.extend(_worker_pids())
            for pid in paused:
                os.kill(pid, signal.SIGSTOP)
            threading.Timer(4.0, lambda: [os.kill(p, signal.SIGCONT) for p in paused]).start()

    dirs.config.mkdir(parents=True, exist_ok=True)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="mail")
        (report,) = engine.sync(progress=on_progress)
    assert paused, "the mailbox reported its progress"
    assert report.errors == [] and report.added == 4
    stalled = [i for i in items if "converting archive.mbox" in i]
    assert stalled, items[-20:]
    assert any(i.rstrip().endswith(" s") for i in stalled)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Cli, Path, str]:
    cli = make_cli(tmp_path_factory.mktemp("feedback"))
    root = cli.home / "papers"
    root.mkdir()
    (root / "intro.md").write_text("# Intro\n\nWelcome.\n", "utf-8")
    (root / "locked.pdf").write_bytes(make.locked_pdf_bytes())
    for n in range(BROKEN - 1):
        (root / f"cut{n:02d}.pdf").write_bytes(make.pdf_bytes("nothing")[:700])
    (root / "photo.xyz").write_bytes(make.random_bytes(512))
    cli.run("init", str(root), "--name", "papers")
    first = cli.run("index", "--no-embed").stdout
    return cli, root, first


def test_the_first_summary_counts_skipped_files(folder: tuple[Cli, Path, str]) -> None:
    _, _, first = folder
    summary = first.splitlines()[0]
    assert summary.startswith("papers: 16 files, 1 added")
    assert "1 skipped" in summary and f"{BROKEN} errors" in summary


def test_an_error_line_names_its_path_once(folder: tuple[Cli, Path, str]) -> None:
    _, _, first = folder
    (line,) = [ln for ln in first.splitlines() if "locked.pdf" in ln]
    assert line == "  ! locked.pdf: ENCRYPTED: the PDF is password-protected"
    assert all(ln.count("cut") == 1 for ln in first.splitlines() if "cut0" in ln)


def test_a_no_change_update_counts_old_errors_instead_of_listing_them(
    folder: tuple[Cli, Path, str],
) -> None:
    cli, root, _ = folder
    again = cli.run("update").stdout
    assert "locked.pdf" not in again and "cut00.pdf" not in again
    assert f"  ! {BROKEN} earlier errors unchanged (gno-trio status lists them)" in again
    (report,) = cli.json("update")["collections"]
    assert len(report["errors"]) == BROKEN  # the JSON still lists every error
    (root / "cut00.pdf").write_bytes(make.pdf_bytes("nothing")[:650])  # changed, still broken
    changed = cli.run("update").stdout
    assert "  ! cut00.pdf: CONVERSION_FAILED: " in changed
    assert f"  ! {BROKEN - 1} earlier errors unchanged" in changed


def test_text_status_says_how_many_more_it_did_not_list(folder: tuple[Cli, Path, str]) -> None:
    cli, _, _ = folder
    out = cli.run("status").stdout
    listed = [ln for ln in out.splitlines() if ln.startswith("    ! ") and ".pdf:" in ln]
    assert len(listed) == 10
    assert "    ! ... 4 more (gno-trio status --json lists them)" in out
    assert "Health: files could not be indexed" in out


def _verdicts(cli: Cli) -> tuple[bool, bool, str, int]:
    status: dict[str, Any] = cli.json("status")
    done = cli.run("doctor", "--json")
    import json

    doctor = json.loads(done.stdout)
    return status["healthy"], doctor["healthy"], status["health"]["state"], done.returncode


def test_status_and_doctor_give_one_health_verdict(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    root = cli.home / "papers"
    root.mkdir()
    (root / "intro.md").write_text("# Intro\n\nWelcome.\n", "utf-8")
    (root / "locked.pdf").write_bytes(make.locked_pdf_bytes())
    cli.run("init", str(root), "--name", "papers")
    cli.run("update")
    cli.run("embed")
    assert _verdicts(cli) == (False, False, "needs-attention", 0)  # a warning: exit 0
    assert "problems found" in cli.run("doctor").stdout
    (root / "locked.pdf").unlink()
    cli.run("update")
    assert _verdicts(cli) == (True, True, "healthy", 0)
