"""The semantic half of the engine with the real bundled model on a tiny corpus.

Everything here embeds a handful of short documents (the model runs at a
few dozen chunks per second), through the engine functions that the CLI
and the MCP tools call: the embed job, vector search, similar documents,
the hybrid query, clearing embeddings.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gno_trio.engine import Engine, Scope, SearchRequest
from gno_trio.engine.search.hybrid import QueryOptions, query
from gno_trio.engine.search.pipeline import hybrid_query
from gno_trio.engine.search.semantic import similar, vector_search
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.store.vectors import SqliteVectors
from gno_trio.engine.vectors.bundled import BUNDLED_URI, BundledEmbedder
from gno_trio.engine.vectors.embedder import ModelIdentity, embed_query, windows
from gno_trio.engine.vectors.embedding import backlog, embed_backlog
from gno_trio.engine.vectors.models import backend_for
from gno_trio.engine.vectors.storage import clear_collection
from gno_trio.errors import GnoError
from tests.conftest import write_corpus
from tests.support.corpora import MULTILINGUAL_NOTES as DOCS


@pytest.fixture
def backend() -> BundledEmbedder:
    found = backend_for(BUNDLED_URI)
    assert isinstance(found, BundledEmbedder)
    return found


@pytest.fixture
def notes(engine: Engine, tmp_path: Path) -> Engine:
    root = write_corpus(tmp_path / "notes", DOCS)
    engine.collections.add(str(root), name="notes")
    engine.sync()
    return engine


@pytest.fixture
def conn(notes: Engine) -> Iterator[sqlite3.Connection]:
    with notes.connection() as c:
        yield c


@pytest.fixture
def embedded(conn: sqlite3.Connection, backend: BundledEmbedder) -> sqlite3.Connection:
    report = embed_backlog(conn, backend)
    assert report.errors == 0 and not report.stopped
    return conn


def _paths(result: dict[str, object]) -> list[str]:
    return [hit["source"]["relPath"] for hit in result["results"]]  # type: ignore[attr-defined,index]


class _Renamed:
    """The bundled model under another version: what an upgraded package looks like."""

    def __init__(self, inner: BundledEmbedder, version: str) -> None:
        self.inner = inner
        self.identity = ModelIdentity(inner.identity.uri, version, inner.identity.dimension)

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_texts(texts)


def test_bundled_model_is_deterministic_and_batch_independent(backend: BundledEmbedder) -> None:
    texts = ["the cat sat on the mat", "der Hund schläft", "猫が寝ている"]
    alone = backend.embed_texts(texts[1:2])[0]
    batch = backend.embed_texts(texts)
    assert batch.shape == (3, 512)
    # A batch's texts share matrix products, so the last float bits may differ.
    assert np.allclose(alone, batch[1], atol=1e-6)
    assert np.array_equal(backend.embed_texts(texts), batch)
    long = ["lorem ipsum dolor sit amet " * 120, "zweiter langer Text " * 150]
    assert np.allclose(backend.embed_texts(long)[1], backend.embed_texts(long[1:])[0], atol=1e-6)


def test_embed_fills_the_backlog_batch_by_batch(
    conn: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    before = backlog(conn, backend)
    assert before == conn.execute("SELECT COUNT(*) FROM content_chunks").fetchone()[0]
    seen: list[tuple[int, int]] = []
    report = embed_backlog(conn, backend, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    assert backlog(conn, backend) == 0
    assert report.embedded + report.blank == before and report.blank == 1
    assert seen[-1] == (before, before) and len(seen) == (before + 1) // 2
    # The long chunk got one vector per window; every chunk has all its windows.
    for mirror, seq, text in conn.execute(
        "SELECT c.mirror_hash, c.seq, t.text FROM content_chunks c "
        "JOIN chunk_texts t ON t.id = c.id"
    ):
        parts = conn.execute(
            "SELECT COUNT(*) FROM content_vectors WHERE mirror_hash = ? AND seq = ? "
            "AND length(codes) > 0",
            (mirror, seq),
        ).fetchone()[0]
        assert parts == (0 if not text.strip() else len(windows(text)))
    assert embed_backlog(conn, backend).embedded == 0  # nothing left to do


def test_embed_stops_between_batches_and_resumes(
    conn: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    total = backlog(conn, backend)
    calls = iter([False, True])
    first = embed_backlog(conn, backend, batch_size=2, should_stop=lambda: next(calls, True))
    assert first.stopped and first.embedded + first.blank == 2
    assert backlog(conn, backend) == total - 2
    second = embed_backlog(conn, backend, batch_size=2)
    assert not second.stopped and backlog(conn, backend) == 0


def test_vector_search_finds_meaning_across_languages(
    embedded: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    cases = {
        "how do I make a loaf of bread": "cooking/bread.md",
        "冬季轮胎更换": "de/auto.md",  # zh: changing winter tyres
        "how to save money every month": "fr/finance.md",
        "consejos para dormir mejor": "es/salud.md",
        "observing galaxies with a telescope": "long.md",
    }
    for text, expected in cases.items():
        result = vector_search(embedded, backend, SearchRequest(query=text, limit=3))
        assert _paths(result)[0] == expected, text
        assert result["meta"]["mode"] == "vector"
        assert all(0 <= hit["score"] <= 1 for hit in result["results"])
    result = vector_search(embedded, backend, SearchRequest(query="telescope", limit=10))
    assert len(_paths(result)) == len(set(_paths(result)))  # one hit per document
    assert "blank.md" not in _paths(result)


def test_vector_search_anchors_on_the_matching_window(
    embedded: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    hit = vector_search(embedded, backend, SearchRequest(query="galaxies", limit=1))["results"][0]
    assert hit["source"]["relPath"] == "long.md"
    start, end = hit["snippetRange"]["startLine"], hit["snippetRange"]["endLine"]
    assert hit["line"] == start and end - start < 40  # a window, not the whole chunk
    assert "telescope" in hit["snippet"]


def test_vector_search_applies_the_lexical_filters(
    embedded: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    request = SearchRequest(query="bread baking", limit=5, scope=Scope(exclude=["loaf"]))
    assert "cooking/bread.md" not in _paths(vector_search(embedded, backend, request))
    with pytest.raises(GnoError) as caught:
        vector_search(
            embedded, backend, SearchRequest(query="bread", scope=Scope(collections=("nope",)))
        )
    assert caught.value.code == "NOT_FOUND"
    minimum = vector_search(
        embedded, backend, SearchRequest(query="bread", scope=Scope(min_score=0.99))
    )
    assert minimum["results"] == [] and minimum["meta"]["minScore"] == 0.99


def test_empty_and_huge_queries(embedded: sqlite3.Connection, backend: BundledEmbedder) -> None:
    with pytest.raises(GnoError) as caught:
        embed_query(backend, "   ")
    assert caught.value.code == "INVALID_INPUT"
    huge = "bread " * 100_000
    result = vector_search(embedded, backend, SearchRequest(query=huge, limit=1))
    assert _paths(result) == ["cooking/bread.md"]


def test_similar_documents(embedded: sqlite3.Connection, backend: BundledEmbedder) -> None:
    found = similar(embedded, backend, "notes/cooking/bread.md", threshold=0.0, limit=3)
    assert found["meta"]["docid"] and found["meta"]["threshold"] == 0.0
    uris = [item["uri"] for item in found["similar"]]
    assert "gno://notes/cooking/bread.md" not in uris and len(uris) == 3
    assert uris[0] == "gno://notes/garden.md"  # growing food is nearest to baking it
    strict = similar(embedded, backend, "notes/cooking/bread.md")
    assert all(item["score"] >= 0.7 for item in strict["similar"])
    for ref, code in (("notes/blank.md", "VECTORS_UNAVAILABLE"), ("notes/none.md", "NOT_FOUND")):
        with pytest.raises(GnoError) as caught:
            similar(embedded, backend, ref)
        assert caught.value.code == code, ref


def test_no_vectors_means_a_clear_error_and_the_model_free_query(
    conn: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    with pytest.raises(GnoError) as caught:
        vector_search(conn, backend, SearchRequest(query="bread"))
    assert caught.value.code == "VECTORS_UNAVAILABLE" and "embed" in caught.value.message
    request = SearchRequest(query="bread garden", limit=5)
    options = QueryOptions(query_modes=[("term", "tomatoes")])
    assert hybrid_query(conn, request, options, backend) == query(conn, request, options)
    assert hybrid_query(conn, request, options, None) == query(conn, request, options)


def test_hybrid_query_fuses_both_legs(
    embedded: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    request = SearchRequest(query="getting a good night of sleep", limit=3)
    result = hybrid_query(embedded, request, QueryOptions(explain=True), backend)
    meta = result["meta"]
    assert meta["mode"] == "hybrid" and meta["vectorsUsed"] is True
    assert meta["expanded"] is False and meta["reranked"] is False
    assert _paths(result)[0] == "es/salud.md"  # no shared word: the vector leg found it
    stages = [line["stage"] for line in meta["explain"]["lines"]]
    assert {"lexical", "vector", "fusion", "graph"} <= set(stages)
    first = meta["explain"]["results"][0]
    assert first["rank"] == 1 and "vecScore" in first and "fusionScore" in first
    assert result["results"][0]["score"] == 1.0


def test_hybrid_graph_expansion_and_depth(
    embedded: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    # One result wanted: the legs keep two candidates each, and the linked
    # garden note joins through the bread note's wiki link.
    request = SearchRequest(query="knead the dough and bake", limit=1)
    full = hybrid_query(embedded, request, QueryOptions(), backend)
    graph = full["meta"]["graphExpansion"]
    assert graph["enabled"] is True and graph["candidateCount"] >= 1
    assert graph["seedCount"] >= 1 and graph["edgeConfidence"]["explicit"] >= 1
    assert _paths(full) == ["cooking/bread.md"]
    fast = hybrid_query(embedded, request, QueryOptions(fast=True), backend)
    assert fast["meta"]["graphExpansion"]["fallbackReasons"] == ["graph_disabled"]
    off = hybrid_query(embedded, request, QueryOptions(graph=False), backend)
    assert off["meta"]["graphExpansion"]["enabled"] is False
    thorough = hybrid_query(embedded, request, QueryOptions(thorough=True), backend)
    assert thorough["meta"]["candidateLimit"] == 40


def test_hybrid_query_modes(embedded: sqlite3.Connection, backend: BundledEmbedder) -> None:
    request = SearchRequest(query="tips", limit=3)
    hyde = QueryOptions(query_modes=[("hyde", "Open a savings account and track spending.")])
    result = hybrid_query(embedded, request, hyde, backend)
    assert _paths(result)[0] == "fr/finance.md"
    assert result["meta"]["queryModes"] == {"term": 0, "intent": 0, "hyde": True}
    term = QueryOptions(query_modes=[("term", "Winterreifen"), ("intent", "cars")])
    result = hybrid_query(embedded, request, term, backend)
    assert "de/auto.md" in _paths(result)
    assert result["meta"]["queryModes"] == {"term": 1, "intent": 1, "hyde": False}
    assert result["meta"]["intent"] == "cars"
    two = QueryOptions(query_modes=[("hyde", "a"), ("hyde", "b")])
    with pytest.raises(GnoError) as caught:
        hybrid_query(embedded, request, two, backend)
    assert caught.value.code == "INVALID_INPUT"


def test_a_changed_model_version_never_mixes_vectors(
    embedded: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    upgraded = _Renamed(backend, "99.0")
    chunks = embedded.execute("SELECT COUNT(*) FROM content_chunks").fetchone()[0]
    assert backlog(embedded, upgraded) == chunks  # everything needs re-embedding
    with pytest.raises(GnoError) as caught:
        vector_search(embedded, upgraded, SearchRequest(query="bread"))
    assert caught.value.code == "VECTORS_UNAVAILABLE"
    request = SearchRequest(query="bread")
    degraded = hybrid_query(embedded, request, QueryOptions(), upgraded)
    assert degraded["meta"]["mode"] == "bm25_only" and degraded["meta"]["vectorsUsed"] is False
    old_rows = embedded.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0]
    embed_backlog(embedded, upgraded)
    assert backlog(embedded, upgraded) == 0
    with write_transaction(embedded):
        cleared = clear_collection(
            SqliteVectors(embedded), "notes", mode="stale", current_key=upgraded.identity.key
        )
    assert cleared["deletedVectors"] == old_rows
    assert cleared["deletedModels"] == [backend.identity.key]
    assert backlog(embedded, backend) == chunks
    assert _paths(vector_search(embedded, upgraded, request))[0] == "cooking/bread.md"


def test_clear_all_keeps_vectors_shared_with_another_collection(
    notes: Engine, embedded: sqlite3.Connection, backend: BundledEmbedder, tmp_path: Path
) -> None:
    other = write_corpus(tmp_path / "other", {"copy.md": DOCS["garden.md"]})
    notes.collections.add(str(other), name="other")
    notes.sync(["other"])
    with write_transaction(embedded):
        cleared = clear_collection(SqliteVectors(embedded), "notes", mode="all", current_key=None)
    assert cleared["protectedSharedVectors"] == 1 and cleared["deletedVectors"] > 0
    assert backlog(embedded, backend, ["other"]) == 0
    assert backlog(embedded, backend, ["notes"]) > 0
    result = vector_search(embedded, backend, SearchRequest(query="water the tomato seedlings"))
    assert {hit["uri"] for hit in result["results"]} >= {"gno://other/copy.md"}


def test_changed_documents_are_re_embedded_and_old_vectors_dropped(
    notes: Engine, embedded: sqlite3.Connection, backend: BundledEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "notes" / "garden.md"
    path.write_text("# Sailing\n\nHoist the sails and steer the boat across the bay.\n")
    notes.sync()
    assert backlog(embedded, backend) == 1
    request = SearchRequest(query="sailing a boat", limit=1)
    stale = vector_search(embedded, backend, request)
    assert "garden.md" not in _paths(stale)  # its old vectors no longer belong to it
    embed_backlog(embedded, backend)
    assert _paths(vector_search(embedded, backend, request)) == ["garden.md"]
    orphans = embedded.execute(
        "SELECT COUNT(*) FROM content_vectors v WHERE NOT EXISTS (SELECT 1 FROM "
        "content_chunks c WHERE c.mirror_hash = v.mirror_hash AND c.seq = v.seq)"
    ).fetchone()[0]
    assert orphans == 0


def test_a_batch_that_fails_is_counted_and_nothing_half_written(
    conn: sqlite3.Connection, backend: BundledEmbedder
) -> None:
    class Flaky:
        identity = backend.identity
        calls = 0

        def embed_texts(self, texts: list[str]) -> np.ndarray:
            Flaky.calls += 1
            if Flaky.calls == 2:
                return backend.embed_texts(texts)[:, :100]  # a wrong dimension mid-run
            return backend.embed_texts(texts)

    with pytest.raises(GnoError) as caught:
        embed_backlog(conn, Flaky(), batch_size=2)
    assert caught.value.code == "EMBED_DIMENSION_MISMATCH"
    rows = conn.execute(
        "SELECT COUNT(DISTINCT mirror_hash || ':' || seq) FROM content_vectors"
    ).fetchone()[0]
    assert rows == 2  # the first batch only
    assert dataclasses.asdict(embed_backlog(conn, backend))["errors"] == 0
    assert backlog(conn, backend) == 0


def test_outputs_match_gnos_schemas(
    embedded: sqlite3.Connection, backend: BundledEmbedder, schema_check: object
) -> None:
    check = schema_check  # validate(name, instance)
    request = SearchRequest(query="bread", limit=3, scope=Scope(tags_any=["x"], since="2000-01-01"))
    check("search-results", vector_search(embedded, backend, request))  # type: ignore[operator]
    options = QueryOptions(query_modes=[("term", "oven"), ("hyde", "Bake it.")], explain=True)
    fused = hybrid_query(embedded, SearchRequest(query="bread", limit=3), options, backend)
    check("search-results", fused)  # type: ignore[operator]
    lexical = hybrid_query(embedded, SearchRequest(query="bread"), options, None)
    check("search-results", lexical)  # type: ignore[operator]
    check("similar", similar(embedded, backend, "notes/garden.md", threshold=0))  # type: ignore[operator]


def test_background_embedder_follows_new_documents_and_stops_cleanly(
    notes: Engine, tmp_path: Path
) -> None:
    import time

    from gno_trio.engine import BackgroundEmbedder

    def waiting() -> int:
        return sum(w for _, w in notes.vectors.counts().values())

    embedder = BackgroundEmbedder(notes.vectors, poll_seconds=0.05)
    embedder.start()
    try:
        deadline = time.monotonic() + 120
        # The backlog empties when the last batch commits; the embedder counts the
        # run a moment later, when its embed call returns.
        while not (waiting() == 0 and embedder.embedded > 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waiting() == 0 and embedder.embedded > 0
        (tmp_path / "notes" / "kayak.md").write_text("# Kayaking\n\nPaddle along the coast.\n")
        notes.sync()  # the new chunk is backlog now (the embedder may already be at it)
        deadline = time.monotonic() + 60
        while waiting() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waiting() == 0
        found = notes.search.vector(SearchRequest(query="paddling a small boat at sea", limit=1))
        assert _paths(found) == ["kayak.md"]
    finally:
        assert embedder.close() is True  # stopped within its bound
    assert notes.index.status()["embeddingBacklog"] == 0


def test_background_embedder_waits_out_a_shortage_of_descriptors_quietly(
    notes: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import time

    from gno_trio.engine import BackgroundEmbedder

    counts = notes.vectors.counts
    failures = [
        ImportError("mmap.so: cannot open shared object file: Too many open files"),
        OSError(24, "Too many open files"),
    ]

    def short_of_descriptors() -> dict[str, tuple[int, int]]:
        if failures:  # a module imported on first use, then a file, while none are left
            raise failures.pop(0)
        return counts()

    monkeypatch.setattr(notes.vectors, "counts", short_of_descriptors)
    embedder = BackgroundEmbedder(notes.vectors, poll_seconds=0.05, wake_seconds=0.05)
    with caplog.at_level("WARNING", logger="gno_trio.engine.vectors.background"):
        embedder.start()
        try:
            deadline = time.monotonic() + 120
            while embedder.embedded == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            assert embedder.close() is True
    assert embedder.embedded > 0  # the shortage passed and the backlog was embedded
    paused = [r.getMessage() for r in caplog.records if "paused" in r.getMessage()]
    assert paused == [
        "background embedding paused: ImportError: mmap.so: cannot open shared object file: "
        "Too many open files",
        "background embedding paused: OSError: Too many open files",
    ]
    assert not [r for r in caplog.records if r.exc_info]  # no traceback for a passing shortage
