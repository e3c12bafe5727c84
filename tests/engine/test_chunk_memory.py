"""A serving process's in-memory chunk index gives the very answers FTS5 gives.

Serving processes hold a copy of the chunk index in memory
(``Engine.hold_chunk_index``) and work each hit's best chunk and snippet
out from it instead of asking FTS5 once per hit. Nothing a user sees may
change: these tests run a few hundred varied searches over the mcp-docs
corpus without the memory and with it and hold every result to identity,
check that a search right after a sync never shows the text from before,
that the documents were ranked in memory too, that chunks the memory
leaves to FTS5 (characters whose token boundaries it cannot prove) still
get FTS5's answer, that the serving composition holds
the index and lets it go, and that a one-shot engine never builds it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gno_trio import compose
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.search import (
    anchors,
    chunkkeeper,
    chunkmemory,
    docmemory,
    memoryanchors,
)
from gno_trio.engine.store import scratch_fulltext
from tests.conftest import bump_mtime, write_corpus
from tests.support.requests import flat_search
from tests.support.search_candidates import varied_requests
from tests.support.shared import MCP_DOCS, required

QUERIES = 300
BUILD_THREAD = "gno-chunk-memory"


def _dirs(base: Path) -> Dirs:
    return Dirs(config=base / "config", data=base / "data", cache=base / "cache")


def _indexed(base: Path, root: Path) -> Engine:
    """A fresh engine under ``base`` with ``root`` synced as the collection ``notes``."""
    engine = Engine.open(dirs=_dirs(base))
    engine.collections.add(str(root), name="notes")
    engine.sync()
    return engine


def _search(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.search.lexical(flat_search(**request))


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The mcp-docs corpus indexed once, by an engine that does not hold its chunk index."""
    required(MCP_DOCS, "the mcp-docs fixture")
    engine = _indexed(tmp_path_factory.mktemp("mcp-docs"), MCP_DOCS)
    try:
        yield engine
    finally:
        engine.close()


def _chunk_ranges(engine: Engine) -> dict[str, tuple[int, int]]:
    """Each mirror's first and last chunk id."""
    conn = sqlite3.connect(f"file:{engine.location.db_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT mirror_hash, MIN(id), MAX(id) FROM content_chunks GROUP BY mirror_hash"
        ).fetchall()
    finally:
        conn.close()
    return {str(mirror): (int(first), int(last)) for mirror, first, last in rows}


class MemoryWatch:
    """What the searches of a ``with`` block took from the memory and from FTS5."""

    def __init__(self) -> None:
        self.served: list[tuple[set[str], set[str] | None]] = []
        """Per call of ``anchors_in_memory``: the mirrors asked for, the ones answered."""
        self.memory: chunkmemory.ChunkMemory | None = None
        self.fts5_chunks: set[int] = set()
        """Chunks whose snippet FTS5 cut."""
        self.ranked = 0
        """Expressions the held document index ranked."""


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Callable[[], MemoryWatch]:
    """Start recording (call it): which anchors the memory served, which chunks FTS5 cut."""

    def start() -> MemoryWatch:
        seen = MemoryWatch()
        in_memory = memoryanchors.anchors_in_memory
        index_cut = anchors._IndexCutter.cut
        table_cut = scratch_fulltext.SnippetTable.snippets

        def spy(
            conn: sqlite3.Connection,
            memory: chunkmemory.ChunkMemory,
            tokenizer: Callable[[str], list[str]],
            spans: dict[str, tuple[int, int]],
            match: str,
        ) -> Any:
            found = in_memory(conn, memory, tokenizer, spans, match)
            seen.memory = memory
            seen.served.append((set(spans), None if found is None else set(found)))
            return found

        def on_index(self: Any, chunk_ids: list[int], form: str) -> Any:
            seen.fts5_chunks.update(chunk_ids)
            return index_cut(self, chunk_ids, form)

        def in_table(self: Any, chunk_ids: list[int], *args: Any) -> Any:
            seen.fts5_chunks.update(chunk_ids)
            return table_cut(self, chunk_ids, *args)

        rank = docmemory.DocumentMemory.ranked

        def ranked(self: docmemory.DocumentMemory, *args: Any) -> Any:
            found = rank(self, *args)
            seen.ranked += 1
            return found

        monkeypatch.setattr(docmemory.DocumentMemory, "ranked", ranked)
        monkeypatch.setattr(memoryanchors, "anchors_in_memory", spy)
        monkeypatch.setattr(anchors._IndexCutter, "cut", on_index)
        monkeypatch.setattr(scratch_fulltext.SnippetTable, "snippets", in_table)
        return seen

    return start


