"""An index survives a sync that is killed or runs out of disk, and the next sync resumes.

A sync writes in bounded batches, each its own transaction: whatever stops it
(``kill -9``, a full disk) loses at most the batch in flight. These tests stop
real syncs of real files and check, on the SQLite file itself, that the
index is consistent (SQLite's and FTS5's own integrity checks, every active
document in the full-text index exactly once), that what was committed stays,
and that the next sync adds only what is missing and ends with the same
search answers as an uninterrupted index.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.ingest import apply
from gno_trio.errors import GnoError
from tests.conftest import gno_env

_LETTERS = "abcdefghijklmnopqrstuvwx"
WORDS = tuple(f"{letter}word" for letter in _LETTERS)


def write_notes(root: Path, count: int, *, start: int = 0) -> None:
    """``count`` small distinct notes, 100 to a folder, each with a unique marker word."""
    for number in range(start, start + count):
        folder = root / f"f{number // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(WORDS[(number + k) % len(WORDS)] for k in range(40))
        (folder / f"note-{number:05d}.md").write_text(
            f"---\ntitle: Note {number}\ntags: [t{number % 7}]\n---\n"
            f"# Heading {number}\n\nmarker{number} {words}\n\n{words} closing{number}.\n",
            encoding="utf-8",
        )


def check_consistent(db: Path) -> int:
    """SQLite and FTS5 integrity, one full-text row per active document; returns the count."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for table in ("documents_fts", "chunks_fts"):
            # rank = 1: also compare the index with the text it was built from
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        active = conn.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0]
        indexed = conn.execute(
            "SELECT COUNT(*) FROM documents_fts WHERE documents_fts MATCH 'title : note'"
        ).fetchone()[0]
        assert indexed == active
        created = conn.execute(
            "SELECT COUNT(*) FROM document_changes WHERE kind = 'create'"
        ).fetchone()[0]
        assert created == active  # each document journaled once, none twice
        return int(active)
    finally:
        conn.close()


def test_kill_9_mid_sync_keeps_committed_batches_and_the_next_sync_resumes(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    total = 3 * apply.BATCH_DOCS
    write_notes(notes, total)
    env = gno_env(tmp_path)
    cli = [sys.executable, "-m", "gno_trio"]
    subprocess.run([*cli, "init", str(notes), "--name", "notes"], env=env, check=True)
    db = tmp_path / "data" / "index-default.sqlite"
    process = subprocess.Popen([*cli, "update"], env=env, stdout=subprocess.DEVNULL)
    committed = 0
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as probe:
                committed = probe.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            if committed:
                break
            time.sleep(0.005)
        assert process.poll() is None, "the sync ended before a batch could be interrupted"
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL
    kept = check_consistent(db)
    assert 0 < kept < total
    assert kept % apply.BATCH_DOCS == 0  # whole batches, nothing half-written

    again = subprocess.run(
        [*cli, "update", "--json"], env=env, check=True, capture_output=True, text=True
    )
    assert f'"added": {total - kept}' in again.stdout
    assert check_consistent(db) == total
    with Engine.open(dirs=Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")) as e:
        for number in (0, kept - 1, kept, total - 1):
            found = e.search.lexical(SearchRequest(query=f"marker{number}"))["results"]
            assert [hit["title"] for hit in found] == [f"Note {number}"]
            assert f"<mark>marker{number}</mark>" in found[0]["snippet"]


def test_a_disk_that_fills_mid_sync_fails_cleanly_and_the_next_sync_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(apply, "BATCH_DOCS", 50)
    notes = tmp_path / "notes"
    write_notes(notes, 100)
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(notes), name="notes")
        (first,) = engine.sync()
        assert first.added == 100
        write_notes(notes, 400, start=100)
        with engine.connection() as conn:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            # room for a batch or two of the new notes, then "database or disk is full"
            conn.execute(f"PRAGMA max_page_count = {pages + 250}")
            with pytest.raises(GnoError) as failure:
                engine.sync()  # runs on the connection bound by the block
            conn.execute("PRAGMA max_page_count = 1073741823")  # the disk has room again
        assert failure.value.code == "RUNTIME"
        assert "disk is full" in failure.value.message
        db = dirs.data / "index-default.sqlite"
        kept = check_consistent(db)
        assert 100 < kept < 500 and kept % 50 == 0
        # The next sync, with room again, adds exactly what is missing.
        (resumed,) = engine.sync()
        assert resumed.added == 500 - kept
        assert check_consistent(db) == 500
        found = engine.search.lexical(SearchRequest(query="marker499"))["results"]
        assert [hit["title"] for hit in found] == ["Note 499"]
