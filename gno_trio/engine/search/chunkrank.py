"""A document's best chunk as FTS5's ``bm25()`` over the chunk index picks it, without its cost.

Ranking a document's chunks with ``bm25()`` on the chunk index costs a pass
over the whole index per query phrase: FTS5 counts the chunks holding each
phrase (its inverse document frequency) by walking that phrase's postings,
and a prefix term first merges the postings of every word it begins. On a
large index of common words that is tens of milliseconds per search, to pick
among a handful of chunks.

The same score is computed here from the chunks themselves, loaded in the
search's scratch table (:mod:`~gno_trio.engine.store.scratch_fulltext`):
where each phrase occurs in each chunk (the scratch table's word positions, same tokenizer), each
chunk's length and the index's totals (FTS5's own stored figures). A
phrase's chunk count is only needed when a document's chunks hold two or
more of the phrases (otherwise it scales every score alike and cannot change
the order); it is then counted on the index once per state of the index. The
arithmetic is FTS5's own, in its order, so scores agree to the last bit and
ties fall the same way (chunk id order).

Only the OR-of-phrases expressions the search builds are ranked here; any
other expression, or more chunks than are worth loading, is ranked by FTS5.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from gno_trio.engine.search.keyruns import FloatArray, KeyArray
from gno_trio.engine.search.querygrammar import fts_quote
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.scratch_fulltext import SnippetTable

Span = tuple[int, int]

CHUNK_BUDGET: Final = 48
"""Most chunks loaded to rank here; documents with more are ranked by FTS5 on the index."""
POSTINGS_PER_CHUNK_LOADED: Final = 2000
"""About how many index entries FTS5 walks in the time a chunk takes to load and tokenize."""

BM25_K1: Final = 1.2
BM25_B: Final = 0.75
_PHRASE = re.compile(r'"((?:[^"]|"")*)"(\*?)')
_GLUE = re.compile(r"[\s()]*(?:OR[\s()]*)?")


@dataclass(frozen=True, slots=True)
class Phrase:
    """One quoted FTS5 string of an expression; ``prefix`` when it ends in ``*``."""

    text: str
    prefix: bool

    def fts(self) -> str:
        return fts_quote(self.text) + ("*" if self.prefix else "")


def or_phrases(expression: str) -> list[Phrase] | None:
    """The phrases of an expression that only ORs quoted strings (parentheses allowed).

    None for anything else (AND, NOT, NEAR, a column filter, a bare word).
    """
    phrases: list[Phrase] = []
    position = 0
    for found in _PHRASE.finditer(expression):
        glue = expression[position : found.start()]
        if _GLUE.fullmatch(glue) is None or (phrases and "OR" not in glue):
            return None
        phrases.append(Phrase(found.group(1).replace('""', '"'), bool(found.group(2))))
        position = found.end()
    if not phrases or expression[position:].strip(" ()"):
        return None
    return phrases


def index_totals(conn: Connection) -> tuple[int, int] | None:
    """(chunks, tokens in all columns) of the chunk index: FTS5's stored averages record."""
    return SQLITE_STORES.chunk_matches(conn).totals()


def worth_loading(totals: tuple[int, int] | None, chunks: int, phrases: int) -> bool:
    """Whether loading ``chunks`` beats working on the chunk index (``totals``: its
    :func:`index_totals`).

    FTS5 walks, per phrase, up to one entry per chunk of the index; loading
    a chunk costs about :data:`POSTINGS_PER_CHUNK_LOADED` such steps. A small
    index is ranked on FTS5, a large one here (within :data:`CHUNK_BUDGET`).
    """
    if chunks > CHUNK_BUDGET:
        return False
    return totals is not None and chunks * POSTINGS_PER_CHUNK_LOADED <= totals[0] * phrases


def chunk_lengths(conn: Connection, spans: Sequence[Span]) -> dict[int, int]:
    """Tokens in each chunk (all columns), as FTS5 recorded them when it indexed the chunk."""
    return SQLITE_STORES.chunk_matches(conn).lengths(spans)


