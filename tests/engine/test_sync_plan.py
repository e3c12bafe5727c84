"""Deciding what a sync must do, on its own: no database, no writes.

``decide`` takes what a walk found and what the index holds and says which
files to read and which documents vanished; these tests pin its rules
(stat-unchanged files cost nothing, errors and inactive documents are
retried, unlisted folders shield their contents, a sync of named files never
retires anything) and the rename book that pairs vanished documents with new
files of the same bytes.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from gno_trio.engine import Engine
from gno_trio.engine.ingest import plan as planning
from gno_trio.engine.ingest.plan import (
    RenameBook,
    StoredDoc,
    Walked,
    decide,
    indexed_fingerprints,
    stored_documents,
    stored_for_walk,
)
from gno_trio.engine.ingest.prepare import read_source
from gno_trio.engine.ingest.walker import FoundFile, listing
from gno_trio.engine.store.document_rows import _fingerprint_sql


def found(rel: str, size: int = 10, mtime_ns: int = 1) -> FoundFile:
    return FoundFile(rel, f"/notes/{rel}", size, mtime_ns)


def stored(
    rel: str,
    doc_id: int,
    *,
    size: int = 10,
    mtime_ns: int = 1,
    active: bool = True,
    errored: bool = False,
    source_hash: str = "h",
) -> StoredDoc:
    return StoredDoc(doc_id, rel, size, mtime_ns, active, errored, source_hash, True)


def test_only_files_that_may_have_changed_are_read() -> None:
    rows = {
        "same.md": stored("same.md", 1),
        "grown.md": stored("grown.md", 2),
        "touched.md": stored("touched.md", 3),
        "failed.md": stored("failed.md", 4, errored=True),
        "back.md": stored("back.md", 5, active=False),
    }
    files = [
        found("same.md"),
        found("grown.md", size=11),
        found("touched.md", mtime_ns=2),
        found("failed.md"),
        found("back.md"),
        found("new.md"),
    ]
    plan = decide(files, rows)
    assert (plan.scanned, plan.unchanged) == (6, 1)
    assert [(f.rel_path, row.id if row else None) for f, row in plan.to_read] == [
        ("grown.md", 2),
        ("touched.md", 3),
        ("failed.md", 4),
        ("back.md", 5),
        ("new.md", None),
    ]
    assert plan.vanished == ()
    assert plan.seen == {f.rel_path for f in files}


def test_vanished_documents_exclude_inactive_ones_and_unlisted_folders() -> None:
    rows = {
        "kept.md": stored("kept.md", 1),
        "gone.md": stored("gone.md", 2),
        "old.md": stored("old.md", 3, active=False),
        "locked/inner.md": stored("locked/inner.md", 4),
        "lockedness.md": stored("lockedness.md", 5),
    }
    plan = decide([found("kept.md")], rows, unlisted=["locked"])
    assert [row.rel_path for row in plan.vanished] == ["gone.md", "lockedness.md"]
    # An unreadable root shields everything.
    assert decide([], rows, unlisted=["."]).vanished == ()


def test_a_sync_of_named_files_never_retires_anything() -> None:
    rows = {"a.md": stored("a.md", 1), "b.md": stored("b.md", 2)}
    plan = decide([found("a.md", size=99)], rows, partial=True)
    assert [f.rel_path for f, _ in plan.to_read] == ["a.md"]
    assert plan.vanished == ()


def test_the_rename_book_pairs_each_vanished_document_once_in_path_order() -> None:
    book = RenameBook(
        [stored("a.md", 1, source_hash="x"), stored("b.md", 2, source_hash="x"), stored("c.md", 3)]
    )
    first, second = book.claim("x"), book.claim("x")
    assert (first and first.id, second and second.id) == (1, 2)
    assert book.claim("x") is None
    assert book.claim("nothing like it") is None
    assert [row.id for row in book.unclaimed()] == [3]


def documents_table(path: Path, rows: list[tuple[object, ...]]) -> sqlite3.Connection:
    """A database with just the ``documents`` columns deciding reads, holding ``rows``."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row  # as the engine's connections have it
    conn.execute(
        "CREATE TABLE documents (id INTEGER PRIMARY KEY, collection TEXT, rel_path TEXT, "
        "source_size INT, source_mtime_ns INT, active INT, last_error_code TEXT, "
        "source_hash TEXT, mirror_hash TEXT, converter_id TEXT, converter_version TEXT)"
    )
    conn.executemany("INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)", rows)
    return conn


