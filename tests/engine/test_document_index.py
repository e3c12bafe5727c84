"""The tantivy document index: a copy of SQLite that heals, and the backend choice.

SQLite is the source of truth; the tantivy index beside it must answer as
SQLite says after anything that can happen to it: a ``kill -9`` between the
SQLite commit and the tantivy commit, a missing, damaged or foreign index
directory, a writer in another process, tag and collection changes, a
backend switch in either direction.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Scope, SearchRequest
from gno_trio.engine.search.docindex import policy, store
from tests.conftest import choose_backend, gno_env


def write_notes(root: Path, count: int, *, start: int = 0) -> None:
    """Small notes, each with a unique marker word and the shared word ``common``."""
    root.mkdir(parents=True, exist_ok=True)
    for number in range(start, start + count):
        (root / f"note-{number:04d}.md").write_text(
            f"# Note {number}\n\nmarker{number} common words of note {number}.\n", "utf-8"
        )


def found(engine: Engine, query: str, limit: int = 100) -> list[str]:
    hits = engine.search.lexical(SearchRequest(query=query, limit=limit))["results"]
    return [hit["source"]["relPath"] for hit in hits]


def dirs_of(base: Path) -> Dirs:
    return Dirs(base / "config", base / "data", base / "cache")


def terms_dir(base: Path) -> Path:
    return base / "data" / "index-default.terms"


def mode(base: Path) -> str:
    conn = sqlite3.connect(base / "data" / "index-default.sqlite")
    try:
        row = conn.execute("SELECT value FROM schema_meta WHERE key = 'document_index'").fetchone()
        return str(row[0])
    finally:
        conn.close()


@pytest.fixture
def tantivy_index(tmp_path: Path) -> tuple[Path, Path]:
    """A tantivy-ranked index of 30 notes: (base folder, notes folder)."""
    notes = tmp_path / "notes"
    write_notes(notes, 30)
    choose_backend(tmp_path / "config", "tantivy")
    with Engine.open(dirs=dirs_of(tmp_path)) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
        assert len(found(engine, "common")) == 30
    return tmp_path, notes


# A sync killed right after SQLite committed its second batch, before tantivy
# learnt it (the first batch was fed to tantivy's writer, not committed): the
# worst moment for a copy kept beside the database.
_KILLED_BETWEEN_COMMITS = textwrap.dedent(
    """
    import os, signal
    from gno_trio.engine import Engine
    from gno_trio.engine.ingest import apply
    from gno_trio.engine.search.docindex import feeder

    apply.BATCH_DOCS = 20
    real = feeder.Feeder.feed
    calls = []

    def dying(self):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self)

    feeder.Feeder.feed = dying
    with Engine.open() as engine:
        engine.sync()
    """
)


def test_kill_9_between_the_sqlite_and_the_tantivy_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader that found the index behind SQLite waits this long before it
    # reloads again; the catch-up at open must not leave it waiting.
    monkeypatch.setattr(store, "_RETRY_S", 600.0)
    notes = tmp_path / "notes"
    write_notes(notes, 60)
    choose_backend(tmp_path / "config", "tantivy")
    with Engine.open(dirs=dirs_of(tmp_path)) as engine:
        engine.collections.add(str(notes), name="notes")
    run = subprocess.run(
        [sys.executable, "-c", _KILLED_BETWEEN_COMMITS],
        env=gno_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == -9, run.stderr
    with Engine.open(dirs=dirs_of(tmp_path)) as engine:
        # The next open replays what tantivy missed: the second batch is found.
        assert found(engine, "marker25") == ["note-0025.md"]
        assert len(found(engine, "common")) == 40  # two batches committed, nothing twice
        assert found(engine, "marker45") == []
        (report,) = engine.sync()
        assert report.added == 20
        assert len(found(engine, "common")) == 60
        assert found(engine, "marker45") == ["note-0045.md"]


@pytest.mark.parametrize("damage", ["missing", "corrupt", "foreign"])
def test_a_missing_damaged_or_foreign_index_is_rebuilt_at_open(
    tantivy_index: tuple[Path, Path], damage: str
) -> None:
    base, _ = tantivy_index
    (generation,) = [p for p in terms_dir(base).iterdir() if p.is_dir()]
    if damage == "missing":
        shutil.rmtree(terms_dir(base))
    elif damage == "corrupt":
        (generation / "meta.json").write_text("{ not json", "utf-8")
    else:  # the directory of another database, put in this one's place
        other = base / "other"
        write_notes(other / "notes", 3, start=500)
        choose_backend(other / "config", "tantivy")
        with Engine.open(dirs=dirs_of(other)) as foreign:
            foreign.collections.add(str(other / "notes"), name="notes")
            foreign.sync()
        shutil.rmtree(generation)
        (theirs,) = [p for p in terms_dir(other).iterdir() if p.is_dir()]
        shutil.copytree(theirs, generation)
    with Engine.open(dirs=dirs_of(base)) as engine:
        assert len(found(engine, "common")) == 30
        assert found(engine, '"marker7"') == ["note-0007.md"]
        assert found(engine, "marker501") == []


def test_a_reader_sees_what_another_process_writes(tantivy_index: tuple[Path, Path]) -> None:
    base, notes = tantivy_index
    with Engine.open(dirs=dirs_of(base)) as reader:
        assert found(reader, "marker35") == []
        write_notes(notes, 10, start=30)
        (notes / "note-0003.md").unlink()
        env = gno_env(base)
        subprocess.run(
            [sys.executable, "-m", "gno_trio", "update"],
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
        assert found(reader, "marker35") == ["note-0035.md"]
        assert found(reader, '"marker3"') == []  # exact: not marker30 and on
        assert len(found(reader, "common")) == 39


def test_tags_and_removed_collections_reach_the_index(tantivy_index: tuple[Path, Path]) -> None:
    base, notes = tantivy_index
    (notes / "note-0004.md").write_text("---\ntags: [okapi]\n---\n# Tagged\n\ncommon\n", "utf-8")
    with Engine.open(dirs=dirs_of(base)) as engine:
        engine.sync()
        tagged = engine.search.lexical(
            SearchRequest(query="common", scope=Scope(tags_any=["okapi"]))
        )["results"]
        assert [h["source"]["relPath"] for h in tagged] == ["note-0004.md"]
        engine.collections.remove("notes")
        assert found(engine, "common") == []


def test_new_updated_touched_and_moved_files_in_one_batch_all_reach_the_index(
    tantivy_index: tuple[Path, Path],
) -> None:
    # New documents are queued for tantivy by the sync itself (the triggers
    # paused for them); updates, touches and renames in between, before and
    # after are queued by the triggers. One batch holds them all.
    base, notes = tantivy_index
    (notes / "b-old.md").write_text("# Old\n\nold common\n", "utf-8")
    with Engine.open(dirs=dirs_of(base)) as engine:
        engine.sync()
    (notes / "a-new.md").write_text("# First\n\nfreshA common\n", "utf-8")
    (notes / "note-0003.md").write_text("# Three\n\nchanged3 common\n", "utf-8")
    (notes / "note-0010.md").write_text("---\ntags: [okapi]\n---\nmarker10 common\n", "utf-8")
    (notes / "note-0029.md").rename(notes / "zz-moved.md")
    write_notes(notes, 5, start=31)
    (notes / "note-0031.md").write_text("# Tagged new\n\nmarker31 #quokka common\n", "utf-8")
    os.utime(notes / "b-old.md", (978_307_200, 978_307_200))  # touched: 2001-01-01
    with Engine.open(dirs=dirs_of(base)) as engine:
        (report,) = engine.sync()
        assert (report.added, report.updated, report.renamed) == (6, 2, 1)
        old = engine.search.lexical(SearchRequest(query="common", scope=Scope(until="2002-01-01")))[
            "results"
        ]
        assert [h["source"]["relPath"] for h in old] == ["b-old.md"]
        assert mode(base) == "tantivy"
        assert found(engine, "freshA") == ["a-new.md"]
        assert found(engine, "changed3") == ["note-0003.md"] and found(engine, '"marker3"') == []
        assert found(engine, "marker29") == ["zz-moved.md"]
        assert found(engine, "marker34") == ["note-0034.md"]
        assert len(found(engine, "common")) == 37
        for tag, path in (("okapi", "note-0010.md"), ("quokka", "note-0031.md")):
            tagged = engine.search.lexical(
                SearchRequest(query="common", scope=Scope(tags_any=[tag]))
            )["results"]
            assert [h["source"]["relPath"] for h in tagged] == [path]
    conn = sqlite3.connect(base / "data" / "index-default.sqlite")
    try:  # everything queued was applied and pruned
        assert conn.execute("SELECT COUNT(*) FROM doc_index_pending").fetchone()[0] == 0
    finally:
        conn.close()


def test_auto_switches_at_the_threshold_and_back_below_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(policy, "AUTO_TANTIVY_DOCUMENTS", 20)
    notes = tmp_path / "notes"
    write_notes(notes, 12)
    with Engine.open(dirs=dirs_of(tmp_path)) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
        assert mode(tmp_path) == "fts5" and not terms_dir(tmp_path).exists()
        fts5_answer = found(engine, "common")
        write_notes(notes, 12, start=12)
        engine.sync()  # 24 documents: tantivy from the first batch of this sync
        assert mode(tmp_path) == "tantivy"
        assert len(found(engine, "common")) == 24
        assert found(engine, "marker20") == ["note-0020.md"]
        with sqlite3.connect(tmp_path / "data" / "index-default.sqlite") as conn:
            assert conn.execute("SELECT COUNT(*) FROM documents_fts").fetchone()[0] == 0
        for number in range(13, 24):  # 13 left: still above half the threshold
            (notes / f"note-{number:04d}.md").unlink()
        engine.sync()
        assert mode(tmp_path) == "tantivy"
        for number in range(9, 13):
            (notes / f"note-{number:04d}.md").unlink()
        engine.sync()  # 9 left: below half, FTS5 ranks again
        assert mode(tmp_path) == "fts5" and not terms_dir(tmp_path).exists()
        assert sorted(found(engine, "common")) == [f"note-{n:04d}.md" for n in range(9)]
        assert sorted(fts5_answer) == [f"note-{n:04d}.md" for n in range(12)]