_COUNTS_HELD: Final = 4096
"""Phrase counts kept per index state (a state's counts are exact until the index changes)."""
_COUNTS: OrderedDict[tuple[str, bytes, str], int] = OrderedDict()
_COUNTS_LOCK = threading.Lock()


class ChunkCounts:
    """How many chunks of the index hold a phrase in their text (FTS5's ``nHit``).

    Counting walks the phrase's postings over the whole index, so a count is
    kept for as long as the index stays as it is: the key holds the index's
    structure record, which FTS5 rewrites on every change to the index. A
    count is a corpus statistic, never a search answer.
    """

    def __init__(self, conn: Connection) -> None:
        self._index = SQLITE_STORES.chunk_matches(conn)
        self._state: tuple[str, bytes] | None = None

    def _index_state(self) -> tuple[str, bytes]:
        if self._state is None:
            self._state = self._index.state_key()
        return self._state

    def of(self, phrase: Phrase) -> int:
        key = (*self._index_state(), phrase.fts())
        with _COUNTS_LOCK:
            if key in _COUNTS:
                _COUNTS.move_to_end(key)
                return _COUNTS[key]
        count = self._index.count(f"text : ({phrase.fts()})")
        with _COUNTS_LOCK:
            _COUNTS[key] = count
            while len(_COUNTS) > _COUNTS_HELD:
                _COUNTS.popitem(last=False)
        return count


def _occurrences(table: SnippetTable, tokens: Sequence[str], prefix: bool) -> dict[int, int]:
    """Occurrences of a phrase (its last token a prefix, ``prefix``) in each loaded chunk."""
    if not tokens:
        return {}
    places = [
        table.positions(token, prefix=prefix and index == len(tokens) - 1)
        for index, token in enumerate(tokens)
    ]
    counts: dict[int, int] = {}
    for chunk_id, starts in places[0].items():
        following = [place.get(chunk_id, set()) for place in places[1:]]
        hits = len(
            [
                start
                for start in starts
                if all(start + step + 1 in offsets for step, offsets in enumerate(following))
            ]
        )
        if hits:
            counts[chunk_id] = hits
    return counts


def best_in_table(
    conn: Connection,
    table: SnippetTable,
    spans: Mapping[str, Span],
    phrases: Sequence[Phrase],
    totals: tuple[int, int] | None,
) -> dict[str, int] | None:
    """The best chunk of each mirror (all its chunks loaded in ``table``) for these phrases.

    ``totals`` are the index's (:func:`index_totals`). Mirrors none of whose
    chunks hold any phrase are left out. None when the totals are unknown
    (the caller ranks on the index instead).
    """
    if totals is None or totals[0] <= 0:
        return None
    tokenized = [table.tokens(phrase.text) for phrase in phrases]
    hits = [
        _occurrences(table, tokens, phrase.prefix)
        for phrase, tokens in zip(phrases, tokenized, strict=True)
    ]
    counts = ChunkCounts(conn)
    return best_by_bm25(
        spans,
        hits,
        chunk_lengths(conn, list(spans.values())),
        lambda index: counts.of(phrases[index]),
        totals,
    )