def test_stored_documents_reads_one_narrow_row_per_path(tmp_path: Path) -> None:
    conn = documents_table(
        tmp_path / "t.sqlite",
        [
            (1, "notes", "a.md", 10, 1, 1, None, "h1", "m1"),
            (2, "notes", "b.md", 20, 2, 0, "READ_ERROR", "h2", None),
            (3, "other", "a.md", 30, 3, 1, None, "h3", "m3"),
        ],
    )
    rows = stored_documents(conn, "notes")
    assert rows == {
        "a.md": StoredDoc(1, "a.md", 10, 1, True, False, "h1", True),
        "b.md": StoredDoc(2, "b.md", 20, 2, False, True, "h2", False),
    }
    assert set(stored_documents(conn, "notes", ["b.md"])) == {"b.md"}


def test_a_full_sync_reads_whole_rows_only_for_what_changed_or_vanished(tmp_path: Path) -> None:
    conn = documents_table(
        tmp_path / "t.sqlite",
        [
            (1, "notes", "same.md", 10, 1, 1, None, "h1", "m1"),
            (2, "notes", "grown.md", 10, 1, 1, None, "h2", "m2"),
            (3, "notes", "failed.md", 10, 1, 1, "READ_ERROR", "h3", "m3"),
            (4, "notes", "gone.md", 10, 1, 1, None, "h4", "m4"),
            (5, "notes", "retired.md", 10, 1, 0, None, "h5", "m5"),
            (6, "other", "gone.md", 10, 1, 1, None, "h6", "m6"),
        ],
    )
    # The walk saw same.md unchanged; the others are the files it could not match.
    changed = [found("grown.md", size=11), found("failed.md"), found("new.md")]
    seen = {"same.md", "grown.md", "failed.md", "new.md"}
    rows = stored_for_walk(conn, "notes", changed, seen)
    assert set(rows) == {"grown.md", "failed.md", "gone.md"}
    plan = decide(changed, rows, seen=seen)
    assert (plan.scanned, plan.unchanged) == (4, 1)
    assert [f.rel_path for f, _ in plan.to_read] == ["grown.md", "failed.md", "new.md"]
    assert [row.id for row in plan.vanished] == [4]
    # Nothing vanished: no row of an unchanged or unseen document is read at all.
    rows = stored_for_walk(conn, "notes", changed, seen | {"gone.md"})
    assert set(rows) == {"grown.md", "failed.md"}


def test_the_walk_matches_indexed_fingerprints_exactly(tmp_path: Path) -> None:
    """Size, mtime (to the nanosecond, before 1970 too) and path must all agree."""
    root = tmp_path / "notes"
    (root / "sub dir").mkdir(parents=True)
    files = {
        "same.md": (b"12345", 1_700_000_000_123_456_789),
        "old.md": (b"ancient", -86_400_000_000_123),
        "sub dir/é ü.md": (b"accents", 1_600_000_000_000_000_001),
        "resized.md": (b"now longer", 1_700_000_000_000_000_000),
        "retouched.md": (b"same size", 1_700_000_000_000_000_002),
        "new.md": (b"new", 1_700_000_000_000_000_000),
        "sub dir/failed.md": (b"x", 1),
        "sub dir/inactive.md": (b"x", 1),
    }
    for rel, (data, mtime_ns) in files.items():
        (root / rel).write_bytes(data)
        os.utime(root / rel, ns=(mtime_ns, mtime_ns))
    conn = documents_table(
        tmp_path / "t.sqlite",
        [
            (1, "notes", "same.md", 5, 1_700_000_000_123_456_789, 1, None, "h", "m"),
            (2, "notes", "old.md", 7, -86_400_000_000_123, 1, None, "h", "m"),
            (3, "notes", "sub dir/é ü.md", 7, 1_600_000_000_000_000_001, 1, None, "h", "m"),
            (4, "notes", "resized.md", 3, 1_700_000_000_000_000_000, 1, None, "h", "m"),
            (5, "notes", "retouched.md", 9, 1_700_000_000_000_000_001, 1, None, "h", "m"),
            (6, "other", "new.md", 3, 1_700_000_000_000_000_000, 1, None, "h", "m"),
            (7, "notes", "sub dir/failed.md", 1, 1, 1, "READ_ERROR", "h", "m"),
            (8, "notes", "sub dir/inactive.md", 1, 1, 0, None, "h", "m"),
        ],
    )
    walked = Walked(root, listing(root))
    changed = walked.changed(indexed_fingerprints(conn, "notes"))
    assert [f.rel_path for f in changed] == [
        "new.md",
        "resized.md",
        "retouched.md",
        "sub dir/failed.md",
        "sub dir/inactive.md",
    ]
    on_disk = (root / "resized.md").stat()
    assert changed[1] == FoundFile(
        "resized.md",
        str(root / "resized.md"),
        10,
        1_700_000_000_000_000_000,
        on_disk.st_dev,
        on_disk.st_ino,
    )
    assert walked.seen == set(files)


