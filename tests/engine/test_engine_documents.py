"""Syncing documents through the engine: limits from index.yml, progress, cheap re-syncs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.ingest import prepare
from tests.support import document_factory as make


def _engine(dirs: Dirs, conversion: str = "") -> Engine:
    dirs.config.mkdir(parents=True, exist_ok=True)
    if conversion:
        (dirs.config / "index.yml").write_text(f"conversion:\n{conversion}", "utf-8")
    return Engine.open(dirs=dirs)


def _listed(engine: Engine) -> dict[str, str]:
    (collection,) = engine.index.status()["collections"]
    return {e["relPath"]: e["code"] for e in collection["errors"] + collection["skipped"]}


def test_the_time_limit_comes_from_index_yml(dirs: Dirs, tmp_path: Path) -> None:
    root = tmp_path / "papers"
    root.mkdir()
    (root / "huge.html").write_bytes(b"<p>ordinary words here</p>" * 120_000)
    (root / "small.html").write_bytes(b"<p>tapir</p>")
    with _engine(dirs, "  timeoutMs: 200\n") as engine:
        engine.collections.add(str(root), name="papers")
        (report,) = engine.sync()
        assert [(e["relPath"], e["code"]) for e in report.errors] == [
            ("huge.html", "CONVERSION_TIMEOUT")
        ]
        assert _listed(engine) == {"huge.html": "CONVERSION_TIMEOUT"}
        assert engine.index.status()["healthy"] is False
        hits = engine.search.lexical(SearchRequest(query="tapir"))["results"]
        assert [h["source"]["relPath"] for h in hits] == ["small.html"]


def test_progress_moves_inside_a_big_document_and_a_big_text(dirs: Dirs, tmp_path: Path) -> None:
    root = tmp_path / "papers"
    root.mkdir()
    (root / "long.pdf").write_bytes(make.pdf_bytes("okapi", pages=120))
    (root / "long.txt").write_text("plain words in a long file. " * 400_000, "utf-8")
    events: list[tuple[int, int, str]] = []
    with _engine(dirs) as engine:
        engine.collections.add(str(root), name="papers")
        engine.sync(progress=lambda done, total, item: events.append((done, total, item)))
    pages = [item for _, _, item in events if item.startswith("long.pdf (")]
    chunks = [item for _, _, item in events if item.startswith("long.txt (chunk ")]
    assert pages and pages[-1] == "long.pdf (120/120)"
    assert len(chunks) >= 3  # a few thousand chunks, reported every 256


def test_an_unchanged_document_or_skipped_file_costs_a_stat_on_resync(
    dirs: Dirs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "papers"
    root.mkdir()
    (root / "a.pdf").write_bytes(make.pdf_bytes("okapi"))
    (root / "b.docx").write_bytes(make.docx_bytes("okapi"))
    (root / "broken.pptx").write_bytes(b"PK\x03\x04 not really")
    (root / "photo.jpg").write_bytes(make.random_bytes())
    with _engine(dirs) as engine:
        engine.collections.add(str(root), name="papers")
        engine.sync()
        reads: list[str] = []
        real_read = prepare.read_source

        def counting(found: Any, limit: int) -> bytes:
            reads.append(found.rel_path)
            return real_read(found, limit)

        monkeypatch.setattr(prepare, "read_source", counting)
        (again,) = engine.sync()
        assert reads == []
        assert again.unchanged == 2 and again.skipped == 1
        assert [e["code"] for e in again.errors] == ["CONVERSION_FAILED"]
        # A changed file is judged again.
        (root / "broken.pptx").write_bytes(make.pptx_bytes("repaired"))
        (third,) = engine.sync()
        assert reads == ["broken.pptx"] and third.added == 1
        assert _listed(engine) == {"photo.jpg": "BINARY_FILE"}


def test_raising_a_limit_judges_a_refused_file_again(dirs: Dirs, tmp_path: Path) -> None:
    root = tmp_path / "papers"
    root.mkdir()
    (root / "report.pdf").write_bytes(make.pdf_bytes("okapi", pages=4))
    with _engine(dirs, "  maxBytes: 1000\n") as engine:
        engine.collections.add(str(root), name="papers")
        engine.sync()
        assert _listed(engine) == {"report.pdf": "TOO_LARGE"}
    config = dirs.config / "index.yml"
    text = config.read_text("utf-8")
    assert "maxBytes: 1000\n" in text and "papers" in text
    config.write_text(text.replace("maxBytes: 1000\n", "maxBytes: 10000000\n"), "utf-8")
    with Engine.open(dirs=dirs) as engine:
        (report,) = engine.sync()
        assert report.added == 1 and _listed(engine) == {}
