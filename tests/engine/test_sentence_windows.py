"""Sentence-window vectors: stored at index time, gone with their chunk, counted in
``status``, and read only by queries whose words the index lacks.

Through the engine's public face with the real bundled model. A note of
many sentences gets a vector per window of three sentences; a short note
gets none. A question in a language the notes are not written in is
rescored with them (``explain`` says so, and shows each document's best
sentence-window cosine); a query made of the notes' own words is not.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, QueryOptions, SearchRequest
from gno_trio.engine.vectors.sentences import MAX_WINDOWS_PER_CHUNK, sentence_windows
from tests.conftest import write_corpus

GARDEN = (
    "# Garden diary\n\n"
    "The tomatoes went into the raised bed in early May. "
    "We watered them every morning before work. "
    "Slugs ate two of the young basil plants. "
    "A ring of crushed eggshells kept the rest safe. "
    "By August the vines were taller than the fence. "
    "The first ripe fruit was picked on the tenth.\n"
)
BREAD = (
    "# Sourdough\n\n"
    "Feed the starter the evening before baking. "
    "Mix flour, water and salt, then fold the dough every half hour. "
    "Let it rise overnight in a cool kitchen. "
    "Bake in a covered pot at a high heat for forty minutes.\n"
)
SHORT = "# Shopping\n\nBuy milk and eggs.\n"
DOCS = {"garden.md": GARDEN, "bread.md": BREAD, "shopping.md": SHORT}


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[tuple[Engine, Path]]:
    folder = write_corpus(tmp_path / "notes", DOCS)
    engine = Engine.open(
        dirs=Dirs(config=tmp_path / "c", data=tmp_path / "d", cache=tmp_path / "x")
    )
    engine.collections.add(str(folder), name="notes")
    engine.sync()
    yield engine, folder
    engine.close()


def _windows(engine: Engine) -> dict[str, int]:
    """What ``status`` says of the sentence-window vectors (count and disk bytes)."""
    found: dict[str, int] = engine.index.status()["background"]["embedding"]["sentenceWindows"]
    return found


def _rows(engine: Engine) -> list[tuple[str, int, int]]:
    """(document path, chunk, part) of every stored sentence-window vector (not the
    empty "no windows" rows), and checks no row outlives its chunk."""
    conn = sqlite3.connect(engine.index.status()["dbPath"])
    try:
        stale = conn.execute(
            "SELECT count(*) FROM sentence_vectors s WHERE NOT EXISTS (SELECT 1 FROM "
            "content_chunks c WHERE c.mirror_hash = s.mirror_hash AND c.seq = s.seq)"
        ).fetchone()[0]
        assert stale == 0
        return [
            (str(r[0]), int(r[1]), int(r[2]))
            for r in conn.execute(
                "SELECT d.rel_path, s.seq, s.part FROM sentence_vectors s JOIN documents d "
                "ON d.mirror_hash = s.mirror_hash WHERE d.active = 1 AND s.part >= 0 "
                "ORDER BY d.rel_path, s.seq, s.part"
            )
        ]
    finally:
        conn.close()


def test_only_chunks_longer_than_a_window_get_windows_and_they_are_bounded() -> None:
    assert sentence_windows(SHORT) == []
    assert sentence_windows("One. Two. Three.") == []
    # 5 sentences (the heading counts): windows start at sentences 0 and 2.
    assert len(sentence_windows(BREAD)) == 2
    long = " ".join(f"Sentence number {i} is here." for i in range(200))
    found = sentence_windows(long)
    assert MAX_WINDOWS_PER_CHUNK // 2 < len(found) <= MAX_WINDOWS_PER_CHUNK
    covered = " ".join(found)
    assert all(f"Sentence number {i} is here." in covered for i in range(200))
    assert found[-1].endswith("Sentence number 199 is here.")


def test_windows_are_stored_at_embed_time_and_status_reports_their_disk_cost(
    notes: tuple[Engine, Path],
) -> None:
    engine, _ = notes
    assert _windows(engine)["vectors"] == 0
    engine.vectors.embed()
    rows = _rows(engine)
    paths = {path for path, _, _ in rows}
    assert paths == {"garden.md", "bread.md"}  # the short note has no window
    used = _windows(engine)
    assert (
        used["vectors"] == len(rows) == len(sentence_windows(GARDEN)) + len(sentence_windows(BREAD))
    )
    assert used["bytes"] >= used["vectors"] * 512  # at least the int8 codes of each


def test_a_changed_note_leaves_no_stale_windows(notes: tuple[Engine, Path]) -> None:
    engine, folder = notes
    engine.vectors.embed()
    before = [r for r in _rows(engine) if r[0] == "garden.md"]
    assert before
    (folder / "garden.md").write_text(SHORT.replace("milk", "rice"), encoding="utf-8")
    engine.sync()
    assert [r for r in _rows(engine) if r[0] == "garden.md"] == []
    engine.vectors.embed()
    assert [r for r in _rows(engine) if r[0] == "garden.md"] == []
    assert _windows(engine)["vectors"] == len(sentence_windows(BREAD))
    (folder / "bread.md").unlink()
    engine.sync()
    engine.collections.cleanup()
    assert _rows(engine) == []


def _lines(engine: Engine, text: str) -> list[str]:
    result = engine.search.query(SearchRequest(query=text, limit=3), QueryOptions(explain=True))
    return [line["message"] for line in result["meta"]["explain"]["lines"]]


def test_a_low_coverage_query_is_rescored_and_a_lexical_one_is_not(
    notes: tuple[Engine, Path],
) -> None:
    engine, _ = notes
    engine.vectors.embed()
    asked = _lines(engine, "¿Qué se comieron las babosas en el jardín?")
    rescored = next(line for line in asked if "sentence-window cosine" in line)
    assert "rescored" in rescored and "lexical coverage" in rescored
    assert any("(sentence window " in line for line in asked)
    lexical = _lines(engine, "sourdough starter dough")
    assert any(line.startswith("skipped: lexical coverage") for line in lexical)
    assert not any("(sentence window " in line for line in lexical)


def test_clearing_a_collections_embeddings_clears_its_windows(
    notes: tuple[Engine, Path],
) -> None:
    engine, _ = notes
    engine.vectors.embed()
    assert _windows(engine)["vectors"] > 0
    engine.vectors.clear("notes", mode="all")
    assert _windows(engine)["vectors"] == 0
    assert _rows(engine) == []
    engine.vectors.embed()  # re-made with the chunks' vectors
    assert _windows(engine)["vectors"] == len(sentence_windows(GARDEN)) + len(
        sentence_windows(BREAD)
    )