def test_indexed_fingerprints_arrive_whole_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planning, "_FINGERPRINT_PIECE", 3)
    conn = documents_table(
        tmp_path / "t.sqlite",
        [(i, "notes", f"n{i}.md", i, 7, 1, None, "h", "m") for i in range(1, 11)],
    )
    assert planning.indexed_fingerprints(conn, "notes") == {f"{i} 7 n{i}.md" for i in range(1, 11)}
    assert planning.indexed_fingerprints(conn, "other") == set()


def test_a_file_read_after_the_walk_is_read_as_it_is_now(tmp_path: Path) -> None:
    path = tmp_path / "grew.md"
    path.write_bytes(b"x" * 5000)
    # The walk saw 10 bytes; the file grew meanwhile: all of it is read, up to the limit.
    assert read_source(FoundFile("grew.md", str(path), 10, 1), 100_000) == b"x" * 5000
    assert len(read_source(FoundFile("grew.md", str(path), 10, 1), 1000)) == 1001  # too large
    path.write_bytes(b"y" * 3)  # and one that shrank
    assert read_source(FoundFile("grew.md", str(path), 5000, 1), 100_000) == b"yyy"


def test_a_resync_reads_the_fingerprints_from_one_narrow_index(indexed: Engine) -> None:
    """Not from the documents' whole rows (about 500 bytes each: at 100,000 documents a
    no-change sync would read every page of the table and keep much of it cached)."""
    with indexed.connection() as conn:
        steps = conn.execute(
            "EXPLAIN QUERY PLAN " + _fingerprint_sql(1), ("notes", -1, "native/markdown", "1", 10)
        ).fetchall()
    assert any("COVERING INDEX documents_fingerprint" in step[3] for step in steps), steps


def test_a_first_sync_plan_holds_a_few_objects_per_file(tmp_path: Path) -> None:
    """The plan lives as long as the sync: at 100,000 files, a record of each file to read
    (a tuple, two paths, four integers: about 550 bytes) held 55 MB of the writer's memory
    from the first batch to the last. It holds each file as the walk spelled it instead."""
    root = tmp_path / "notes"
    for folder in range(10):
        (root / f"d{folder}").mkdir(parents=True)
        for note in range(300):
            (root / f"d{folder}" / f"note {note}.md").write_bytes(b"x")
    tracemalloc.start()
    try:
        walked = Walked(root, listing(root))
        plan = decide(walked.changed(set()), {}, seen=walked.seen)
        del walked
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(plan.to_read) == plan.to_read.new_files() == 3000
    assert held / 3000 < 300  # the path it saw (with the set of those), its fingerprint
    found, row = plan.to_read[-1]  # paths sort as strings
    assert (found.rel_path, found.abs_path, found.size, row) == (
        "d9/note 99.md",
        str(root / "d9" / "note 99.md"),
        1,
        None,
    )
    assert [f.rel_path for f, _ in plan.to_read[:2]] == ["d0/note 0.md", "d0/note 1.md"]
