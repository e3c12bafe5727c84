"""``query-diagnose`` tells the story of the hybrid query ``query`` really runs.

A small corpus in four languages is embedded with the bundled model; every
document is diagnosed for a request and the stages are held against the
answer ``query`` gives for that same request (graph on and off), so the two
surfaces can never drift apart. ``fast`` and an index without vectors fall
back to the BM25-only story and say why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine import Engine, QueryOptions, SearchRequest
from tests.conftest import gno_schema_errors, write_corpus
from tests.support.corpora import MULTILINGUAL_NOTES as NOTES

# The engine tests' notes in four languages (one links another), without the
# long and the blank file: five documents, one chunk each.
DOCS = {path: text for path, text in NOTES.items() if path not in ("long.md", "blank.md")}
URIS = [f"gno://notes/{path}" for path in DOCS]
SLEEP = "how can I sleep better at night"


@pytest.fixture
def notes(engine: Engine, tmp_path: Path) -> Engine:
    root = write_corpus(tmp_path / "notes", DOCS)
    engine.collections.add(str(root), name="notes")
    engine.sync()
    return engine


@pytest.fixture
def embedded(notes: Engine) -> Engine:
    assert notes.vectors.embed().errors == 0
    return notes


def _stages(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    assert [s["id"] for s in result["stages"]] == ["bm25", "vector", "fusion", "graph", "rerank"]
    return {s["id"]: s for s in result["stages"]}


def _check_schema(result: dict[str, Any]) -> None:
    assert gno_schema_errors("query-diagnose", result) == []


@pytest.mark.parametrize("graph", [True, False])
def test_every_stage_agrees_with_the_hybrid_query(embedded: Engine, graph: bool) -> None:
    for text in (SLEEP, "bread oven", "planting tomatoes"):
        request = SearchRequest(query=text, limit=2)
        answer = embedded.search.query(request, QueryOptions(graph=graph))
        assert answer["meta"]["mode"] == "hybrid"
        returned = [hit["uri"] for hit in answer["results"]]
        for uri in URIS:
            result = embedded.search.diagnose(request, uri, QueryOptions(graph=graph))
            _check_schema(result)
            meta = result["meta"]
            assert meta["mode"] == "hybrid" and meta["reranked"] is False
            assert meta["vectorsUsed"] is answer["meta"]["vectorsUsed"]
            assert meta["totalResults"] == len(returned)
            stages = _stages(result)
            last = stages["graph"] if graph else stages["fusion"]
            assert stages["graph"]["status"] == ("active" if graph else "skipped")
            assert last["survived"] is (uri in returned), (text, uri, result["stages"])
            if uri in returned:
                assert last["rank"] == returned.index(uri) + 1
                score = answer["results"][returned.index(uri)]["score"]
                assert last["score"] == pytest.approx(score, abs=1e-6)
            assert stages["rerank"]["status"] == "skipped"


def test_a_document_only_the_vectors_find(embedded: Engine) -> None:
    result = embedded.search.diagnose(
        SearchRequest(query=SLEEP, limit=3), "gno://notes/es/salud.md"
    )
    stages = _stages(result)
    assert stages["bm25"]["present"] is False  # no English word in a Spanish note
    assert stages["vector"]["status"] == "active"
    assert stages["vector"]["rank"] == 1 and stages["vector"]["survived"] is True
    assert "vector rank 1" in stages["vector"]["reason"]
    assert stages["fusion"]["present"] is True and "from vector" in stages["fusion"]["reason"]
    assert stages["graph"]["survived"] is True
    # The chunk that represents it is the one nearest the query (no word matches).
    assert result["chunk"]["seq"] == 0 and result["chunk"]["startLine"] == 1


def test_a_document_past_the_vector_cutoff_says_so(embedded: Engine) -> None:
    request = SearchRequest(query=SLEEP, limit=1)  # the vector leg hands fusion 2 documents
    drops = []
    for uri in URIS:
        stage = _stages(embedded.search.diagnose(request, uri))["vector"]
        assert stage["present"] is True  # five documents: all are near enough to rank
        if stage["rank"] > 2:
            drops.append(stage)
    assert len(drops) == 3
    assert all(s["dropReason"] == "below_cutoff" and not s["survived"] for s in drops)
    assert all("only the first 2 go on to fusion" in s["reason"] for s in drops)


def test_fast_keeps_the_diagnosis_bm25_only(embedded: Engine) -> None:
    result = embedded.search.diagnose(
        SearchRequest(query="bread oven", limit=3), URIS[0], QueryOptions(fast=True)
    )
    _check_schema(result)
    assert result["meta"]["mode"] == "bm25_only" and result["meta"]["vectorsUsed"] is False
    stages = _stages(result)
    assert stages["vector"]["status"] == "skipped" and "fast" in stages["vector"]["reason"]
    assert stages["bm25"]["rank"] == 1 and stages["fusion"]["survived"] is True


def test_without_vectors_the_reason_names_what_to_run(notes: Engine) -> None:
    result = notes.search.diagnose(SearchRequest(query="bread oven", limit=3), URIS[0])
    _check_schema(result)
    assert result["meta"]["mode"] == "bm25_only"
    assert (
        notes.search.query(SearchRequest(query="bread oven", limit=3))["meta"]["mode"]
        == "bm25_only"
    )
    stages = _stages(result)
    assert stages["vector"]["status"] == "skipped"
    assert "VECTORS_UNAVAILABLE" in stages["vector"]["reason"]
    assert "gno-trio embed" in stages["vector"]["reason"]
    assert stages["graph"]["status"] == "skipped"
