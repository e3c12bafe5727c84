"""Lexical query grammar: turn what a person typed into a safe FTS5 MATCH string.

People type search boxes, not FTS5. Handing their text to ``MATCH`` directly
lets a stray ``"``, ``(``, ``:`` or an upper-case ``NOT`` become a syntax
error or, worse, silently change the meaning of the query. This module owns
the small, deliberate grammar that sits in between:

* plain words become prefix terms (``auth`` finds ``authentication``);
* ``"quoted text"`` is an exact phrase;
* a word glued together by punctuation (``real-time``, ``gpt-4``,
  ``DEC-0054``, ``title:foo``, ``node.js``) becomes an exact phrase of its
  parts, because the index tokenizer splits those characters the same way;
* ``-word`` / ``-"a phrase"`` excludes, but only next to something to find;
* every user word, including ``AND``, ``OR``, ``NOT`` and ``NEAR``, is emitted
  inside double quotes, so nothing typed can act as an FTS5 operator or a
  column filter.

Inside those quotes the text goes to FTS5 as typed (minus control
characters), so FTS5's own tokenizer, the one that built the index, decides
where words break and how letter case folds. Python's Unicode tables are newer
than SQLite's; splitting or lower-casing here would make some scripts
unfindable. The Python-side word split only decides "term or phrase?",
"anything searchable at all?", and the normalised words reported back.

Everything here is a pure function of the input string, so it is cheap to
fuzz against a real FTS5 table, and the parse of a recently seen query is
kept (agents repeat queries; the parse is a fifth of a small search's Python).
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from gno_trio.errors import GnoError

__all__ = [
    "RECENCY_WORDS",
    "LexicalQuery",
    "QueryUnit",
    "fts_quote",
    "parse_query",
    "wants_recency",
]

# Words that ask for newest-first ordering of the results.
RECENCY_WORDS = frozenset({"latest", "newest", "recent"})

# Every code point ``str.splitlines`` breaks on: a query is one line, and a
# line break smuggled in through any of them is refused the same way.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")

_ERROR_PREFIX = "Invalid search query: "

_EDGE_TRIM = string.punctuation + string.whitespace
# Unicode's control characters (category Cc): C0, DEL and C1.
_CONTROL_TO_SPACE = {code: " " for code in (*range(0x20), *range(0x7F, 0xA0))}


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """A parsed query, ready to bind as the parameter of ``... MATCH ?``.

    ``match`` requires every positive term and phrase and excludes every
    negative one. ``any_match`` is the looser "at least one positive" form,
    for candidate searches that rank rather than filter.
    """

    match: str
    positive_terms: tuple[str, ...]
    phrases: tuple[str, ...]
    negative_terms: tuple[str, ...]
    any_match: str
    units: tuple[QueryUnit, ...] = ()
    """Every term and phrase as typed, for an index other than FTS5 to analyze itself."""


@dataclass(frozen=True, slots=True)
class QueryUnit:
    """One prefix term or exact phrase of a query, its text as typed (edges tidied)."""

    text: str
    is_phrase: bool
    negated: bool


@dataclass(frozen=True, slots=True)
class _Clause:
    """One searchable unit: a prefix term or an exact phrase, maybe negated.

    ``source`` is the text handed to FTS5 inside double quotes; ``normalised``
    is the lower-cased, space-separated word form reported to callers.
    """

    source: str
    normalised: str
    is_phrase: bool
    negated: bool

    def to_fts(self) -> str:
        quoted = fts_quote(self.source)
        return quoted if self.is_phrase else quoted + "*"


def fts_quote(text: str) -> str:
    """``text`` as an FTS5 string literal: one term or phrase, never an operator."""
    return '"' + text.replace('"', '""') + '"'


def _invalid(reason: str) -> GnoError:
    return GnoError("INVALID_INPUT", _ERROR_PREFIX + reason)


def _is_word_char(char: str) -> bool:
    """Letters, numbers and combining marks build words; so do ``'`` and ``_``.

    Combining marks stay attached so a decomposed accent (``e`` + U+0301)
    does not split a word in two; the index folds diacritics anyway.
    """
    return unicodedata.category(char)[0] in "LNM" or char in "'_"


def _is_searchable_char(char: str) -> bool:
    """Only letters and numbers make a word worth searching for."""
    return unicodedata.category(char)[0] in "LN"


# In ASCII the word characters are letters, digits, ``'`` and ``_``, and the
# searchable ones letters and digits: the same sets, found by one regex.
_ASCII_WORD = re.compile(r"[A-Za-z0-9'_]+")
_ASCII_SEARCHABLE = re.compile(r"[A-Za-z0-9]")


def _words(text: str) -> list[str]:
    """Cut ``text`` into searchable words, keeping their letter case.

    Anything that is not a word character separates words, which mirrors how
    the index tokenizer splits ``real-time`` or ``title:foo``. Apostrophes
    are kept inside a word (``don't``) but dropped from its edges, where they
    are quotation marks rather than spelling.
    """
    if text.isascii():
        stripped = (found.strip("'") for found in _ASCII_WORD.findall(text))
        return [word for word in stripped if _ASCII_SEARCHABLE.search(word)]
    return _unicode_words(text)


def _unicode_words(text: str) -> list[str]:
    """:func:`_words`, character by character by Unicode category."""
    words: list[str] = []
    current: list[str] = []
    for char in text + " ":
        if _is_word_char(char):
            current.append(char)
            continue
        if current:
            word = "".join(current).strip("'")
            if any(_is_searchable_char(c) for c in word):
                words.append(word)
            current = []
    return words


def _scan(query: str) -> Iterator[tuple[bool, bool, str]]:
    """Yield ``(negated, quoted, raw_text)`` for each whitespace-separated item.

    A ``-`` negates only when it is glued to what follows and is not itself
    followed by another ``-``, so ``a - b`` and ``--verbose`` stay harmless.
    A ``"`` always opens a phrase, even mid-word, and must be closed.
    """
    index = 0
    length = len(query)
    while index < length:
        char = query[index]
        if char.isspace():
            index += 1
            continue
        negated = False
        if char == "-" and index + 1 < length:
            following = query[index + 1]
            if not following.isspace() and following != "-":
                negated = True
                index += 1
                char = following
        if char == '"':
            closing = query.find('"', index + 1)
            if closing < 0:
                raise _invalid(f"unmatched double quote at character {index + 1}")
            yield negated, True, query[index + 1 : closing]
            index = closing + 1
            continue
        end = index
        while end < length and not query[end].isspace() and query[end] != '"':
            end += 1
        yield negated, False, query[index:end]
        index = end


def _fts_source(raw: str) -> str:
    """The text to quote for FTS5: control characters blanked, edges tidied.

    FTS5 stops reading a string at a NUL, so control characters become
    spaces. ASCII punctuation at the edges (``(group)``, ``c++``, ``--flag``)
    would be dropped by the tokenizer anyway; trimming it keeps the expression
    readable in logs. Non-ASCII characters are left for the tokenizer.
    """
    return raw.translate(_CONTROL_TO_SPACE).strip(_EDGE_TRIM)


def _clauses(query: str) -> list[_Clause]:
    clauses: list[_Clause] = []
    for negated, quoted, raw in _scan(query):
        words = _words(raw)
        if not words:
            continue
        normalised = " ".join(words).lower()
        is_phrase = quoted or len(words) > 1
        clauses.append(_Clause(_fts_source(raw), normalised, is_phrase, negated))
    return clauses


def _unique(items: list[_Clause]) -> list[_Clause]:
    """Drop repeats, comparing case-insensitively: ``foo FOO`` is one term."""
    first_seen: dict[tuple[str, bool], _Clause] = {}
    for clause in items:
        first_seen.setdefault((clause.normalised, clause.is_phrase), clause)
    return list(first_seen.values())


def _joined(clauses: list[_Clause], operator: str) -> str:
    return f" {operator} ".join(c.to_fts() for c in clauses)


def _grouped(expression: str, clause_count: int) -> str:
    return f"({expression})" if clause_count > 1 else expression


@functools.lru_cache(maxsize=512)
def parse_query(query: str) -> LexicalQuery:
    """Parse a one-line search query into FTS5 expressions.

    Raises ``GnoError("INVALID_INPUT", "Invalid search query: <reason>")``
    for a line break, an empty query, an unmatched quote, a query that only
    excludes, or a query with nothing searchable in it.
    """
    if any(char in _LINE_BREAKS for char in query):
        raise _invalid("the query must be a single line (it contains a line break)")
    if not query.strip():
        raise _invalid("the query is empty")

    clauses = _clauses(query)
    positives = _unique([c for c in clauses if not c.negated])
    negatives = _unique([c for c in clauses if c.negated])
    if not positives:
        if negatives:
            raise _invalid("a negated term (-term) needs at least one positive term to search for")
        raise _invalid("no searchable terms (a term needs at least one letter or digit)")

    required = _joined(positives, "AND")
    if negatives:
        # One ``NOT (a OR b ...)`` rather than a ``NOT a NOT b ...`` chain: the
        # expression stays flat however many exclusions are typed.
        excluded = _grouped(_joined(negatives, "OR"), len(negatives))
        required = f"{_grouped(required, len(positives))} NOT {excluded}"

    return LexicalQuery(
        match=required,
        positive_terms=tuple(c.normalised for c in positives if not c.is_phrase),
        phrases=tuple(c.normalised for c in positives if c.is_phrase),
        negative_terms=tuple(c.normalised for c in negatives),
        any_match=_joined(positives, "OR"),
        units=tuple(QueryUnit(c.source, c.is_phrase, c.negated) for c in (*positives, *negatives)),
    )


@functools.lru_cache(maxsize=512)
def wants_recency(query: str) -> bool:
    """True when the query asks for the newest material (``latest notes``).

    Never raises: it is a hint for ordering, asked of any text.
    """
    return any(word.lower() in RECENCY_WORDS for word in _words(query))
