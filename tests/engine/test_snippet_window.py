"""The snippet worked out in Python is SQLite FTS5's own ``snippet()``, to the character.

The in-memory chunk index cuts a hit's snippet from where the query's
phrases occur (engine/search/snippetwindow.py) instead of asking FTS5. A
user sees that text, so it is held here to SQLite itself: thousands of
seeded texts (sentences ended by ``.`` and ``:``, repeated words, stems,
leading and trailing punctuation, pages long enough for hundreds of
matches) and OR-of-phrase queries (repeated phrases, several words, prefix
phrases), each cut at several widths both ways. The numpy scoring of a
chunk with many matches must pick the window the plain loop picks.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator

import pytest

from gno_trio.engine.search import snippetwindow

TOKENIZE = "porter unicode61 remove_diacritics 2"
WIDTHS = (1, 2, 8, 16, 32)
ROWS = 1800
MATCHED_AT_LEAST = 1500
_WORDS = re.compile(r"[^\W_]+")

VOCABULARY = [
    "tool", "tools", "call", "calling", "called", "list", "server", "servers", "run",
    "runs", "running", "runner", "data", "alpha", "beta", "gamma", "x", "a", "v2",
    "request", "requests", "resource", "prompt", "ponies", "caresses", "the", "of",
]  # fmt: skip
SEPARATORS = [" "] * 12 + [
    ", ", ". ", ".\n", ": ", ":\n\n", ".\t", ". ", ";", " - ", "\n", "\n\n", ".", ":",
    "..", ". . ", " (", ") ", "_", "'", ":  ", ".\r\n", " `", "` ", "?", "! ", " / ",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    """Words of a few kinds of page: short notes, paragraphs, long repetitive pages."""
    roll = rng.random()
    if roll < 0.65:
        count, words = rng.randint(1, 60), VOCABULARY
    elif roll < 0.85:
        count, words = rng.randint(60, 220), VOCABULARY
    else:  # a long page of few words: hundreds of instances of one phrase
        count, words = rng.randint(220, 700), rng.sample(VOCABULARY, rng.randint(2, 5))
    parts = [rng.choice(SEPARATORS).lstrip(" ")] if rng.random() < 0.2 else []
    for number in range(count):
        if number:
            parts.append(rng.choice(SEPARATORS))
        parts.append(rng.choice(words))
    if rng.random() < 0.5:
        parts.append(rng.choice([".", ". ", ":", "\n", " ", "...", ":\n"]))
    return "".join(parts)


def _phrase(rng: random.Random, text: str) -> tuple[str, bool]:
    """A phrase (its words, whether its last word is a prefix), mostly from ``text``."""
    size = rng.choice([1, 1, 1, 2, 2, 3])
    words = _WORDS.findall(text)
    if words and rng.random() < 0.8:
        start = rng.randrange(len(words))
        chosen = words[start : start + size]
    else:
        chosen = [rng.choice(VOCABULARY) for _ in range(size)]
    prefix = rng.random() < 0.2
    if prefix:
        chosen[-1] = chosen[-1][: rng.randint(1, max(1, len(chosen[-1]) - 1))]
    return " ".join(chosen), prefix


def _query(rng: random.Random, text: str) -> list[tuple[str, bool]]:
    phrases = [_phrase(rng, text) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.15:
        phrases.insert(rng.randrange(len(phrases) + 1), rng.choice(phrases))
    return phrases


def _match(phrases: list[tuple[str, bool]]) -> str:
    return " OR ".join(f'"{text}"' + ("*" if prefix else "") for text, prefix in phrases)


class Fts5:
    """An in-memory FTS5 table with its instance vocabulary, and a second table that
    tells how a phrase is tokenized (as the query parser tokenizes it)."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        for name in ("t", "said"):
            self.conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(x, tokenize = '{TOKENIZE}')")
            self.conn.execute(f"CREATE VIRTUAL TABLE {name}_v USING fts5vocab({name}, instance)")
        self._said: dict[str, list[str]] = {}

    def terms(self) -> dict[int, list[str]]:
        """Every row's tokens, by offset."""
        found: dict[int, dict[int, str]] = {}
        for doc, offset, term in self.conn.execute("SELECT doc, offset, term FROM t_v"):
            found.setdefault(int(doc), {})[int(offset)] = str(term)
        return {doc: [terms[n] for n in range(len(terms))] for doc, terms in found.items()}

    def tokens(self, phrase: str) -> list[str]:
        """The tokens of ``phrase``, by offset."""
        if phrase not in self._said:
            rowid = len(self._said) + 1
            self.conn.execute("INSERT INTO said(rowid, x) VALUES (?, ?)", (rowid, phrase))
            rows = self.conn.execute("SELECT offset, term FROM said_v WHERE doc = ?", (rowid,))
            self._said[phrase] = [str(term) for _, term in sorted(rows)]
        return self._said[phrase]

    def snippet(self, rowid: int, match: str, width: int) -> str | None:
        row = self.conn.execute(
            "SELECT snippet(t, 0, '<mark>', '</mark>', '...', ?) FROM t "
            "WHERE t MATCH ? AND rowid = ?",
            (width, match, rowid),
        ).fetchone()
        return None if row is None else str(row[0])


