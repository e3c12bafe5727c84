"""BM25 search end to end: grammar, ranking, snippets, filters and result shape."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.errors import GnoError
from tests.conftest import BACKENDS, CORPUS, choose_backend, write_corpus
from tests.support.requests import flat_search

_FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 3
_LONG = "\n".join(f"line {i} filler words about nothing in particular" for i in range(1, 300))

EXTRA: dict[str, str] = {
    # Same body, one has the word in its title: the title match must win.
    "weights/titled.md": f"# Ocelot\n\n{_FILLER}\nan ocelot appears\n",
    "weights/untitled.md": f"# Something Else\n\n{_FILLER}\nan ocelot appears, ocelot again\n",
    # Dated reports for recency ordering.
    "reports/r2023.md": "---\ndate: 2023-01-01\n---\n# R23\n\nquarterly report figures\n",
    "reports/r2025.md": "---\ndate: 2025-01-01\n---\n# R25\n\nquarterly report figures\n",
    "reports/r2024.md": "---\ndate: 2024-01-01\n---\n# R24\n\nquarterly report figures report\n",
    # A match deep inside a long document, far from its first chunk.
    "long.md": f"{_LONG}\nthe hidden armadillo sits here\n{_LONG}\n",
    # Several long documents found by one query: each is anchored in its own
    # best chunk (one mention early, a dense passage later; a single late
    # mention; a match on the file path only, no chunk mentioning the word).
    "okapi/dense.md": f"# Zoo\n\nan okapi\n{_LONG}\nokapi okapi okapi herd\n{_LONG}\n",
    "okapi/late.md": f"# Park\n\n{_LONG}\n{_LONG}\nlone okapi at the end\n",
    "okapi/path.md": "# Elsewhere\n\nnothing here names the animal\n",
}
CJK = {
    "cjk/tokyo.md": "# 東京の案内\n\n東京都に住んでいます。大阪にも行きました。\n",
    "cjk/beijing.md": "# 北京\n\n我们在北京学习中文。\n",
    "cjk/seoul.md": "# 서울\n\n한국어 텍스트를 검색합니다.\n",
    "cjk/mixed.md": "# Mixed\n\nThe API返回值 is documented in 日本語ドキュメント.\n",
}
GERMAN = {"anleitung.md": "# Anleitung\n\nDie Bereitstellung braucht einen Plan für kubernetes.\n"}
NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module", params=BACKENDS)
def engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """One read-only index per backend for the whole module: these tests never write.

    Every test of this module runs once with FTS5 and once with tantivy
    ranking the documents: both must behave alike.
    """
    base = tmp_path_factory.mktemp("search")
    notes = write_corpus(base / "notes", {**CORPUS, **EXTRA, **CJK})
    german = write_corpus(base / "german", GERMAN)
    choose_backend(base / "config", request.param)
    opened = Engine.open(dirs=Dirs(base / "config", base / "data", base / "cache"))
    opened.collections.add(str(notes), name="notes")
    opened.collections.add(str(german), name="german", language_hint="de")
    opened.sync()
    try:
        yield opened
    finally:
        opened.close()


def run(engine: Engine, query: str, **options: Any) -> dict[str, Any]:
    options.setdefault("limit", 20)
    return engine.search.lexical(flat_search(query=query, **options))


def paths(engine: Engine, query: str, **options: Any) -> list[str]:
    return [r["source"]["relPath"] for r in run(engine, query, **options)["results"]]


def union(engine: Engine, queries: list[str], **options: Any) -> set[str]:
    """Documents any of ``queries`` finds (every query ANDs its own terms)."""
    return {path for query in queries for path in paths(engine, query, **options)}


def invalid(engine: Engine, query: str, **options: Any) -> GnoError:
    with pytest.raises(GnoError) as info:
        run(engine, query, **options)
    return info.value


# ---------------------------------------------------------------------------
# Grammar
# ---------------------------------------------------------------------------


def test_plain_words_are_prefix_terms(engine: Engine) -> None:
    assert set(paths(engine, "kubern")) == {"alpha.md", "code/hello.py", "anleitung.md"}
    assert paths(engine, "giraff") == ["alpha.md"]


def test_all_terms_are_required_in_any_order(engine: Engine) -> None:
    assert set(paths(engine, "split banana")) == {"beta.md", "gamma.md"}


def test_quoted_phrase_is_exact(engine: Engine) -> None:
    assert paths(engine, '"banana split"') == ["beta.md"]
    assert paths(engine, '"split the banana"') == ["gamma.md"]


def test_hyphen_compound_is_a_phrase(engine: Engine) -> None:
    # gamma.md has "real databases; time": both words, but not adjacent.
    assert set(paths(engine, "real time")) == {"beta.md", "gamma.md"}
    assert paths(engine, "real-time") == ["beta.md"]


def test_negation_excludes(engine: Engine) -> None:
    assert paths(engine, "banana -desserts") == ["gamma.md"]
    assert paths(engine, 'banana -"banana split"') == ["gamma.md"]


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "the query is empty"),
        ("   ", "the query is empty"),
        ('"unclosed phrase', "unmatched double quote at character 1"),
        ("-banana", "needs at least one positive term"),
        ("-banana -split", "needs at least one positive term"),
        ("!!! ???", "no searchable terms"),
        ("two\nlines", "single line"),
    ],
)
def test_malformed_queries_are_precise_invalid_input(
    engine: Engine, query: str, reason: str
) -> None:
    error = invalid(engine, query)
    assert error.code == "INVALID_INPUT"
    assert error.message.startswith("Invalid search query: ")
    assert reason in error.message


@pytest.mark.parametrize(
    "query", ["NOT AND OR", "title:ocelot", "NEAR(a b)", "ocelot*", "(ocelot", "c++ -", "a ^ b"]
)
def test_fts_syntax_in_queries_is_inert(engine: Engine, query: str) -> None:
    assert isinstance(run(engine, query)["results"], list)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=40))
def test_any_query_either_searches_or_is_invalid_input(engine: Engine, query: str) -> None:
    try:
        result = run(engine, query, limit=3)
    except GnoError as error:
        assert error.code == "INVALID_INPUT"
        assert error.message.startswith("Invalid search query: ")
    else:
        assert len(result["results"]) <= 3


# ---------------------------------------------------------------------------
# Ranking, scores, snippets and anchors
# ---------------------------------------------------------------------------


def test_cjk_runs_are_found_by_their_leading_characters(engine: Engine) -> None:
    """A run of CJK characters is one term on both backends, found by how it starts.

    FTS5's ``unicode61`` tokenizer keeps every letter together, so
    ``東京都に住んでいます`` is one term; tantivy's analyzer cuts text the same
    way, so a query finds the same documents on either (and the snippet,
    cut by FTS5 either way, marks the same term).
    """
    assert paths(engine, "東京") == ["cjk/tokyo.md"]
    assert paths(engine, "大阪") == ["cjk/tokyo.md"]  # a new run after the full stop
    assert paths(engine, "北京") == ["cjk/beijing.md"]
    assert paths(engine, "我们在北京") == ["cjk/beijing.md"]
    assert paths(engine, "한국어") == ["cjk/seoul.md"]
    assert paths(engine, "日本語") == ["cjk/mixed.md"]
    assert paths(engine, "API返回") == ["cjk/mixed.md"]  # a mixed-script run, case folded
    assert paths(engine, "東京 -大阪") == []
    (hit,) = run(engine, "大阪")["results"]
    assert "<mark>大阪にも行きました</mark>" in hit["snippet"]


def test_cjk_text_inside_a_run_is_not_a_term(engine: Engine) -> None:
    """Neither backend splits a CJK run, so its middle is not findable on either."""
    assert paths(engine, "住んで") == []
    assert paths(engine, "返回值") == []


def test_title_match_outranks_body_only_match(engine: Engine) -> None:
    assert paths(engine, "ocelot") == ["weights/titled.md", "weights/untitled.md"]


def test_scores_are_min_max_normalised(engine: Engine) -> None:
    scores = [r["score"] for r in run(engine, "kubernetes")["results"]]
    assert len(scores) >= 3
    assert scores[0] == 1.0 and min(scores) == 0.0
    assert scores == sorted(scores, reverse=True)
    # A single result (or all equal) scores 1.
    assert [r["score"] for r in run(engine, "armadillo")["results"]] == [1.0]


def test_min_score_applies_after_normalisation(engine: Engine) -> None:
    every = run(engine, "kubernetes")["results"]
    some = run(engine, "kubernetes", min_score=0.5)["results"]
    assert [r["uri"] for r in some] == [r["uri"] for r in every if r["score"] >= 0.5]
    assert 1 <= len(some) < len(every)
    assert run(engine, "kubernetes", min_score=0.5)["meta"]["totalResults"] == len(some)


def test_recency_words_order_newest_first(engine: Engine) -> None:
    assert paths(engine, "latest report") == [
        "reports/r2025.md",
        "reports/r2024.md",
        "reports/r2023.md",
    ]
    # Without a recency word the BM25 order stands (r2024 says "report" twice).
    assert paths(engine, "report")[0] == "reports/r2024.md"


def test_snippets_mark_the_matched_terms(engine: Engine) -> None:
    (hit,) = run(engine, "giraffes")["results"]
    assert "<mark>giraffes</mark>" in hit["snippet"]
    (hit,) = run(engine, "quokka")["results"]
    assert "<mark>quokka</mark>" in hit["snippet"]


@pytest.mark.parametrize("encoding", ["UTF-8", "UTF-16le"])
def test_a_hit_deep_in_a_non_ascii_page_is_snippeted_and_anchored_whatever_the_file_encoding(
    tmp_path: Path, encoding: str
) -> None:
    """Chunks are cut from their page by UTF-8 byte range; a file storing its text as
    UTF-16 (created so outside gno-trio) must still cut the right text."""
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    db_path = dirs.database("default")
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA encoding = '{encoding}'")
    conn.execute("CREATE TABLE made_here (x)")  # the encoding is fixed by the first table
    conn.execute("DROP TABLE made_here")
    conn.close()
    greetings = "Grüße aus Köln, 東京.\n" * 400
    page = f"# Reisetagebuch 旅行日记\n\n{greetings}\nThe okapi grazes.\n"
    notes = write_corpus(tmp_path / "notes", {"travel.md": page})
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
        (hit,) = run(engine, "okapi")["results"]
    assert "The <mark>okapi</mark> grazes." in hit["snippet"]
    assert hit["line"] == page.splitlines().index("The okapi grazes.") + 1


def test_every_hit_has_a_line_anchor_pointing_at_the_match(engine: Engine) -> None:
    for query, word in [
        ("armadillo", "armadillo"),
        ("giraffes", "giraffes"),
        ("greets", "greets"),
        ("kubernetes", "kubernetes"),
        ("report", "report"),
        ('"banana split"', "banana split"),
    ]:
        results = run(engine, query)["results"]
        assert results
        for hit in results:
            line = hit["line"]
            assert hit["snippetRange"]["startLine"] <= line <= hit["snippetRange"]["endLine"]
            window = engine.documents.get(
                hit["uri"], from_line=line, line_count=1, line_numbers=False
            )
            assert word in window["content"].lower(), (query, hit["uri"], line)


def test_each_hit_of_one_search_is_anchored_in_its_own_best_chunk(engine: Engine) -> None:
    hits = {hit["source"]["relPath"]: hit for hit in run(engine, "okapi")["results"]}
    assert set(hits) == {"okapi/dense.md", "okapi/late.md", "okapi/path.md"}
    dense, late, path = hits["okapi/dense.md"], hits["okapi/late.md"], hits["okapi/path.md"]
    # The passage with three mentions beats the single early one.
    assert dense["line"] == 303
    assert dense["snippet"].count("<mark>okapi</mark>") == 3
    assert late["line"] == 601
    assert "<mark>okapi</mark>" in late["snippet"]
    # No chunk mentions it: the document's opening text, unmarked.
    assert path["line"] == 1
    assert "<mark>" not in path["snippet"]
    assert "nothing here names the animal" in path["snippet"]


def test_deep_match_anchor_is_far_into_the_document(engine: Engine) -> None:
    (hit,) = run(engine, "armadillo")["results"]
    assert hit["line"] == 300
    assert hit["snippetRange"]["startLine"] > 1


# ---------------------------------------------------------------------------
# Filters
# ---------------------------------------------------------------------------


def test_collection_filter(engine: Engine) -> None:
    assert paths(engine, "kubernetes", collection="GERMAN") == ["anleitung.md"]
    assert "anleitung.md" not in paths(engine, "kubernetes", collection="notes")
    error = invalid(engine, "kubernetes", collection="nope")
    assert error.code == "NOT_FOUND" and "nope" in error.message


@pytest.mark.parametrize(
    ("since", "until", "expected"),
    [
        # alpha.md is dated 2024-03-01; a bare date bound covers that whole day.
        ("2024-03-01", None, {"alpha.md", "reports/r2025.md"}),
        (None, "2024-03-01", {"alpha.md", "reports/r2023.md", "reports/r2024.md"}),
        ("2024-03-01", "2024-03-01", {"alpha.md"}),
        ("2024-03-02", "2024-12-31", set()),
        ("2024-01-01T00:00:00Z", "2024-06-30", {"alpha.md", "reports/r2024.md"}),
        # Relative to NOW (2025-06-20): "last year" is calendar 2024 onwards.
        ("last year", None, {"alpha.md", "reports/r2024.md", "reports/r2025.md"}),
        ("200d", None, {"reports/r2025.md"}),
        ("2023", "2023", {"reports/r2023.md"}),
    ],
)
def test_since_and_until(
    engine: Engine, since: str | None, until: str | None, expected: set[str]
) -> None:
    dated = {"alpha.md", "reports/r2023.md", "reports/r2024.md", "reports/r2025.md"}
    found = union(engine, ["report", "kubernetes"], since=since, until=until, now=NOW)
    assert found & dated == expected


def test_relative_since_uses_frontmatter_dates_over_file_times(engine: Engine) -> None:
    # gamma.md is dated 2025-06-15 in its frontmatter; its file time is today.
    assert "gamma.md" in paths(engine, "banana", since="7d", now=NOW)
    assert "gamma.md" not in paths(engine, "banana", since="3 days ago", now=NOW)
    # beta.md has no frontmatter date, so its (recent) file time counts.
    assert "beta.md" in paths(engine, "banana", since="3d", now=NOW)


def test_bad_time_bound_is_invalid_input(engine: Engine) -> None:
    error = invalid(engine, "banana", since="next tuesday-ish")
    assert error.code in {"INVALID_INPUT", "VALIDATION"}
    assert "next tuesday-ish" in error.message


BOTH = ["kubernetes", "banana"]  # alpha.md and code/hello.py; beta.md and gamma.md


def test_tag_filters(engine: Engine) -> None:
    assert union(engine, BOTH, tags_any=["roadmap"]) == {"alpha.md", "gamma.md"}
    assert union(engine, BOTH, tags_any=["ROADMAP", "nothing"]) == {"alpha.md", "gamma.md"}
    assert union(engine, BOTH, tags_all=["#Roadmap", "project"]) == {"alpha.md"}
    assert union(engine, BOTH, tags_all=["roadmap", "missing"]) == set()


def test_category_author_and_exclude_filters(engine: Engine) -> None:
    assert union(engine, BOTH, categories=["Decision"]) == {"gamma.md"}  # frontmatter type
    assert union(engine, BOTH, categories=["meeting"]) == {"alpha.md"}  # categories list
    assert union(engine, BOTH, author="SMITH") == {"gamma.md"}
    assert "beta.md" not in paths(engine, "banana", exclude=["desserts"])
    assert paths(engine, "banana", exclude=["desserts", "decision"]) == []


def test_exclude_terms_with_control_characters_or_no_words(engine: Engine) -> None:
    assert "beta.md" in paths(engine, "banana", exclude=["\x00", "!!!", ""])
    assert "beta.md" not in paths(engine, "banana", exclude=["dess\x00erts", "desserts\n"])


_FILTER_TEXT = st.text(max_size=10)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    exclude=st.lists(_FILTER_TEXT, max_size=3),
    tags=st.lists(_FILTER_TEXT, max_size=3),
    categories=st.lists(_FILTER_TEXT, max_size=2),
    author=_FILTER_TEXT,
    lang=_FILTER_TEXT,
    intent=_FILTER_TEXT,
)
def test_free_text_filters_never_break_the_query(
    engine: Engine,
    exclude: list[str],
    tags: list[str],
    categories: list[str],
    author: str,
    lang: str,
    intent: str,
) -> None:
    result = run(
        engine,
        "banana",
        exclude=exclude,
        tags_any=tags,
        tags_all=tags,
        categories=categories,
        author=author,
        lang=lang,
        intent=intent,
    )
    assert set(paths(engine, "banana")) >= {r["source"]["relPath"] for r in result["results"]}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(since=st.text(max_size=24), until=st.text(max_size=24))
def test_any_time_bound_filters_or_is_rejected(engine: Engine, since: str, until: str) -> None:
    try:
        run(engine, "banana", since=since or None, until=until or None, now=NOW)
    except GnoError as error:
        assert error.code == "INVALID_INPUT"


def test_lang_filter_uses_collection_language_hint(engine: Engine) -> None:
    assert "anleitung.md" in paths(engine, "kubernetes", lang="de")
    assert "anleitung.md" not in paths(engine, "kubernetes", lang="fr")
    # Documents without a hint are never excluded by a language.
    assert "alpha.md" in paths(engine, "kubernetes", lang="fr")


@pytest.mark.parametrize(
    ("options", "field"),
    [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"min_score": 1.5}, "minScore")],
)
def test_out_of_range_options(engine: Engine, options: dict[str, Any], field: str) -> None:
    error = invalid(engine, "banana", **options)
    assert error.code == "INVALID_INPUT" and field in error.message


# ---------------------------------------------------------------------------
# Result shape
# ---------------------------------------------------------------------------


def test_results_validate_against_search_results_schema(
    engine: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    plain = run(engine, "kubernetes")
    schema_check("search-results", plain)
    assert plain["meta"] == {"query": "kubernetes", "mode": "bm25", "totalResults": 3}
    filtered = run(
        engine,
        "latest kubernetes",
        collection="notes",
        min_score=0.0,
        lang="en",
        intent="rollout planning",
        exclude=["zzz"],
        since="2000-01-01",
        until="now",
        categories=["meeting"],
        author="jane",
        tags_all=["project"],
        tags_any=["roadmap", "planning"],
    )
    schema_check("search-results", filtered)
    meta = filtered["meta"]
    assert meta["collection"] == "notes" and meta["tagsAny"] == ["roadmap", "planning"]
    assert meta["intent"] == "rollout planning" and meta["since"] == "2000-01-01T00:00:00.000Z"
    (hit,) = filtered["results"]
    assert hit["uri"] == "gno://notes/alpha.md"
    schema_check("search-results", run(engine, "quokka OR narwhal"))
    schema_check("search-results", run(engine, "nothing-matches-this"))


def test_hit_fields(engine: Engine) -> None:
    (hit,) = run(engine, "narwhal")["results"]
    assert hit["uri"] == "gno://notes/unicode/caf%C3%A9%20%C3%BCn%C3%AF.md"
    assert hit["title"] == "Unicode Name"
    assert hit["source"]["relPath"] == "unicode/café ünï.md"
    assert hit["source"]["absPath"].endswith("/unicode/café ünï.md")
    assert hit["source"]["mime"] == "text/markdown" and hit["source"]["ext"] == ".md"
    assert hit["docid"].startswith("#") and len(hit["docid"]) == 9


# ---------------------------------------------------------------------------
# Retrieval quality on the shared multilingual fixture corpus
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_gno_evals_queries_find_their_relevant_documents(
    gno_evals: Path, tmp_path: Path, backend: str
) -> None:
    queries = json.loads((gno_evals.parent / "queries.json").read_text("utf-8"))
    choose_backend(tmp_path / "c", backend)
    with Engine.open(dirs=Dirs(tmp_path / "c", tmp_path / "d", tmp_path / "k")) as evals:
        evals.collections.add(str(gno_evals), name="evals")
        (report,) = evals.sync()
        assert report.added == 9 and report.errors == []
        top1 = top5 = 0
        for case in queries:
            found = paths(evals, case["query"], limit=5)
            relevant = set(case["relevantDocs"])
            top1 += bool(found) and found[0] in relevant
            top5 += bool(relevant & set(found))
    assert top5 == len(queries)
    assert top1 >= len(queries) - 2
