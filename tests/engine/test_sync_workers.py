"""A large sync prepares text files in worker processes; the index it writes is the same.

``textpool.PARALLEL_FROM`` is lowered so a small collection takes the worker
path; each test compares it with an in-process sync of the same files, or
checks what a user of a large sync notices (progress, Ctrl-C, the next run
carrying on).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.ingest import apply, textpool
from gno_trio.errors import GnoError
from tests.support import document_factory as make
from tests.support.cli_support import make_cli

FILES = 90


def _corpus(root: Path) -> None:
    root.mkdir(parents=True)
    for n in range(FILES):
        folder = root / f"f{n % 4}"
        folder.mkdir(exist_ok=True)
        front = f"---\ntitle: Note {n}\ntags: [t{n % 3}, shared]\nauthor: ann\n---\n"
        front = front if n % 2 else ""
        body = f"# Heading {n}\n\nokapi number{n} with [[note-{n + 1}]] and #inline{n % 5}.\n"
        (folder / f"note-{n}.md").write_text(front + body + "more words here. " * (n * 7), "utf-8")
    (root / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody tapir\n", "utf-8")
    (root / "paper.docx").write_bytes(make.docx_bytes("quokka"))
    (root / "data.bin").write_bytes(bytes(range(256)) * 8)
    (root / "code.py").write_text("def tapir():\n    return 'x'\n" * 40, "utf-8")
    (root / "big.txt").write_text("word " * 300_000, "utf-8")


def _index_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as conn:
        return {
            "documents": conn.execute(
                "SELECT rel_path, docid, title, source_hash, mirror_hash, source_mime, author, "
                "categories_json, headings_json, body_pos, frontmatter_error, last_error_code "
                "FROM documents ORDER BY rel_path"
            ).fetchall(),
            "chunks": conn.execute(
                "SELECT mirror_hash, seq, pos, length, start_line, end_line, token_count "
                "FROM content_chunks ORDER BY mirror_hash, seq"
            ).fetchall(),
            "tags": conn.execute(
                "SELECT d.rel_path, t.tag, t.source FROM doc_tags t "
                "JOIN documents d ON d.id = t.doc_id ORDER BY 1, 2"
            ).fetchall(),
            "links": conn.execute(
                "SELECT d.rel_path, l.kind, l.target, l.line, l.col FROM doc_links l "
                "JOIN documents d ON d.id = l.doc_id ORDER BY 1, 2, 3, 4"
            ).fetchall(),
            "errors": conn.execute(
                "SELECT rel_path, code FROM ingest_errors ORDER BY rel_path"
            ).fetchall(),
            "chunk_hits": conn.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'okapi'"
            ).fetchall(),
        }


def _sync(dirs: Dirs, root: Path, **kwargs: Any) -> Any:
    with Engine.open(dirs=dirs) as engine:
        if not engine.config.collections:
            engine.collections.add(str(root), name="notes")
        (report,) = engine.sync(**kwargs)
        hits = engine.search.lexical(SearchRequest(query="okapi", limit=100))["results"]
        return report, len(hits)


def _take_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prepare in workers from 10 files on, even on a one-core machine."""
    monkeypatch.setattr(textpool, "PARALLEL_FROM", 10)
    monkeypatch.setattr(textpool, "usable_cores", lambda: 2)
    assert textpool.worker_count(FILES) == 1


def _dirs(base: Path) -> Dirs:
    return Dirs(config=base / "config", data=base / "data", cache=base / "cache")


def _db(dirs: Dirs) -> Path:
    return dirs.data / "index-default.sqlite"