def _fts5_only_chunks(engine: Engine, memory: chunkmemory.ChunkMemory) -> set[int]:
    """The chunks of every mirror the memory does not hold whole."""
    return {
        chunk_id
        for first, last in _chunk_ranges(engine).values()
        if not memory.holds_span(first, last)
        for chunk_id in range(first, last + 1)
    }


def test_held_chunk_index_gives_fts5s_answers_to_hundreds_of_queries(
    docs: Engine, watch: Callable[[], MemoryWatch]
) -> None:
    """Every result of ~300 varied searches (documents, order, scores, snippets, lines,
    snippet ranges) is the same with the chunk index in memory, and the memory
    really answered them: FTS5 cut only chunks of pages the memory leaves to it."""
    assert not docs.search.chunk_index_held(), "the memory must not serve the first pass"
    requests: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    for request in varied_requests():
        answer = _search(docs, request)
        if answer["results"]:
            requests.append(request)
            expected.append(answer)
    assert len(requests) >= QUERIES, f"only {len(requests)} queries find anything"
    requests, expected = requests[:QUERIES], expected[:QUERIES]

    docs.search.hold_chunk_index()
    _search(docs, requests[0])  # the first search of this state starts the build
    assert docs.search.chunk_index_held(timeout=120)
    seen = watch()
    for request, before in zip(requests, expected, strict=True):
        assert _search(docs, request) == before, request

    assert len(seen.served) == len(requests)
    assert seen.ranked >= len(requests), "every search ranked its documents in memory"
    assert all(found == asked for asked, found in seen.served), "a search fell back to FTS5"
    assert sum(len(found or ()) for _, found in seen.served) > 2 * len(requests)
    assert seen.memory is not None
    assert seen.fts5_chunks <= _fts5_only_chunks(docs, seen.memory)


# -- a search right after a sync --------------------------------------------------


def _page(topic: str, parts: int, extra: dict[int, str] | None = None) -> str:
    """A markdown page of several chunks on ``topic``; ``extra`` adds a sentence to parts."""
    sections = [
        f"## Part {n}\n\n"
        + " ".join(f"The {topic} note, part {n}, sentence {s}. Details follow." for s in range(12))
        + (f" {extra[n]}" if extra and n in extra else "")
        for n in range(parts)
    ]
    return f"# {topic.title()}\n\n" + "\n\n".join(sections) + "\n"


PAGES = {
    "alpha.md": "# Alpha\n\nA short alpha note about the gamma release.\n",
    # Which of its chunks is best for "apple pear" depends on which word is rarer
    # in the whole chunk index: the rare word weighs, the common one barely.
    "beta.md": _page("beta", 30, {3: "An apple, apple, apple.", 25: "A pear, pear, pear."}),
    "gamma.md": _page("gamma", 30, {n: "Another pear." for n in range(30)}),
}
EDITED = _page(
    "gamma",
    30,
    {n: "Another apple." + (" Zanzibar quixotry." if n == 17 else "") for n in range(30)},
)


def _results(engine: Engine, query: str) -> list[dict[str, Any]]:
    return list(_search(engine, {"query": query, "limit": 10})["results"])


def _snippet_of(results: list[dict[str, Any]], name: str) -> str:
    (hit,) = [hit for hit in results if hit["uri"].endswith(f"/{name}")]
    return str(hit["snippet"])


