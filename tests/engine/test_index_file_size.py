"""A bulk index leaves no dead space in its file.

Merging the full-text indexes after a large sync frees the pages of every
segment merged; an index created by this version hands them back to the file
system, so the file on disk is as large as what it holds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gno_trio.config.dirs import Dirs
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
        engine.collections.add(str(notes), name="notes")
        (report,) = engine.sync()
        assert report.added == 400
        assert [
            h["title"] for h in engine.search.lexical(SearchRequest(query="marker399"))["results"]
        ] == ["Note 399"]
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


def _automerge_and_segments(db: Path) -> tuple[list[tuple[str, int]], int]:
    """``automerge`` settings stored for the chunk index, and its segment count."""
    conn = sqlite3.connect(db)
    try:
        settings = conn.execute("SELECT k, v FROM chunks_fts_config WHERE k = 'automerge'")
        structure = conn.execute("SELECT block FROM chunks_fts_data WHERE id = 10").fetchone()[0]
        return list(settings), _segments(bytes(structure))
    finally:
        conn.close()


def _segments(structure: bytes) -> int:
    """Segments in an FTS5 structure record (version, levels, segments: varints)."""
    values, value, shift = [], 0, 0
    for byte in structure[4:]:  # after the 4-byte cookie
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            values.append(value)
            if len(values) == 2:
                return values[1]
            value, shift = 0, 0
    return 0


def test_a_bulk_sync_merges_once_and_a_small_one_merges_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(apply, "BATCH_DOCS", 20)
    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(300):
        (notes / f"n{number:03d}.md").write_text(
            f"# Note {number}\n\n" + "\n\n".join(f"part {k} of {number}" for k in range(40)),
            encoding="utf-8",
        )
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    db = dirs.data / "index-default.sqlite"
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
        # Bulk: FTS5's automerge was off only inside each batch; one segment after the merge.
        settings, segments = _automerge_and_segments(db)
        assert settings in ([], [("automerge", 4)]) and segments == 1
        for number in range(0, 300, 30):  # a small sync: incremental merging as usual
            (notes / f"n{number:03d}.md").write_text(f"changed {number} " * 200, encoding="utf-8")
        (report,) = engine.sync()
        assert report.updated == 10
        assert _automerge_and_segments(db)[0] in ([], [("automerge", 4)])
        hits = engine.search.lexical(SearchRequest(query="changed", limit=20))["results"]
        assert len(hits) == 10
