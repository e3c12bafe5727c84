"""Memory with embeddings: recall's vector leg and remember's semantic matching.

A memory collection with vectors (after ``embed``) recalls facts phrased
unlike the question and proposes paraphrases as likely duplicates; without
vectors both stay lexical and say so (see ``test_memory_engine``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gno_trio.cli import main
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Identity
from gno_trio.engine.memory.semantic import BUNDLED_THRESHOLD
from tests.support.memory_schemas import valid_recall, valid_remember

ME = Identity(caller="tester", session="session-1")
SCOPE = "project:alpha"
FACTS = (
    "The deploy window is Tuesday at 10:00 UTC.",
    "Alice prefers tabs over spaces in Go code.",
    "Invoices are paid within thirty days.",
)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    (tmp_path / "facts").mkdir()
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as opened:
        opened.collections.add(str(tmp_path / "facts"), name="facts", memory_managed=True)
        for text in FACTS:
            added = opened.memory.remember(
                text=text, collection="facts", scopes=[SCOPE], identity=ME, decision="add"
            )
            assert added["outcome"] == "added"
        yield opened


def test_recall_fuses_the_vector_leg_once_the_collection_is_embedded(engine: Engine) -> None:
    question = "when can we ship to production"  # no word in common with the fact
    before = engine.memory.recall(query=question, collection="facts", scopes=[SCOPE], identity=ME)
    assert before["retrieval"]["mode"] == "lexical" and before["facts"] == []
    assert "embed" in before["retrieval"]["semanticUnavailable"]
    assert engine.vectors.embed(["facts"]).embedded == 3
    after = engine.memory.recall(query=question, collection="facts", scopes=[SCOPE], identity=ME)
    valid_recall(after)
    assert after["retrieval"] == {"mode": "hybrid"}
    assert after["facts"][0]["text"] == FACTS[0]
    elsewhere = engine.memory.recall(
        query=question, collection="facts", scopes=["other"], identity=ME
    )
    assert elsewhere["facts"] == []  # scopes hold in the vector leg too


def test_remember_proposes_paraphrases_by_meaning(engine: Engine) -> None:
    paraphrase = "Deployments happen on Tuesdays at ten in the morning, UTC."
    lexical = engine.memory.remember(
        text=paraphrase, collection="facts", scopes=[SCOPE], identity=ME
    )
    assert lexical["matching"]["mode"] == "lexical"
    engine.vectors.embed(["facts"])
    proposed = engine.memory.remember(
        text=paraphrase, collection="facts", scopes=[SCOPE], identity=ME
    )
    valid_remember(proposed)
    assert proposed["matching"] == {"mode": "semantic", "threshold": BUNDLED_THRESHOLD}
    best = proposed["candidates"][0]
    assert best["text"] == FACTS[0] and best["match"] == "likely"
    assert all(c["similarity"] < best["similarity"] for c in proposed["candidates"][1:])
    same = engine.memory.remember(text=FACTS[1], collection="facts", scopes=[SCOPE], identity=ME)
    assert same["outcome"] == "existing"


CROSS_FACTS = (
    *FACTS,
    "Python is the language of our build scripts.",
    "The staging database is backed up every night.",
)
CROSS_RECALLS = (
    # Chinese questions with one stray English word that names another fact
    ("Go 发票多久支付", FACTS[2]),  # how soon are invoices paid
    ("staging 发票什么时候支付", FACTS[2]),  # when are invoices paid
    ("Tuesday 数据库多久备份", CROSS_FACTS[4]),  # how often is the database backed up
    ("数据库多久备份一次 Python", CROSS_FACTS[4]),
)


def test_cli_recall_in_chinese_over_english_facts_ranks_by_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stray word that matches an unrelated fact does not outrank what the question
    means: recall weighs BM25 by how much of the question the index holds, as query does."""
    for name, folder in (("CONFIG", "config"), ("DATA", "data"), ("CACHE", "cache")):
        monkeypatch.setenv(f"GNO_{name}_DIR", str(tmp_path / folder))
    (tmp_path / "facts").mkdir()
    assert main(["collection", "add", str(tmp_path / "facts"), "--name", "facts", "--memory"]) == 0
    for text in CROSS_FACTS:
        assert main(["remember", text, "--scope", SCOPE, "--add", "--quiet"]) == 0
    assert main(["embed", "facts", "--quiet"]) == 0
    capsys.readouterr()
    for question, fact in CROSS_RECALLS:
        argv = ["recall", question, "--scope", SCOPE, "--max-facts", "1", "--json"]
        assert main(argv) == 0
        recalled = json.loads(capsys.readouterr().out)
        valid_recall(recalled)
        assert recalled["retrieval"] == {"mode": "hybrid"}
        assert [f["text"] for f in recalled["facts"]] == [fact], question