def _chunks_of(engine: Engine) -> dict[str, tuple[int, int]]:
    """First and last chunk id of each document (by its path in the collection)."""
    conn = sqlite3.connect(f"file:{engine.location.db_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT d.rel_path, MIN(c.id), MAX(c.id) FROM documents d "
            "JOIN content_chunks c ON c.mirror_hash = d.mirror_hash "
            "WHERE d.active GROUP BY d.rel_path"
        ).fetchall()
    finally:
        conn.close()
    return {str(path): (int(first), int(last)) for path, first, last in rows}


def test_a_search_right_after_a_sync_shows_the_new_text(
    tmp_path: Path, watch: Callable[[], MemoryWatch]
) -> None:
    """With the memory built for the old text, a search right after a sync gives what
    a fresh engine without the memory gives: the edited page's new words, and an
    unchanged page's best chunk as the new word counts make it; once the memory
    is rebuilt for the new text it gives that same answer itself."""
    notes = write_corpus(tmp_path / "notes", PAGES)
    engine = _indexed(tmp_path / "held", notes)
    try:
        engine.search.hold_chunk_index()
        assert engine.search.chunk_index_held(timeout=60)
        before = _snippet_of(_results(engine, "apple pear"), "beta.md")
        assert "<mark>apple</mark>, <mark>apple</mark>" in before and "pear" not in before
        assert len(_chunks_of(engine)) == 3 and len(set(_chunks_of(engine).values())) == 3
        page = notes / "gamma.md"
        page.write_text(EDITED, encoding="utf-8")
        bump_mtime(page)
        (report,) = engine.sync()
        assert report.updated == 1

        queries = ["zanzibar quixotry", "apple pear", "gamma", '"gamma note, part 17"']
        now = [_results(engine, query) for query in queries]
        fresh = _indexed(tmp_path / "fresh", notes)
        try:
            wanted = [_results(fresh, query) for query in queries]
        finally:
            fresh.close()
        assert now == wanted
        assert "<mark>Zanzibar</mark> <mark>quixotry</mark>" in _snippet_of(now[0], "gamma.md")
        after = _snippet_of(now[1], "beta.md")
        assert "<mark>pear</mark>, <mark>pear</mark>" in after and "apple" not in after
        assert "<mark>pear</mark>" not in _snippet_of(now[1], "gamma.md")

        assert engine.search.chunk_index_held(timeout=60)
        seen = watch()
        assert [_results(engine, query) for query in queries] == wanted
        assert len(seen.served) == len(queries)
        assert all(found == asked for asked, found in seen.served)
        assert seen.fts5_chunks == set()
    finally:
        engine.close()


# -- chunks the memory leaves to FTS5 -------------------------------------------------


UNPROVEN = {
    # A combining accent is part of FTS5's token (then dropped as a diacritic);
    # a word pattern would end the word before it.
    "cafe.md": (
        "# Cafe\u0301 menu\n\nThe cafe\u0301 menu lists a cafe\u0301 au lait. Ask the staff.\n"
    ),
    # A private-use character is a token character to FTS5.
    "private.md": "# Glyphs\n\nThe menu\ue000 item and the \ue000 glyph sit in private use.\n",
    # One chunk of a long page holds a mark: the whole page is left to FTS5.
    "long.md": _page("menu", 20).replace("part 7, sentence 2.", "part 7, sentence 2 x\u0301y."),
    "plain.md": "# Plain menu\n\nThe plain menu lists soup. Ask the staff for the menu.\n",
    "other.md": _page("staff", 20),
}


