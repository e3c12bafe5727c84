"""A serving process ranks documents on its in-memory document index exactly as FTS5 would.

With the index held (``Engine.hold_chunk_index``), unfiltered searches rank
their documents on :class:`DocumentMemory` instead of ``bm25(documents_fts)``.
These tests hold it to FTS5's own statement: the same rows, in the same
order, with the same ranks to the last bit (deep lists full of ties too),
for the expressions the query grammar writes and for random expressions of
every operator FTS5 knows; a change that touches only the document index
(a tag added) is seen at once; filtered searches (by collection ranked in
memory over its rows) give FTS5's answers, ties and all.
"""

from __future__ import annotations

import gc
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.search import chunkkeeper, docmemory, docrankers
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.engine.store.database import DEFAULT_TOKENIZE, connect, stored_tokenizer
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS
from gno_trio.engine.store.scratch_fulltext import scratch_table
from tests.conftest import choose_backend, write_corpus
from tests.support.requests import flat_search
from tests.support.search_candidates import varied_requests
from tests.support.shared import MCP_DOCS, required

_RANK_SQL = (
    f"SELECT rowid, bm25(documents_fts, {', '.join(map(str, FIELD_WEIGHTS))}) AS rank "
    "FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rank LIMIT ?"
)


def _engine(base: Path, root: Path) -> Engine:
    engine = Engine.open(dirs=Dirs(config=base / "c", data=base / "d", cache=base / "k"))
    engine.collections.add(str(root), name="notes")
    engine.sync()
    return engine


def _held(engine: Engine) -> tuple[docmemory.DocumentMemory, docmemory.Tokenizer]:
    """The engine's index read into memory the way a serving process holds it."""
    conn = connect(engine.location.db_path, readonly=True)
    try:
        tokenize = stored_tokenizer(conn) or DEFAULT_TOKENIZE
        memory = chunkkeeper.build(conn, tokenize)
    finally:
        conn.close()
    assert memory is not None and memory.documents is not None

    def tokenizer(text: str) -> list[str]:
        with scratch_table(tokenize) as table:
            return table.tokens(text)

    return memory.documents, tokenizer