def idf(rows: int, holding: int) -> float:
    """FTS5's bm25 weight of a phrase that ``holding`` of ``rows`` rows hold (never 0)."""
    idf = math.log((rows - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0.0 else 1e-6


Number = TypeVar("Number", float, FloatArray)
"""A float or a float64 array: bm25's terms are worked out alike for one row or many,
with the same operations in the same order, so both give the same bits."""


def length_norm(length: Number, average: float) -> Number:
    """bm25's length term of a row ``length`` tokens long, in an index whose rows
    average ``average`` tokens."""
    return BM25_K1 * (1 - BM25_B + BM25_B * length / average)


def saturation(frequency: Number, norm: Number) -> Number:
    """bm25's score for a phrase found ``frequency`` times in a row of :func:`length_norm`
    ``norm`` (before the phrase's :func:`idf` weight)."""
    return (frequency * (BM25_K1 + 1.0)) / (frequency + norm)


def best_by_bm25(
    spans: Mapping[str, Span],
    hits: Sequence[Mapping[int, int]],
    lengths: Mapping[int, int],
    chunks_holding: Callable[[int], int],
    totals: tuple[int, int],
) -> dict[str, int]:
    """Each mirror's chunk that FTS5's ``bm25(chunks_fts, 1.0, 0.0)`` ranks first.

    ``hits`` gives, per phrase, its occurrences in each chunk that holds it;
    ``lengths`` each chunk's tokens (all columns); ``chunks_holding(i)`` the
    index's count of chunks holding phrase ``i``; ``totals`` the index's
    (chunks, tokens). Ties go to the lowest chunk id; mirrors whose chunks
    hold no phrase are left out.
    """
    rows, tokens_total = totals
    average = tokens_total / rows
    weights: dict[int, float] = {}
    best: dict[str, int] = {}
    for mirror, (first, last) in spans.items():
        held = [
            index
            for index, found in enumerate(hits)
            if any(first <= chunk_id <= last for chunk_id in found)
        ]
        if not held:
            continue
        for index in held if len(held) > 1 else ():
            # One phrase alone scales every chunk's score alike (weight 1 then).
            if index not in weights:
                weights[index] = idf(rows, chunks_holding(index))
        ranked = []
        candidates = {
            chunk_id for index in held for chunk_id in hits[index] if first <= chunk_id <= last
        }
        terms = [(hits[index], weights.get(index, 1.0)) for index in held]
        for chunk_id in candidates:
            norm = length_norm(float(lengths.get(chunk_id, 0)), average)
            score = 0.0
            for found, weight in terms:  # the phrases a chunk lacks add exactly 0.0
                score += weight * saturation(float(found.get(chunk_id, 0)), norm)
            ranked.append((-1.0 * score, chunk_id))
        best[mirror] = min(ranked)[1]
    return best


def best_of_arrays(
    phrase_chunks: Sequence[tuple[KeyArray, KeyArray]],
    lengths_of: Callable[[KeyArray], FloatArray],
    chunks_holding: Callable[[int], int],
    totals: tuple[int, int],
) -> int | None:
    """:func:`best_by_bm25` for one mirror with numpy, for pages of many matching chunks.

    ``phrase_chunks`` gives, per phrase, the sorted ids of the chunks holding
    it and its occurrences in each. Every score is computed with the same
    operations in the same order as there, element by element, so the
    choice is the same to the last bit; ties go to the lowest chunk id.
    """
    import numpy as np

    held = [index for index, (chunk_ids, _) in enumerate(phrase_chunks) if chunk_ids.size]
    if not held:
        return None
    rows, tokens_total = totals
    average = tokens_total / rows
    candidates = phrase_chunks[held[0]][0]
    if len(held) > 1:  # the sorted union (``numpy.union1d`` sorts several times over)
        candidates = np.sort(np.concatenate([phrase_chunks[index][0] for index in held]))
        fresh = np.empty(candidates.size, dtype=bool)
        fresh[0] = True
        np.not_equal(candidates[1:], candidates[:-1], out=fresh[1:])
        candidates = candidates[fresh]
    # bm25's length term, the same for every phrase (the same operations as there)
    norm = length_norm(lengths_of(candidates), average)
    score = np.zeros(candidates.size, dtype=np.float64)
    for index in held:
        weight = 1.0
        if len(held) > 1:
            weight = idf(rows, chunks_holding(index))
        chunk_ids, occurrences = phrase_chunks[index]
        if chunk_ids.size == candidates.size:  # a phrase in every candidate
            frequency = occurrences.astype(np.float64)
        else:
            frequency = np.zeros(candidates.size, dtype=np.float64)
            frequency[np.searchsorted(candidates, chunk_ids)] = occurrences
        score += weight * saturation(frequency, norm)
    return int(candidates[int(np.argmin(-1.0 * score))])
