"""``query`` weighs BM25 and vectors by the evidence each has, and says how.

Through the engine's public face with the real bundled model: the vector
leg runs whenever vectors are stored (a standout BM25 hit, such as a page of
links named after the query, no longer switches it off), a question in a
language the notes are not written in is ranked by meaning alone, and
``explain`` spells out each returned document's raw and normalised leg
scores and the weights that fused them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from gno_trio.engine import Engine, QueryOptions, SearchRequest
from tests.conftest import write_corpus
from tests.support.corpora import FUSION_NOTES as DOCS
from tests.support.corpora import indexed_engine
from tests.support.shared import EVALS_CORPUS, required

STANDOUT = "airship hangar mooring"
EVIDENCE = re.compile(
    r"#(\d+) (#\w+): bm25 (\S+) -> ([\d.]+) x ([\d.]+) \+ cosine (\S+) -> ([\d.]+) x ([\d.]+)"
    r".* = ([\d.]+)$"
)


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("fusion")
    engine = indexed_engine(base, write_corpus(base / "notes", DOCS), embed=True)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    corpus = required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    engine = indexed_engine(tmp_path_factory.mktemp("evals"), corpus, embed=True)
    yield engine
    engine.close()


def _explained(engine: Engine, text: str, limit: int = 5) -> tuple[dict[str, Any], list[str]]:
    result = engine.search.query(SearchRequest(query=text, limit=limit), QueryOptions(explain=True))
    return result, [line["message"] for line in result["meta"]["explain"]["lines"]]


def test_a_standout_keyword_hit_still_runs_the_vector_leg(notes: Engine) -> None:
    # The link page named after the word is BM25's clear winner: the old shortcut
    # skipped vectors then and the essay on zeppelins could not be found.
    lexical = notes.search.lexical(SearchRequest(query=STANDOUT, limit=5))["results"]
    assert [h["source"]["relPath"] for h in lexical] == ["airship-links.md"]
    result, lines = _explained(notes, STANDOUT)
    assert result["meta"]["vectorsUsed"] is True
    assert not any("strong lexical signal" in line for line in lines)
    assert any(line.startswith("vector: ") for line in lines)
    found = [h["source"]["relPath"] for h in result["results"]]
    assert found[0] == "airship-links.md"
    assert "history/dirigibles.md" in found[:3]


def test_explain_shows_each_legs_raw_and_normalised_score_and_the_weight(notes: Engine) -> None:
    result, lines = _explained(notes, "knead the dough overnight")
    fusion = next(line for line in lines if line.startswith("evidence-weighted"))
    assert "lexical coverage 1.00" in fusion
    weights = re.search(r"weights bm25 ([\d.]+) / vector ([\d.]+)", fusion)
    assert weights is not None
    a, b = float(weights.group(1)), float(weights.group(2))
    assert 0 < a <= 0.6 and abs(a + b - 1) < 0.011
    spelled = [m for m in map(EVIDENCE.match, lines) if m]
    assert [int(m.group(1)) for m in spelled] == list(range(1, len(result["results"]) + 1))
    assert [m.group(2) for m in spelled] == [h["docid"] for h in result["results"]]
    for m in spelled:
        bm25_norm, cos_norm, fused = float(m.group(4)), float(m.group(7)), float(m.group(9))
        assert float(m.group(5)) == a and float(m.group(8)) == b
        assert abs(bm25_norm * a + cos_norm * b - fused) < 0.003
    assert result["results"][0]["source"]["relPath"] == "misc/note1.md"
    scores = [r["fusionScore"] for r in result["meta"]["explain"]["results"]]
    assert scores == sorted(scores, reverse=True)


def test_a_question_in_another_script_is_ranked_by_meaning(evals: Engine) -> None:
    result, lines = _explained(evals, "如何回滚到以前的版本")
    fusion = next(line for line in lines if line.startswith("evidence-weighted"))
    assert "lexical coverage 0.00" in fusion and "weights bm25 0.00 / vector 1.00" in fusion
    assert result["results"][0]["source"]["relPath"] == "de/deployment-anleitung.md"


def test_words_the_notes_use_lean_on_bm25(evals: Engine) -> None:
    result, lines = _explained(evals, "RabbitMQ message queue async communication")
    fusion = next(line for line in lines if line.startswith("evidence-weighted"))
    weight = float(re.search(r"weights bm25 ([\d.]+)", fusion).group(1))  # type: ignore[union-attr]
    assert "lexical coverage 1.00" in fusion and weight > 0.2
    assert result["results"][0]["source"]["relPath"] == "en/architecture-decisions.md"


def test_a_capsule_asked_in_chinese_over_english_notes_quotes_them(notes: Engine) -> None:
    from gno_trio.engine.context.request import ContextRequest

    # Nothing in the notes shares a word with the goal: only the vector leg finds them.
    capsule = notes.capsules.compile(
        ContextRequest(goal="如何揉面团并让它过夜发酵？", budget_tokens=2000)
    )
    passages = capsule["evidence"]
    assert passages, capsule
    first = passages[0]
    assert first["uri"].endswith("misc/note1.md")
    assert "vector" in first["retrievalSources"] and "bm25" not in first["retrievalSources"]
    assert "Knead the dough" in first["text"]
