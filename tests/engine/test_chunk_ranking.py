"""A hit's snippet and line come from the chunk FTS5's bm25() ranks best, whoever ranks it.

Search ranks a document's chunks itself, from the chunks' own words and
the chunk index's stored figures (engine/search/chunkrank.py), instead of
asking FTS5 to run ``bm25()`` over the whole chunk index. These tests hold
it to the very same choice: every hit of many varied queries (words,
prefixes, phrases, apostrophes, accents, CJK, steering intents) must carry
the same snippet, line and line range as when FTS5 ranks the chunks, on
both tokenizers with stemming and without, and still after the index
changes under a running engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.search import chunkrank
from tests.conftest import choose_backend, write_corpus
from tests.support.requests import flat_search

COMMON = ["the", "server", "tool", "request", "client", "data", "type", "run", "runs", "running"]
COMMON += ["runner", "model"]
RARE = ["okapi", "ocelot", "café", "naïve", "don't", "real-time", "東京タワー", "résumé"]
RARE += ["kubernetes", "tapir"]


def _paragraph(rng: random.Random, length: int) -> str:
    words = [rng.choice(COMMON) if rng.random() < 0.7 else rng.choice(RARE) for _ in range(length)]
    return " ".join(words) + "."


def _corpus(seed: int) -> dict[str, str]:
    """Documents of 2 to 12 chunks whose chunks hold the words in different amounts."""
    rng = random.Random(seed)
    files = {}
    for number in range(24):
        paragraphs = [_paragraph(rng, rng.randint(20, 120)) for _ in range(rng.randint(4, 24))]
        files[f"d{number % 3}/note-{number:02d}.md"] = (
            f"# Note {number}\n\n" + "\n\n".join(paragraphs) + "\n"
        )
    return files


QUERIES = [
    "okapi",
    "okapi tapir",
    "server okapi",
    "café naïve",
    "cafe",
    "don't",
    "real-time okapi",
    '"the server"',
    '"run runs" tapir',
    "run",
    "runn",
    "kube oce",
    "東京タワー",
    "résumé ocelot tapir",
    "tool request client",
    "ser oka",
    "model -zebra",
]


@pytest.fixture(autouse=True)
def rank_here_whatever_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """These indexes are small: rank their chunks here as a large index's would be."""
    monkeypatch.setattr(chunkrank, "POSTINGS_PER_CHUNK_LOADED", 0)


@contextmanager
def _fts5_engine(tmp_path: Path, root: Path) -> Iterator[Engine]:
    """An engine ranking on FTS5 over ``root``, indexed as the collection ``notes``."""
    choose_backend(tmp_path / "config", "fts5")
    with Engine.open(
        dirs=Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    ) as engine:
        engine.collections.add(str(root), name="notes")
        engine.sync()
        yield engine


def _anchors(engine: Engine, query: str, **options: Any) -> list[tuple[Any, ...]]:
    found = engine.search.lexical(flat_search(query=query, limit=10, **options))["results"]
    return [(r["uri"], r["snippet"], r.get("line"), r.get("snippetRange")) for r in found]