def _fts5(engine: Engine, match: str, limit: int) -> list[tuple[int, float]]:
    conn = sqlite3.connect(f"file:{engine.location.db_path}?mode=ro", uri=True)
    try:
        return [(int(row), float(rank)) for row, rank in conn.execute(_RANK_SQL, (match, limit))]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    required(MCP_DOCS, "the mcp-docs fixture")
    engine = _engine(tmp_path_factory.mktemp("mcp-docs"), MCP_DOCS)
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(params=["rows in one array", "sorted row lists"])
def ranking_path(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> tuple[bool, list[str]]:
    """Either way of ranking (each phrase counted over every row, as small indexes
    are; or merged as sorted row lists, as large ones are): whether it is the first
    way, and the rankings that took it."""
    dense: list[str] = []
    original = docmemory.DocumentMemory._ranked_dense

    def spied(self: docmemory.DocumentMemory, *args: Any) -> list[tuple[int, float]]:
        dense.append("ranked")
        return original(self, *args)

    monkeypatch.setattr(docmemory.DocumentMemory, "_ranked_dense", spied)
    if request.param == "sorted row lists":
        monkeypatch.setattr(docmemory, "DENSE_ROWS", 0)
    return request.param == "rows in one array", dense


def test_the_grammars_expressions_rank_as_fts5_ranks_them(
    docs: Engine, ranking_path: tuple[bool, list[str]]
) -> None:
    """Every expression a search runs (all terms, any term with negations kept, any
    term) for ~500 varied queries: the same rows, order and ranks as FTS5, at 10
    rows and at 400 (where equal ranks are many), whichever way rows are ranked."""
    memory, tokenizer = _held(docs)
    compared = 0
    for request in varied_requests():
        parsed = parse_query(request["query"])
        for match in {parsed.match, parsed.any_match, docrankers.relaxed_match(parsed)} - {None}:
            assert match is not None
            for limit in (10, 400):
                wanted = _fts5(docs, match, limit)
                assert memory.ranked(match, limit, tokenizer) == wanted, (match, limit)
                compared += bool(wanted)
    assert compared > 1200
    assert bool(ranking_path[1]) == ranking_path[0]


_WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def _expression(rng: random.Random, depth: int = 0) -> str:
    """A random FTS5 expression of quoted terms, prefixes, phrases and operators."""
    if depth > 2 or rng.random() < 0.35:
        kind = rng.random()
        if kind < 0.5:
            return f'"{rng.choice(_WORDS)}"'
        if kind < 0.75:
            return f'"{rng.choice(_WORDS)[: rng.randint(1, 3)]}"*'
        return '"' + " ".join(rng.sample(_WORDS, 2)) + '"'
    parts = [_expression(rng, depth + 1) for _ in range(rng.randint(2, 3))]
    operators = [rng.choice(("AND", "OR", "NOT")) for _ in parts[1:]]
    text = parts[0]
    for operator, part in zip(operators, parts[1:], strict=True):
        text += f" {operator} {part}"
    return f"({text})" if rng.random() < 0.5 else text


def test_random_expressions_of_every_operator_rank_as_fts5_ranks_them(
    tmp_path: Path, ranking_path: tuple[bool, list[str]]
) -> None:
    """Precedence (NOT over AND over OR), parentheses, prefixes and phrases in six
    weighted fields: of 1000 random expressions over 120 small notes, each one ranked
    in memory has its whole ranked list equal to FTS5's, ties and all, whichever way
    rows are ranked; the shapes whose instances FTS5 reports otherwise are refused."""
    rng = random.Random(7)
    pages = {}
    for number in range(120):
        body = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 40)))
        title = " ".join(rng.sample(_WORDS, 2))
        tags = " ".join(f"  - {word}" for word in rng.sample(_WORDS, rng.randint(0, 2)))
        head = f"---\ntitle: {title}\nauthor: {rng.choice(_WORDS)}\ntags:\n{tags}\n---\n"
        name = f"{rng.choice(_WORDS)}-{number}.md"
        pages[name] = head + f"\n{body}\n" if tags else f"# {title}\n\n{body}\n"
    engine = _engine(tmp_path / "index", write_corpus(tmp_path / "notes", pages))
    try:
        memory, tokenizer = _held(engine)
        found = left = 0
        for _ in range(1000):
            expression = _expression(rng)
            wanted = _fts5(engine, expression, 1000)
            try:
                ranked = memory.ranked(expression, 1000, tokenizer)
            except docmemory.Unsupported:
                left += 1  # an AND or NOT below an OR: FTS5 ranks it
                continue
            assert ranked == wanted, expression
            found += bool(wanted)
        assert found > 300 and left > 100
        assert bool(ranking_path[1]) == ranking_path[0]
    finally:
        engine.close()


def test_unsupported_expressions_are_left_to_fts5() -> None:
    shapes = ['"a" NEAR "b"', "title:foo", '"a" AND', '("a"', "bare", '"a" ) ("b"']
    shapes += ['"a" OR ("b" AND "c")', '"a" OR ("b" NOT "c")', '"a" NOT ("b" AND "c")']
    for expression in shapes:
        with pytest.raises(docmemory.Unsupported):
            docmemory.parse(expression)


def _search(engine: Engine, **request: Any) -> list[tuple[str, float]]:
    answer = engine.search.lexical(flat_search(**request))
    return [(hit["uri"], hit["score"]) for hit in answer["results"]]