@pytest.fixture
def fts5() -> Iterator[Fts5]:
    table = Fts5()
    try:
        yield table
    finally:
        table.conn.close()


def _instances(
    terms: list[str], phrases: list[tuple[list[str], bool]]
) -> list[snippetwindow.Instance]:
    """FTS5's phrase instances in a row: (token offset, phrase number), in its order."""
    found = []
    for offset in range(len(terms)):
        for number, (tokens, prefix) in enumerate(phrases):
            here = terms[offset : offset + len(tokens)]
            if len(here) < len(tokens) or here[:-1] != tokens[:-1]:
                continue
            last, wanted = here[-1], tokens[-1]
            if last == wanted or (prefix and last.startswith(wanted)):
                found.append((offset, number))
    return found


def test_the_self_check_agrees_with_this_sqlite() -> None:
    assert snippetwindow.agrees_with_sqlite(TOKENIZE)


def test_cut_gives_sqlites_snippet_on_thousands_of_random_rows(fts5: Fts5) -> None:
    rng = random.Random(5_150)
    texts = [_text(rng) for _ in range(ROWS)]
    fts5.conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(texts, start=1)))
    every_row = fts5.terms()
    matched = many = sentences_after_start = 0
    for rowid, text in enumerate(texts, start=1):
        phrases = _query(rng, text)
        tokenized = [(fts5.tokens(phrase), prefix) for phrase, prefix in phrases]
        if any(not tokens for tokens, _ in tokenized):
            continue
        match = _match(phrases)
        terms = every_row.get(rowid, [])
        instances = _instances(terms, tokenized)
        spans = [edge for found in _WORDS.finditer(text) for edge in found.span()]
        assert len(spans) // 2 == len(terms), text
        sentences = snippetwindow.sentence_starts(text, spans)
        sizes = [len(tokens) for tokens, _ in tokenized]
        for width in WIDTHS:
            expected = fts5.snippet(rowid, match, width)
            assert (expected is None) == (not instances), (text, match)
            if expected is None:
                break
            marks = snippetwindow.Marks("<mark>", "</mark>", "...", width)
            got = snippetwindow.cut(text, spans, sentences, instances, sizes, marks)
            assert got == expected, (text, match, width)
        else:
            matched += 1
            many += len(instances) > snippetwindow.MANY_INSTANCES
            sentences_after_start += len(sentences) > 1
    assert matched >= MATCHED_AT_LEAST
    assert many >= 50, "rows with many instances (the numpy scoring)"
    assert sentences_after_start >= matched // 3


def _random_case(rng: random.Random) -> tuple[int, list[int], list[tuple[int, int]], list[int]]:
    """Tokens, sentence starts, sorted instances and phrase sizes, as a chunk gives them."""
    tokens = rng.randint(1, 900)
    sentences = sorted({0} | {rng.randrange(tokens) for _ in range(rng.randint(0, tokens // 4))})
    sizes = [rng.randint(1, 3) for _ in range(rng.randint(1, 4))]
    wanted = rng.randint(1, 2 * snippetwindow.MANY_INSTANCES + 100)
    pairs: set[tuple[int, int]] = set()
    crowd = rng.random() < 0.3  # the instances bunched in a few places
    for _ in range(wanted):
        phrase = rng.randrange(len(sizes))
        if tokens < sizes[phrase]:
            continue
        highest = tokens - sizes[phrase]
        offset = rng.randint(0, highest)
        if crowd:
            offset = min(highest, rng.choice([0, highest // 3, highest]) + rng.randint(0, 20))
        pairs.add((offset, phrase))
    if not pairs:
        pairs.add((0, 0))
        sizes[0] = 1
    return tokens, sentences, sorted(pairs), sizes


def test_numpy_scoring_picks_the_window_the_loop_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(77)
    cases = [_random_case(rng) for _ in range(1500)]
    many = snippetwindow.MANY_INSTANCES
    monkeypatch.setattr(snippetwindow, "MANY_INSTANCES", 10**9)  # the loop, always
    checked: dict[str, int] = {"many": 0, "sentence": 0}
    for tokens, sentences, instances, sizes in cases:
        for width in (1, 3, 8, 16, 32, 64):
            looped = snippetwindow.best_start(tokens, sentences, instances, sizes, width)
            arrays = snippetwindow._best_start_arrays(tokens, sentences, instances, sizes, width)
            assert arrays == looped, (tokens, sentences, instances, sizes, width)
            checked["sentence"] += looped in sentences and looped > 0
        checked["many"] += len(instances) > many
    assert checked["many"] >= 300
    assert checked["sentence"] >= 300