def test_workers_write_the_index_an_in_process_sync_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "notes"
    _corpus(root)
    serial, pooled = _dirs(tmp_path / "serial"), _dirs(tmp_path / "pooled")
    serial_report, serial_hits = _sync(serial, root)
    _take_workers(monkeypatch)
    pooled_report, pooled_hits = _sync(pooled, root)
    assert pooled_hits == serial_hits == FILES
    for field in ("added", "updated", "unchanged", "skipped", "errors", "warnings"):
        assert getattr(pooled_report, field) == getattr(serial_report, field), field
    assert _index_rows(_db(pooled)) == _index_rows(_db(serial))
    # Changed files, a file whose bytes are back as indexed (a touch), a new one:
    # the next large sync through workers agrees with the in-process one too.
    (root / "f1" / "note-1.md").write_text("---\ntitle: Changed\n---\nokapi again\n", "utf-8")
    os.utime(root / "f2" / "note-2.md", ns=(1, 1))
    (root / "new.md").write_text("okapi newcomer\n", "utf-8")
    shutil.rmtree(root / "f3")
    monkeypatch.setattr(textpool, "PARALLEL_FROM", 1)
    pooled_report, _ = _sync(pooled, root)
    monkeypatch.setattr(textpool, "PARALLEL_FROM", 10**9)
    serial_report, _ = _sync(serial, root)
    for field in ("added", "updated", "unchanged", "removed", "errors"):
        assert getattr(pooled_report, field) == getattr(serial_report, field), field
    assert pooled_report.unchanged > 0 and pooled_report.updated == 1
    assert _index_rows(_db(pooled)) == _index_rows(_db(serial))


def test_progress_counts_every_file_and_a_stop_leaves_a_resumable_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "notes"
    _corpus(root)
    _take_workers(monkeypatch)
    monkeypatch.setattr(textpool, "GROUP_FILES", 4)
    monkeypatch.setattr(apply, "BATCH_DOCS", 10)
    dirs = _dirs(tmp_path / "index")
    seen: list[int] = []

    def stop_half_way(done: int, total: int, item: str) -> None:
        seen.append(done)
        if done == 50:
            raise GnoError("CANCELLED", "stopped by the user")

    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="notes")
        with pytest.raises(GnoError) as stopped:
            engine.sync(progress=stop_half_way)
        assert stopped.value.code == "CANCELLED"
        assert seen[-1] == 50 and seen == sorted(seen) and set(seen) == set(range(1, 51))
        events: list[tuple[int, int]] = []
        (report,) = engine.sync(progress=lambda done, total, item: events.append((done, total)))
    total = FILES + 5
    assert report.scanned == total
    assert events[-1][0] == total and {t for _, t in events} == {total}
    # What the stopped run committed (whole batches of 10) was kept; the rest was added now.
    assert report.unchanged >= 30
    assert report.added + report.unchanged + report.skipped + len(report.errors) == total
    serial = _dirs(tmp_path / "serial")
    monkeypatch.setattr(textpool, "PARALLEL_FROM", 10**9)
    _sync(serial, root)
    assert _index_rows(_db(dirs)) == _index_rows(_db(serial))


def _children(pid: int) -> set[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as listing:
            return {int(child) for child in listing.read().split()}
    except OSError:
        return set()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_ctrl_c_stops_a_large_update_and_its_workers_and_the_next_one_finishes(
    tmp_path: Path,
) -> None:
    files = textpool.PARALLEL_FROM + 300
    cli = make_cli(tmp_path)
    root = cli.home / "notes"
    for n in range(files):
        folder = root / f"d{n // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{n}.md").write_text(f"# Note {n}\n\nokapi {n} " + "filler " * 60, "utf-8")
    cli.run("init", str(root), "--name", "notes")
    process = subprocess.Popen(
        [sys.executable, "-m", "gno_trio", "update", "--progress"],
        env=cli.env,
        cwd=cli.home,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stderr is not None
    os.set_blocking(process.stderr.fileno(), False)
    seen = b""
    workers: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        seen += process.stderr.read() or b""
        workers |= _children(process.pid)
        done = re.findall(rb"\] (\d+)/", seen)
        if done and int(done[-1]) >= 700:  # past the first batch (500)
            break
        time.sleep(0.05)
    assert process.poll() is None, seen[-500:]
    assert workers, "a large update prepares files in worker processes"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    stderr = (seen + err).decode()
    assert process.returncode == 130, stderr[-2000:]
    assert "Interrupted" in stderr and "Traceback" not in stderr
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)
    (report,) = cli.json("update")["collections"]
    assert report["added"] + report["unchanged"] == files and report["errors"] == []
    assert report["added"] < files  # what the stopped run committed was kept
    hits = cli.json("search", "okapi", "--limit", "5")
    assert hits["results"]