def _held_and_spied(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Hold ``engine``'s index as a serving process does; the list returned fills with
    the expressions ranked on the held document index from now on."""
    engine.search.hold_chunk_index()
    assert engine.search.chunk_index_held(timeout=60)
    ranked: list[str] = []
    original = docmemory.DocumentMemory.ranked

    def spy(self: docmemory.DocumentMemory, expression: str, *args: Any) -> Any:
        ranked.append(expression)
        return original(self, expression, *args)

    monkeypatch.setattr(docmemory.DocumentMemory, "ranked", spy)
    return ranked


def test_a_tag_or_a_rename_is_seen_at_once_and_filters_get_fts5s_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag and a rename (which leaves the chunk index as it was) are seen by a serving
    engine's very next search. Filtered and unfiltered searches (both ranked in
    memory) give what an engine without the memory gives."""
    pages = {
        f"{topic}-{n}.md": f"# {topic.title()} {n}\n\nNotes on {topic} and the deploy steps.\n"
        for topic in ("cache", "queue", "index")
        for n in range(4)
    }
    # A tag is written into the note's file: each engine has its own copy.
    plain_notes = write_corpus(tmp_path / "plain-notes", pages)
    held_notes = write_corpus(tmp_path / "held-notes", pages)
    plain = _engine(tmp_path / "plain", plain_notes)
    engine = _engine(tmp_path / "held", held_notes)
    try:
        ranked = _held_and_spied(engine, monkeypatch)
        requests: list[dict[str, Any]] = [
            {"query": "deploy"},
            {"query": "cache deploy", "limit": 5},
            {"query": "deploy", "collection": "notes"},
            {"query": "steps -queue"},
        ]
        assert [_search(engine, **r) for r in requests] == [_search(plain, **r) for r in requests]
        assert ranked.count('"deploy"*') == 2, "the filtered search is ranked in memory too"
        assert '"steps"* NOT "queue"*' in ranked
        for held in (engine, plain):
            held.notes.add_tag("notes/queue-2.md", "zephyrine")
        hits = _search(engine, query="zephyrine")
        assert [uri for uri, _ in hits] == ["gno://notes/queue-2.md"]
        assert hits == _search(plain, query="zephyrine")
        assert engine.search.chunk_index_held(timeout=60), "rebuilt for the tagged index"
        ranked.clear()
        assert _search(engine, query="zephyrine") == hits
        assert ranked, "the rebuilt memory ranks it"

        # A rename keeps the text, so the chunk index stays as it was: only the
        # document index's path field changes.
        for held, notes in ((engine, held_notes), (plain, plain_notes)):
            (notes / "index-1.md").rename(notes / "quixotic-index.md")
            held.sync()
        renamed = _search(engine, query="quixotic")
        assert [uri for uri, _ in renamed] == ["gno://notes/quixotic-index.md"]
        assert renamed == _search(plain, query="quixotic")
        assert engine.search.chunk_index_held(timeout=60)
        assert _search(engine, query="quixotic") == renamed
    finally:
        engine.close()
        plain.close()


def test_a_search_leaves_no_reference_cycles_for_the_collector(docs: Engine) -> None:
    """Searches on a serving engine free everything they make as they return.

    Garbage in reference cycles is found only by Python's cycle collector, whose
    passes over the whole heap stall the server for tens of milliseconds on a
    held index; a search that left cycles behind (the expression parser's
    nested functions did, five per expression) would bring them on every few
    hundred searches. Every expression shape is parsed afresh here.
    """
    docs.search.hold_chunk_index()
    assert docs.search.chunk_index_held(timeout=60)
    queries = [
        "server",
        "tools list",
        '"tool call"',
        "transport -stdio",
        "sampl",
        "authorization flow -token",
        "resource template",
    ]
    for query in queries:  # the first search of a kind may fill lasting caches
        docs.search.lexical(SearchRequest(query=query, limit=5))
    docmemory.parse.cache_clear()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for query in queries:
            assert docs.search.lexical(SearchRequest(query=query, limit=5))["results"], query
        assert gc.collect() == 0, "unreachable objects in reference cycles"
    finally:
        if was_enabled:
            gc.enable()


def test_filtered_searches_answer_as_fts5_does_ties_and_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ranking_path: tuple[bool, list[str]]
) -> None:
    """A search filtered by collection ranks on the held document index over that
    collection's rows; other filters rank on FTS5. Either way the answer is an engine
    without the memory's: the same documents, order and scores, with every filter
    and with many documents tied for each place."""
    pages: dict[str, str] = {}
    for folder in ("ops", "dev"):
        for n in range(14):
            tag = "release" if n % 3 == 0 else "draft"
            date = f"2025-0{1 + n % 6}-1{n % 9}"
            author = "Ada Lovelace" if n % 2 else "Alan Turing"
            # Same-length names and bodies: ties in every place.
            body = "deploy steps and deploy notes" if n % 4 else "deploy the cache queue"
            pages[f"{folder}/p{n:02d}.md"] = (
                f"---\ntags: {tag}\ndate: {date}\nauthor: {author}\ntype: guide\n---\n"
                f"# Page\n\n{body}\n"
            )
    pages["other/x.md"] = "# Page\n\ndeploy\n"
    plain = _engine(tmp_path / "plain", write_corpus(tmp_path / "plain-notes", pages))
    engine = _engine(tmp_path / "held", write_corpus(tmp_path / "held-notes", pages))
    try:
        ranked = _held_and_spied(engine, monkeypatch)
        filters: list[dict[str, Any]] = [
            {"collection": "notes"},
            {"collection": "notes", "exclude": ["cache"]},
            {"uri_prefix": "gno://notes/ops/"},
            {"tags_any": ["release"]},
            {"tags_all": ["draft"]},
            {"since": "2025-03-01", "until": "2025-05-31"},
            {"author": "ada"},
            {"categories": ["guide"]},
            {"exclude": ["cache"]},
            {"uri_prefix": "gno://notes/dev/", "tags_any": ["draft"], "exclude": ["queue"]},
            {"uri_prefix": "gno://nowhere/"},
        ]
        for extra in filters:
            for query, limit in (("deploy", 5), ("deploy", 40), ("deploy steps", 7), ("cach", 3)):
                request = {"query": query, "limit": limit, **extra}
                ranked.clear()
                held_hits = _search(engine, **request)
                in_memory = set(extra) <= {"collection"}
                assert bool(ranked) == in_memory, f"ranked in memory: {in_memory}, {request}"
                assert held_hits == _search(plain, **request), request
        assert bool(ranking_path[1]) == ranking_path[0]
    finally:
        engine.close()
        plain.close()


