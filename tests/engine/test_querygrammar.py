"""The lexical query grammar: what a typed query finds, and that it never breaks FTS5."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gno_trio.engine.search import querygrammar
from gno_trio.engine.search.querygrammar import (
    LexicalQuery,
    parse_query,
    wants_recency,
)
from gno_trio.errors import GnoError

FTS_TABLE = (
    "CREATE VIRTUAL TABLE t USING fts5(filepath, title, body, "
    "tokenize='porter unicode61 remove_diacritics 2')"
)


@pytest.fixture
def fts() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute(FTS_TABLE)
    yield connection
    connection.close()


def _matching_paths(connection: sqlite3.Connection, expression: str) -> set[str]:
    rows = connection.execute("SELECT filepath FROM t WHERE t MATCH ?", (expression,))
    return {row[0] for row in rows}


def _add(connection: sqlite3.Connection, path: str, body: str, title: str = "") -> None:
    connection.execute("INSERT INTO t VALUES (?, ?, ?)", (path, title, body))


# --- the shape of what parse_query returns -------------------------------------------------
# The MATCH text keeps the user's spelling inside the quotes (FTS5's tokenizer
# splits and case-folds it exactly as it did the index); the reported words are
# normalised: split on punctuation, lower-cased.

PARSED_EXAMPLES = [
    # query, match, positive_terms, phrases, negative_terms
    ("auth", '"auth"*', ("auth",), (), ()),
    ("Auth Token", '"Auth"* AND "Token"*', ("auth", "token"), (), ()),
    ('"exact phrase"', '"exact phrase"', (), ("exact phrase",), ()),
    ('"Single"', '"Single"', (), ("single",), ()),
    ("real-time", '"real-time"', (), ("real time",), ()),
    ("gpt-4", '"gpt-4"', (), ("gpt 4",), ()),
    ("DEC-0054", '"DEC-0054"', (), ("dec 0054",), ()),
    ("c++", '"c"*', ("c",), (), ()),
    ("title:foo", '"title:foo"', (), ("title foo",), ()),
    ("node.js", '"node.js"', (), ("node js",), ()),
    ("don't", '"don\'t"*', ("don't",), (), ()),
    ("'quoted'", '"quoted"*', ("quoted",), (), ()),
    ("snake_case", '"snake_case"*', ("snake_case",), (), ()),
    ("Café ÜBER", '"Café"* AND "ÜBER"*', ("café", "über"), (), ()),
    ("datab*", '"datab"*', ("datab",), (), ()),
    ("cats OR dogs", '"cats"* AND "OR"* AND "dogs"*', ("cats", "or", "dogs"), (), ()),
    ("NOT NEAR AND", '"NOT"* AND "NEAR"* AND "AND"*', ("not", "near", "and"), (), ()),
    ("foo foo FOO", '"foo"*', ("foo",), (), ()),
    ("foo -bar", '"foo"* NOT "bar"*', ("foo",), (), ("bar",)),
    (
        'foo baz -bar -"old stuff"',
        '("foo"* AND "baz"*) NOT ("bar"* OR "old stuff")',
        ("foo", "baz"),
        (),
        ("bar", "old stuff"),
    ),
    ("foo -real-time", '"foo"* NOT "real-time"', ("foo",), (), ("real time",)),
    ("foo - bar", '"foo"* AND "bar"*', ("foo", "bar"), (), ()),
    ("--verbose", '"verbose"*', ("verbose",), (), ()),
    ('say"hello world"', '"say"* AND "hello world"', ("say",), ("hello world",), ()),
    ("(group) ^boost {col}", '"group"* AND "boost"* AND "col"*', ("group", "boost", "col"), (), ()),
    ('"" term', '"term"*', ("term",), (), ()),
    ("tab\tseparated", '"tab"* AND "separated"*', ("tab", "separated"), (), ()),
    ("nul\x00byte", '"nul byte"', (), ("nul byte",), ()),
]


@pytest.mark.parametrize(
    ("query", "match", "positive_terms", "phrases", "negative_terms"), PARSED_EXAMPLES
)
def test_parse_examples(
    query: str,
    match: str,
    positive_terms: tuple[str, ...],
    phrases: tuple[str, ...],
    negative_terms: tuple[str, ...],
) -> None:
    parsed = parse_query(query)
    assert parsed.match == match
    assert parsed.positive_terms == positive_terms
    assert parsed.phrases == phrases
    assert parsed.negative_terms == negative_terms


def test_any_match_ors_every_positive_and_ignores_negatives() -> None:
    parsed = parse_query('alpha "beta gamma" -delta')
    assert parsed.any_match == '"alpha"* OR "beta gamma"'


ERROR_EXAMPLES = [
    ("", "the query is empty"),
    ("   \t ", "the query is empty"),
    ("foo\nbar", "single line"),
    ("foo\r", "single line"),
    ("foo\u2028bar", "single line"),
    ('"unclosed phrase', "unmatched double quote at character 1"),
    ('ok "a" "b', "unmatched double quote at character 8"),
    ("-foo", "negated term (-term) needs at least one positive term"),
    ('-foo -"bar baz"', "negated term (-term) needs at least one positive term"),
    ("!!! -foo", "negated term (-term) needs at least one positive term"),
    ("!!! ... ***", "no searchable terms"),
    ('-- "" ( )', "no searchable terms"),
    ("'_'", "no searchable terms"),
]


@pytest.mark.parametrize(("query", "reason"), ERROR_EXAMPLES)
def test_rejected_queries_say_why(query: str, reason: str) -> None:
    with pytest.raises(GnoError) as caught:
        parse_query(query)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.message.startswith("Invalid search query: ")
    assert reason in caught.value.message


# --- what the expressions find in a real index ---------------------------------------------


def test_plain_terms_are_prefixes(fts: sqlite3.Connection) -> None:
    _add(fts, "auth.md", "Authentication with tokens")
    _add(fts, "other.md", "Nothing to see")
    assert _matching_paths(fts, parse_query("auth tok").match) == {"auth.md"}


def test_quoted_phrase_needs_adjacent_words(fts: sqlite3.Connection) -> None:
    _add(fts, "adjacent.md", "the quick fox jumps")
    _add(fts, "apart.md", "the quick brown fox")
    assert _matching_paths(fts, parse_query('"quick fox"').match) == {"adjacent.md"}


def test_compounds_match_as_phrases(fts: sqlite3.Connection) -> None:
    _add(fts, "hyphen.md", "a real-time system")
    _add(fts, "spaced.md", "a real time system")
    _add(fts, "scattered.md", "time is not real")
    _add(fts, "decision.md", "See DEC-0054 for details")
    assert _matching_paths(fts, parse_query("real-time").match) == {"hyphen.md", "spaced.md"}
    assert _matching_paths(fts, parse_query("dec-0054").match) == {"decision.md"}


def test_negation_excludes_documents(fts: sqlite3.Connection) -> None:
    _add(fts, "keep.md", "python packaging guide")
    _add(fts, "drop.md", "python packaging with legacy setup tools")
    _add(fts, "drop2.md", "python packaging, old stuff")
    parsed = parse_query('python -legacy -"old stuff"')
    assert _matching_paths(fts, parsed.match) == {"keep.md"}


def test_typed_operators_are_plain_words(fts: sqlite3.Connection) -> None:
    _add(fts, "cats.md", "cats only")
    _add(fts, "both.md", "cats or dogs")
    # As an FTS5 operator, OR would have matched cats.md too.
    assert _matching_paths(fts, parse_query("cats OR dogs").match) == {"both.md"}
    _add(fts, "near.md", "near the shore")
    assert _matching_paths(fts, parse_query("NEAR shore").match) == {"near.md"}


def test_column_syntax_is_plain_text(fts: sqlite3.Connection) -> None:
    _add(fts, "titled.md", "nothing relevant here", title="foo")
    _add(fts, "literal.md", "the title: foo appears in the body")
    assert _matching_paths(fts, parse_query("title:foo").match) == {"literal.md"}


def test_any_match_finds_documents_with_one_term(fts: sqlite3.Connection) -> None:
    _add(fts, "one.md", "alpha only")
    _add(fts, "two.md", "alpha and beta")
    _add(fts, "none.md", "gamma")
    parsed = parse_query("alpha beta")
    assert _matching_paths(fts, parsed.match) == {"two.md"}
    assert _matching_paths(fts, parsed.any_match) == {"one.md", "two.md"}


@pytest.mark.parametrize(
    "text",
    [
        "Ꭰ",  # Python lower-cases this Cherokee letter; SQLite's older tables do not
        "zq\ue000zq",  # private use: one token to the index tokenizer
        "zq\u0378zq",  # unassigned code point: also one token to the tokenizer
        "e\u0301clair",  # decomposed accent
    ],
)
def test_scripts_are_split_and_folded_like_the_index(fts: sqlite3.Connection, text: str) -> None:
    _add(fts, "doc.md", f"before {text} after")
    assert _matching_paths(fts, parse_query(text).match) == {"doc.md"}


# --- fuzzing: no input may produce an expression FTS5 rejects ------------------------------

FTS_SYNTAX_PIECES = st.sampled_from(
    [
        "AND",
        "OR",
        "NOT",
        "NEAR",
        "NEAR(a b, 2)",
        "and",
        '"',
        '""',
        "(",
        ")",
        "*",
        ":",
        "^",
        "-",
        "+",
        "title:",
        "filepath:",
        "{title body}:",
        "-x",
        "x-",
        "--",
        "'",
        "_",
        "\x00",
        "\x01",
        "\t",
        "\u0301",
        "\u200b",
        "\ufeff",
        "ß",
        "İ",
        "日本語",
        "🙂",
        "\ue000",
    ]
)

ANY_QUERY = st.one_of(
    st.text(),
    st.lists(st.one_of(FTS_SYNTAX_PIECES, st.text(max_size=6)), max_size=12).map("".join),
    st.lists(st.one_of(FTS_SYNTAX_PIECES, st.text(max_size=6)), max_size=12).map(" ".join),
)

_KNOWN_REASONS = (
    "the query is empty",
    "single line",
    "unmatched double quote",
    "needs at least one positive term",
    "no searchable terms",
)


@pytest.fixture(scope="module")
def fuzz_fts() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute(FTS_TABLE)
    for index, body in enumerate(
        ["the quick brown fox", "NOT AND OR NEAR", "日本語 テキスト", "real-time c++ gpt-4"]
    ):
        _add(connection, f"doc{index}.md", body, title=body.split()[0])
    yield connection
    connection.close()


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=ANY_QUERY)
@example(query='a "b')
@example(query="a\x00b")
@example(query="x " + " ".join(f"-n{i}" for i in range(400)))
@example(query=" ".join(f"t{i}" for i in range(2000)))
@example(query="NEAR(foo bar)")
@example(query="title:foo OR body:bar")
def test_every_query_yields_valid_fts5_or_invalid_input(
    fuzz_fts: sqlite3.Connection, query: str
) -> None:
    try:
        parsed = parse_query(query)
    except GnoError as error:
        assert error.code == "INVALID_INPUT"
        assert error.message.startswith("Invalid search query: ")
        assert any(reason in error.message for reason in _KNOWN_REASONS)
        return
    assert isinstance(parsed, LexicalQuery)
    assert parsed.positive_terms or parsed.phrases
    for expression in (parsed.match, parsed.any_match):
        # Raises sqlite3.OperationalError on any FTS5 syntax error.
        fuzz_fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()


FRIENDLY_CHARS = st.sampled_from(list("abcxyzABCXYZ0179éüßжλ日本Ꭰ\ue000'_.:+-/#@"))
FRIENDLY_WORD = st.text(FRIENDLY_CHARS, min_size=1, max_size=10).filter(
    lambda word: not word.startswith("-")
)
FRIENDLY_ITEM = st.one_of(FRIENDLY_WORD, FRIENDLY_WORD.map(lambda word: f'"{word} {word}"'))


@settings(max_examples=200, deadline=None)
@given(items=st.lists(FRIENDLY_ITEM, min_size=1, max_size=6))
def test_a_query_finds_a_document_made_of_its_own_text(items: list[str]) -> None:
    query = " ".join(items)
    try:
        parsed = parse_query(query)
    except GnoError:
        return
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute(FTS_TABLE)
        _add(connection, "self.md", query)
        _add(connection, "other.md", "mmm ggg www")
        assert _matching_paths(connection, parsed.match) == {"self.md"}
        assert _matching_paths(connection, parsed.any_match) == {"self.md"}
    finally:
        connection.close()


# --- recency intent --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("latest meeting notes", True),
        ("NEWEST release", True),
        ("most-recent decisions", True),
        ('"recent" changes', True),
        ("recently edited", False),
        ("latestness", False),
        ("meeting notes", False),
        ("", False),
    ],
)
def test_recency_words(query: str, expected: bool) -> None:
    assert wants_recency(query) is expected


@given(query=ANY_QUERY)
def test_recency_check_accepts_any_text(query: str) -> None:
    assert isinstance(wants_recency(query), bool)


_ASCII_TEXT = st.text(alphabet=st.characters(max_codepoint=127), max_size=60)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_ASCII_TEXT, st.text(max_size=60)))
@example("don't 'quoted' _under_ it's__ '' 'x")
@example("c++ --flag (group) real-time title:foo")
def test_ascii_queries_are_cut_into_words_as_unicode_categories_cut_them(text: str) -> None:
    """ASCII text takes a regex, other text goes character by character: the words are
    the same either way, and control characters are blanked exactly where Unicode
    says a character is one (category Cc)."""
    assert querygrammar._words(text) == querygrammar._unicode_words(text)
    blanked = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    assert querygrammar._fts_source(text) == blanked.strip(querygrammar._EDGE_TRIM)


def test_every_unicode_control_character_is_blanked() -> None:
    controls = [chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cc"]
    assert querygrammar._fts_source("a" + "".join(controls) + "b") == "a" + " " * 65 + "b"
