"""Facets: the separate things a goal asks about, and whether a passage speaks to one.

Coverage is reported per facet, so an agent sees which parts of its request
the evidence answers and which it does not. Facets come from the words the
engine actually searched (the query and any ``term`` entries), read through
the same lexical grammar as retrieval: quoted or hyphen-joined phrases stay
whole, negated words are not facets, and filler words are dropped.

A passage speaks to a facet when the full-text index says its chunk matches
the facet (:func:`facet_expression`, so stemming and folding are exactly the
index's) or when :class:`FacetMatcher` finds it in the passage or its title:
letter case and diacritics folded, a single word matched as a word prefix
(``auth`` covers ``authentication``), a trailing plural ``s`` ignored.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.errors import GnoError

MAX_FACETS: Final = 128
MAX_FACET_CHARS: Final = 512

# Function words that carry no topic of their own; a goal made only of these
# has no facets and its coverage is trivially complete.
_STOP_WORD_LINES: Final = (
    "a about after all also an and any are as at be been before being between both but by",
    "can could did do does doing for from had has have how i if in into is it its itself",
    "me more most my no nor not of off on or other our out over own same she should so",
    "some such than that the their them then there these they this those through to too",
    "under until up very was we were what when where which while who whom why will with",
    "would you your compare comparison find versus vs",
)
STOP_WORDS: Final = frozenset(word for line in _STOP_WORD_LINES for word in line.split())

_WORD: Final = re.compile(r"[^\W_]+")


def _fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text`` (NFKD, marks dropped, casefolded)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def fold_words(text: str) -> list[str]:
    return _WORD.findall(_fold(text))


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def derive_facets(query: str, term_texts: Sequence[str] = ()) -> tuple[str, ...]:
    """Requested facets of a search: its phrases and topic words, sorted, at most 128."""
    found: dict[str, None] = {}
    for text in (query, *term_texts):
        try:
            parsed = parse_query(text)
        except GnoError:
            continue
        for phrase in parsed.phrases:
            found.setdefault(phrase[:MAX_FACET_CHARS], None)
        for term in parsed.positive_terms:
            if len(term) > 1 and term not in STOP_WORDS:
                found.setdefault(term[:MAX_FACET_CHARS], None)
    return tuple(sorted(list(found)[:MAX_FACETS]))


def facet_expression(facet: str) -> str | None:
    """The FTS5 expression that finds ``facet``: a prefix term, or an exact phrase."""
    text = f'"{facet}"' if " " in facet else facet
    try:
        return parse_query(text).any_match
    except GnoError:
        return None


class FacetMatcher:
    """Answers "which requested facets does this text speak to?" for many passages."""

    __slots__ = ("_plans",)

    def __init__(self, facets: Sequence[str]) -> None:
        self._plans = [(facet, tuple(fold_words(facet))) for facet in facets]

    def matches(self, text: str) -> tuple[str, ...]:
        tokens = fold_words(text)
        vocabulary = set(tokens)
        hits = []
        for facet, words in self._plans:
            if not words:
                continue
            if len(words) == 1:
                stem = _singular(words[0])
                if stem in vocabulary or any(token.startswith(stem) for token in vocabulary):
                    hits.append(facet)
            elif _contains_run(tokens, words):
                hits.append(facet)
        return tuple(hits)


def _contains_run(tokens: Sequence[str], words: Sequence[str]) -> bool:
    width = len(words)
    first = words[0]
    return any(
        tokens[i] == first and tuple(tokens[i : i + width]) == tuple(words)
        for i in range(len(tokens) - width + 1)
    )