def test_each_state_of_the_index_has_one_lexical_ranker(tmp_path: Path) -> None:
    """The ranker is chosen once per snapshot: FTS5 for an engine that holds nothing, the
    held document index for a serving one, tantivy where ``search.backend`` says so. Each
    ranks, counts and checks documents through the one protocol, and FTS5 and the held
    index rank alike, score for score."""
    pages = {
        f"p{n}.md": f"# Page {n}\n\n{'deploy ' * (n + 1)}the cache queue {n}\n" for n in range(8)
    }
    request = SearchRequest(query="deploy cache", limit=5)
    parsed = parse_query(request.query)

    def ranked(engine: Engine) -> tuple[str, list[tuple[str, float]], bool, int]:
        with engine.connection() as conn:
            ranker = docrankers.document_ranker(conn, chunkkeeper.current(conn))
            hits = [(row["uri"], score) for row, score in ranker.rank(parsed, request, 5, None)]
            first = int(conn.execute("SELECT id FROM documents ORDER BY id LIMIT 1").fetchone()[0])
            return ranker.name, hits, ranker.holds(first), ranker.unranked("notes")

    engine = _engine(tmp_path / "one", write_corpus(tmp_path / "notes", pages))
    choose_backend(tmp_path / "two" / "c", "tantivy")
    tantivy = _engine(tmp_path / "two", write_corpus(tmp_path / "more", pages))
    try:
        name, plain, held, unranked = ranked(engine)
        assert (name, held, unranked) == ("fts5", True, 0) and len(plain) == 5
        engine.search.hold_chunk_index()
        assert engine.search.chunk_index_held(timeout=60)
        assert ranked(engine) == ("memory", plain, True, 0)
        name, hits, held, unranked = ranked(tantivy)
        assert (name, held, unranked) == ("tantivy", True, 0)
        assert {uri for uri, _ in hits} == {uri for uri, _ in plain}
    finally:
        engine.close()
        tantivy.close()
