"""A bulk index leaves no dead space in its file.

Merging the full-text indexes after a large sync frees the pages of every
segment merged; an index created by this version hands them back to the file
system, so the file on disk is as large as what it holds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gno_trio.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.ingest import apply


def test_a_bulk_sync_leaves_no_free_pages_in_the_index_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(apply, "BATCH_DOCS", 40)  # many batches: many segments to merge
    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(400):
        words = " ".join(f"w{(number * 7 + k) % 997}" for k in range(120))
        (notes / f"n{number:03d}.md").write_text(
            f"# Note {number}\n\nmarker{number} {words}\n", encoding="utf-8"
        )
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.add_collection(str(notes), name="notes")
        (report,) = engine.sync()
        assert report.added == 400
        assert [h["title"] for h in engine.search(SearchRequest(query="marker399"))["results"]] == [
            "Note 399"
        ]
    db = dirs.data / "index-default.sqlite"
    conn = sqlite3.connect(db)
    try:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert free == 0
    assert db.stat().st_size == pages * page_size