def _both_ways(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, query: str, **options: Any
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    ours = _anchors(engine, query, **options)
    with monkeypatch.context() as patched:
        patched.setattr(chunkrank, "CHUNK_BUDGET", 0)  # every document ranked by FTS5
        theirs = _anchors(engine, query, **options)
    return ours, theirs


@pytest.fixture(scope="module", params=["porter", "unicode61"])
def engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("chunks")
    notes = write_corpus(base / "notes", _corpus(11))
    choose_backend(base / "config", "fts5", tokenizer=request.param)
    opened = Engine.open(dirs=Dirs(base / "config", base / "data", base / "cache"))
    opened.collections.add(str(notes), name="notes")
    opened.sync()
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.parametrize("query", QUERIES)
def test_the_chosen_chunk_is_the_one_fts5_ranks_best(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    ours, theirs = _both_ways(engine, monkeypatch, query)
    assert ours, query
    assert ours == theirs


def test_an_intent_steers_the_chunk_alike(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    for query, intent in [("server", "okapi tapir"), ("run", "café"), ("tool", '"the server"')]:
        ours, theirs = _both_ways(engine, monkeypatch, query, intent=intent)
        assert ours == theirs


def test_the_choice_is_not_simply_the_first_chunk(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The corpus makes the ranking matter: many hits point past their first chunk,
    and most searches rank their documents' chunks themselves (not on FTS5)."""
    ranked_here = []
    original = chunkrank.best_in_table

    def spy(*args: Any) -> dict[str, int] | None:
        found = original(*args)
        ranked_here.append(found)
        return found

    monkeypatch.setattr(chunkrank, "best_in_table", spy)
    later = [
        anchor
        for query in QUERIES
        for anchor in _anchors(engine, query)
        if anchor[3] and anchor[3]["startLine"] > 1
    ]
    assert len(later) >= 20
    assert len(ranked_here) >= len(QUERIES) // 2


def test_the_choice_follows_the_index_as_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk counts kept for one state of the index are not used for the next.

    One document has a chunk dense in "okapi" and one dense in "tapir"; which
    one a query for both picks depends on which word is rarer across the
    index, and that flips when other documents start using the other word.
    """
    filler = " ".join(["model"] * 40)
    target = (
        "# Target\n\n"
        + "\n\n".join([f"okapi okapi okapi {filler}."] * 12)
        + "\n\n"
        + "\n\n".join([f"tapir tapir tapir {filler}."] * 12)
        + "\n"
    )
    files = {
        "target.md": target,
        **{f"other/o{i}.md": f"# O{i}\n\ntapir here.\n" for i in range(30)},
    }
    root = write_corpus(tmp_path / "notes", files)
    with _fts5_engine(tmp_path, root) as engine:

        def target_anchor() -> tuple[Any, ...]:
            (hit,) = [a for a in _anchors(engine, "okapi tapir") if a[0].endswith("target.md")]
            return hit

        before = target_anchor()
        assert "okapi" in before[1]  # tapir is everywhere: the okapi chunk wins
        for i in range(30):
            (root / f"other/o{i}.md").write_text(f"# O{i}\n\nokapi here.\n", encoding="utf-8")
        engine.sync()
        after = target_anchor()
        assert "tapir" in after[1] and "okapi" not in after[1]
        ours, theirs = _both_ways(engine, monkeypatch, "okapi tapir")
        assert ours == theirs


def test_equally_good_chunks_point_at_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where several chunks of a page score exactly alike, the hit points at the first.

    The page repeats one paragraph, so its chunks share their text and their
    scores tie; ranked on the chunk index or here, the same (earliest) chunk
    gives the snippet and the line.
    """
    paragraph = "okapi tapir " + " ".join(["model"] * 60) + "."
    files = {
        "same.md": "# Same\n\n" + "\n\n".join([paragraph] * 80) + "\n",
        **{f"o{i}.md": f"# O{i}\n\nokapi note {i}.\n" for i in range(6)},
    }
    root = write_corpus(tmp_path / "notes", files)
    with _fts5_engine(tmp_path, root) as engine:
        with engine.connection() as conn:
            chunks = conn.execute(
                "SELECT bm25(chunks_fts, 1.0, 0.0), c.id, c.start_line FROM chunks_fts "
                "JOIN content_chunks c ON c.id = chunks_fts.rowid "
                "JOIN documents d ON d.mirror_hash = c.mirror_hash "
                "WHERE chunks_fts MATCH 'text : okapi' AND d.rel_path = 'same.md'"
            ).fetchall()
        best = min(score for score, _, _ in chunks)
        tied = sorted((chunk_id, line) for score, chunk_id, line in chunks if score == best)
        assert len(tied) >= 2  # the premise: the best score is shared
        for query in ("okapi tapir", "oka", "okapi"):
            ours, theirs = _both_ways(engine, monkeypatch, query)
            assert ours == theirs
        (same,) = [hit for hit in ours if hit[0].endswith("same.md")]
        assert same[3]["startLine"] == tied[0][1]
