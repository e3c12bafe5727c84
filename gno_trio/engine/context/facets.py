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

import itertools
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
    # What a goal asks the reader to do rather than what it is about.
    "describe describes explain explains help know please show shows summarise summarize",
    "tell understand want",
)
STOP_WORDS: Final = frozenset(word for line in _STOP_WORD_LINES for word in line.split())

_WORD: Final = re.compile(r"[^\W_]+")
# How far apart (in words) two neighbouring goal words may stand and still count as a pair.
PAIR_DISTANCE: Final = 3


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


def retrieval_line(query: str) -> str:
    """The line searched for a goal: its facets and exclusions, without the filler.

    A goal is prose ("explain how CMake picks the C++ standard flag"); its
    function words and one-letter fragments are prefix terms to the index
    (``the*``, ``c*``) that match almost everything and drown the topic words
    in the document ranking. A goal with no facet is searched as written.
    """
    facets = derive_facets(query)
    if not facets:
        return query
    try:
        negatives = parse_query(query).negative_terms
    except GnoError:
        negatives = ()
    quoted = [f'"{facet}"' if " " in facet else facet for facet in facets]
    excluded = [f'-"{term}"' if " " in term else f"-{term}" for term in negatives]
    line = " ".join([*quoted, *excluded])
    try:
        parse_query(line)
    except GnoError:
        return query
    return line


def facet_expression(facet: str) -> str | None:
    """The FTS5 expression that finds ``facet``: a prefix term, or an exact phrase."""
    text = f'"{facet}"' if " " in facet else facet
    try:
        return parse_query(text).any_match
    except GnoError:
        return None


def neighbour_pairs(query: str, facets: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Facet words that stand next to each other in the goal, in its order.

    "how CMake picks the C++ standard flag" gives (cmake, picks), (picks,
    standard) and (standard, flag): text where such words stand close
    together is about the goal's thing, not just its words.
    """
    try:
        terms = parse_query(query).positive_terms
    except GnoError:
        return ()
    wanted = set(facets)
    ordered = [term for term in terms if term in wanted and " " not in term]
    return tuple(dict.fromkeys(itertools.pairwise(ordered)))


class FacetMatcher:
    """Counts, for many texts, how often each facet (and each neighbour pair) occurs.

    A one-word facet counts every word it starts (its trailing plural ``s``
    ignored); a phrase counts its exact runs of words; a pair counts the
    places where its two words stand at most :data:`PAIR_DISTANCE` words
    apart, in either order. Counts come facets first, then pairs.
    """

    __slots__ = ("_pairs", "_plans", "_stems", "_zero")

    def __init__(self, facets: Sequence[str], pairs: Sequence[tuple[str, str]] = ()) -> None:
        self._plans = [(facet, tuple(fold_words(facet))) for facet in facets]
        index = {facet: position for position, facet in enumerate(facets)}
        self._pairs = [
            (index[a], index[b]) for a, b in pairs if a in index and b in index and a != b
        ]
        # Any text a facet occurs in contains its first word's stem: most
        # lines are ruled out by a substring test before they are split.
        self._stems = tuple(_singular(words[0]) for _, words in self._plans if words)
        self._zero = (0,) * self.width

    @property
    def facets(self) -> tuple[str, ...]:
        return tuple(facet for facet, _ in self._plans)

    @property
    def width(self) -> int:
        return len(self._plans) + len(self._pairs)

    def counts(self, text: str) -> tuple[int, ...]:
        folded = _fold(text)
        if not any(stem in folded for stem in self._stems):
            return self._zero
        tokens = _WORD.findall(folded)
        found = []
        places: list[list[int]] = []
        for _, words in self._plans:
            if not words:
                hits: list[int] = []
                found.append(0)
            elif len(words) == 1:
                stem = _singular(words[0])
                hits = [i for i, token in enumerate(tokens) if token.startswith(stem)]
                found.append(len(hits))
            else:
                hits = []
                found.append(_count_runs(tokens, words))
            places.append(hits)
        for a, b in self._pairs:
            others = places[b]
            found.append(
                sum(1 for i in places[a] if any(0 < abs(i - j) <= PAIR_DISTANCE for j in others))
            )
        return tuple(found)

    def matches(self, text: str) -> tuple[str, ...]:
        counted = self.counts(text)
        plans = self._plans
        return tuple(facet for (facet, _), count in zip(plans, counted, strict=False) if count)


def _count_runs(tokens: Sequence[str], words: Sequence[str]) -> int:
    width = len(words)
    first = words[0]
    return sum(
        1
        for i in range(len(tokens) - width + 1)
        if tokens[i] == first and tuple(tokens[i : i + width]) == tuple(words)
    )