def test_chunks_left_to_fts5_get_fts5s_answers(
    tmp_path: Path, watch: Callable[[], MemoryWatch]
) -> None:
    """Searches hitting text with combining marks or private-use characters give the
    answers of an engine without the memory (FTS5 cuts those chunks), beside hits
    on ordinary pages that the memory answers."""
    notes = write_corpus(tmp_path / "notes", UNPROVEN)
    queries = ["cafe", "café", "cafe menu", '"cafe menu"', "menu", "item glyph", "glyph"]
    queries += ["xy", "lait staff", "staff", "private use", "menu item", "soup"]
    plain = _indexed(tmp_path / "plain", notes)
    try:
        wanted = [_results(plain, query) for query in queries]
    finally:
        plain.close()
    assert all(wanted), "every query finds something"
    engine = _indexed(tmp_path / "held", notes)
    try:
        engine.search.hold_chunk_index()
        _results(engine, "menu")
        assert engine.search.chunk_index_held(timeout=60)
        seen = watch()
        assert [_results(engine, query) for query in queries] == wanted
        chunks = _chunks_of(engine)
        unproven = {
            chunk_id
            for path in ("cafe.md", "private.md", "long.md")
            for chunk_id in range(chunks[path][0], chunks[path][1] + 1)
        }
        assert seen.memory is not None
        assert _fts5_only_chunks(engine, seen.memory) == unproven
        assert seen.fts5_chunks and seen.fts5_chunks <= unproven
        assert any(found for _, found in seen.served), "the memory answers the plain pages"
    finally:
        engine.close()
    cafe = next(hit for hit in wanted[0] if hit["uri"].endswith("/cafe.md"))
    assert "<mark>cafe\u0301</mark>" in cafe["snippet"]


def test_a_search_tokenizes_each_phrase_the_corpus_lacks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prefixes of words (no corpus word themselves) are tokenized by the index's own
    tokenizer: once per search each, though ranking all terms, then any term, then
    cutting the snippets each need them, and the answer is the one FTS5 gives."""
    pages = {
        f"note-{n}.md": f"# Note {n}\n\nThe archive keeps {'queens' if n % 2 else 'kings'}.\n"
        for n in range(6)
    }
    engine = _indexed(tmp_path / "index", write_corpus(tmp_path / "notes", pages))
    try:
        request = {"query": "archi queen", "limit": 5}
        before = _search(engine, request)
        engine.search.hold_chunk_index()
        _search(engine, request)
        assert engine.search.chunk_index_held(timeout=60)
        asked: list[str] = []
        tokens = scratch_fulltext.SnippetTable.tokens

        def counted(self: scratch_fulltext.SnippetTable, text: str) -> list[str]:
            asked.append(text)
            return tokens(self, text)

        monkeypatch.setattr(scratch_fulltext.SnippetTable, "tokens", counted)
        assert _search(engine, request) == before
        assert sorted(asked) == ["archi", "queen"]
    finally:
        engine.close()


# -- who holds the chunk index ----------------------------------------------------------


def test_serving_holds_the_chunk_index_and_lets_it_go(dirs: Dirs, corpus: Path) -> None:
    engine = Engine.open(dirs=dirs)
    engine.collections.add(str(corpus), name="notes")
    engine.sync()
    db_path = engine.location.db_path
    assert not engine.search.chunk_index_held()
    with compose.serving(engine, write_enabled=False, tool_profile="core") as served:
        assert served.engine is engine
        assert _results(engine, "kubernetes")
        assert engine.search.chunk_index_held(timeout=60)
        assert str(db_path) in chunkkeeper._SLOTS
    assert str(db_path) not in chunkkeeper._SLOTS
    with Engine.open(dirs=dirs, create=False) as later:
        assert _results(later, "kubernetes")
        assert not later.search.chunk_index_held(timeout=0.5)


@pytest.fixture
def started_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads started during the test."""
    names: list[str] = []
    start = threading.Thread.start

    def recording(self: threading.Thread) -> None:
        names.append(self.name)
        start(self)

    monkeypatch.setattr(threading.Thread, "start", recording)
    return names


def test_a_one_shot_engine_never_builds_the_chunk_index(
    indexed: Engine, started_threads: list[str]
) -> None:
    for query in ("kubernetes", "banana split", "real-time", "quokka", "zebra"):
        assert _results(indexed, query), query
    assert not indexed.search.chunk_index_held(timeout=0.3)
    assert BUILD_THREAD not in started_threads
    # The same engine, once it holds the index, does build it.
    indexed.search.hold_chunk_index()
    assert _results(indexed, "kubernetes")
    assert indexed.search.chunk_index_held(timeout=60)
    assert started_threads.count(BUILD_THREAD) == 1
