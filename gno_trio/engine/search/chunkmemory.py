"""The chunk index of a small index, in memory: postings, chunk texts, token spans.

A search ranks documents on FTS5, then looks inside each hit for its best
chunk and cuts that chunk's snippet. On FTS5 that is one statement per
step, each setting the query up over the whole chunk index and reading the
chunk's text back through a view: most of a search's time at ordinary
sizes. Yet both steps need only where the query's words occur in the hit's
chunks, each chunk's length, the index's totals and the chunk's text.

:class:`ChunkMemory` holds exactly that for one state of the chunk index:
every (word, chunk, token offset) posting FTS5 keeps for the text column,
each chunk's text, line range, token boundaries and sentence starts, and
each chunk's length as FTS5 recorded it. The anchors worked out from it
(:mod:`.memoryanchors`) are the ones FTS5 gives: the same bm25 arithmetic,
the same ``snippet()`` rules (:mod:`.snippetwindow`). Which processes hold
one, and how it is built, is :mod:`.chunkkeeper`'s.
"""

from __future__ import annotations

import array
import bisect
import collections
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gno_trio.engine.search.keyruns import FloatArray, KeyArray, run_starts, shared
from gno_trio.engine.search.stems import Vocabulary, known_tokens

if TYPE_CHECKING:
    from gno_trio.engine.search.docmemory import DocumentMemory

OFFSET_BITS: Final = 24
"""A posting's key is ``chunk id << OFFSET_BITS | token offset``."""
OFFSET_MASK: Final = (1 << OFFSET_BITS) - 1
Range = tuple[int, int]
"""Where a run of pairs lies in the pair arrays (start, end)."""


@dataclass(frozen=True, slots=True)
class MemoryChunk:
    """One chunk: its text and line range, its tokens' character spans, its length."""

    text: str
    start_line: int
    end_line: int
    language: str | None
    spans: array.array[int]
    sentences: array.array[int]
    length: int
    """Tokens in all columns, as FTS5 recorded them (bm25's document length)."""


class ChunkMemory:
    """The chunk index's text-column postings, chunk texts and totals, for one state.

    A posting is one int64 key, ``chunk id << 24 | token offset``; the keys of
    a word are contiguous and sorted (FTS5's own order), so the postings of
    a range of chunks are one slice, found by binary search, and a phrase's
    next word is the same key plus one.
    """

    def __init__(
        self,
        tokenize: str,
        state: tuple[bytes, ...],
        totals: tuple[int, int],
        terms: list[str],
        postings: Postings,
        chunks: dict[int, MemoryChunk],
        left_out: list[int],
        stems: dict[str, str],
        documents: DocumentMemory | None = None,
    ) -> None:
        self.tokenize = tokenize
        """The chunk index's tokenizer (a query phrase not in the corpus is tokenized so)."""
        self.state = state
        self.totals = totals
        self.chunks = chunks
        self._left_out = sorted(left_out)
        """Chunks of the index not held (their boundaries might differ from FTS5's)."""
        self._vocabulary = Vocabulary(terms)
        self.postings = postings
        self._stems = stems
        self.documents = documents
        """The document index of the same state, when it is held too (it ranks then)."""
        import numpy as np

        ordered = sorted(chunks)
        self._sorted_ids: KeyArray = np.array(ordered, dtype=np.int64)
        self._sorted_lengths: FloatArray = np.array(
            [chunks[chunk_id].length for chunk_id in ordered], dtype=np.float64
        )

    def holds_span(self, first: int, last: int) -> bool:
        """Whether every chunk from ``first`` to ``last`` is here to be cut (a span is
        one mirror's chunks, all of the indexed state or none)."""
        if first not in self.chunks or last not in self.chunks:
            return False
        place = bisect.bisect_left(self._left_out, first)
        return place == len(self._left_out) or self._left_out[place] > last

    def words(self, term: str, prefix: bool) -> range:
        """The word numbers ``term`` stands for: itself, or every word it begins."""
        return self._vocabulary.numbers(term, prefix)

    def chunks_holding(self, words: Sequence[int]) -> int:
        """Chunks whose text holds one of these words: FTS5's count of the chunks a
        one-word phrase matches."""
        if len(words) == 1:
            return self.postings.chunks_holding[words[0]]
        return self.postings.distinct_chunks(words)

    def tokens(self, text: str) -> list[str] | None:
        """The tokens FTS5 makes of ``text`` (a query phrase), when every word of it
        occurs in the indexed text; None otherwise (tokenize it on FTS5 then)."""
        return known_tokens(self._stems, text)

    def phrase_keys(self, phrase: Sequence[Sequence[int]], first: int, last: int) -> list[int]:
        """The keys where a phrase begins in the chunks from ``first`` to ``last``
        (FTS5's instances of it); ``phrase`` gives each token's :meth:`words`."""
        postings = self.postings
        keys = postings.keys(phrase[0], first, last)
        for step, words in enumerate(phrase[1:], start=1):
            if not keys:
                break
            following = set(postings.keys(words, first, last))
            keys = [key for key in keys if key + step in following]
        return keys

    def phrase_key_array(self, phrase: Sequence[Sequence[int]], first: int, last: int) -> KeyArray:
        """:meth:`phrase_keys` as a numpy array."""
        postings = self.postings
        keys = postings.key_array(phrase[0], first, last)
        for step, words in enumerate(phrase[1:], start=1):
            if not keys.size:
                break
            keys = shared(keys, postings.key_array(words, first, last) - step)
        return keys

    def lengths_of(self, chunk_ids: KeyArray) -> FloatArray:
        """Each of these chunks' length (all columns), as float64."""
        import numpy as np

        return self._sorted_lengths[np.searchsorted(self._sorted_ids, chunk_ids)]


class Postings:
    """Every word's postings as one sorted int64 key per occurrence, word after word.

    Searches read a few short slices (one hit's chunks), where a binary
    search on the array and a Python list beat numpy's per-call cost; only
    corpus-wide counts use numpy.
    """

    def __init__(
        self, keys: array.array[int], counts: Sequence[int], chunks_holding: Sequence[int]
    ) -> None:
        import numpy as np

        self._keys = keys
        self._bounds = [0, *itertools.accumulate(counts)]
        self.chunks_holding = list(chunks_holding)
        # Each word's chunks and its occurrences in each: what ranking a page's
        # chunks needs for a one-word phrase, without counting occurrences.
        view = np.frombuffer(keys, dtype=np.int64) if len(keys) else np.zeros(0, np.int64)
        chunk_ids = view >> OFFSET_BITS
        starts = run_starts(chunk_ids, self._bounds[1:-1])  # a word's first key opens a run
        self._pair_chunks = array.array("q", chunk_ids[starts].tobytes())
        self._pair_counts = array.array("q", np.diff(starts, append=chunk_ids.size).tobytes())
        self._pair_bounds = np.searchsorted(starts, self._bounds).tolist()

    def _pairs(self, number: int, first: int, last: int) -> Range:
        low, high = self._pair_bounds[number], self._pair_bounds[number + 1]
        start = bisect.bisect_left(self._pair_chunks, first, low, high)
        return start, bisect.bisect_right(self._pair_chunks, last, start, high)

    def pair_ranges(self, numbers: Sequence[int], first: int, last: int) -> list[Range]:
        """Where each of these words' (word, chunk) pairs in the chunks from ``first`` to
        ``last`` lie: the candidates ranking them would score."""
        return [self._pairs(number, first, last) for number in numbers]

    def occurrences(self, ranges: Sequence[Range]) -> dict[int, int]:
        """Occurrences of the words of these :meth:`pair_ranges` in each chunk holding one."""
        found: dict[int, int] = {}
        for start, end in ranges:
            if not found:
                found = dict(
                    zip(self._pair_chunks[start:end], self._pair_counts[start:end], strict=True)
                )
                continue
            for chunk_id, count in zip(
                self._pair_chunks[start:end], self._pair_counts[start:end], strict=True
            ):
                found[chunk_id] = found.get(chunk_id, 0) + count
        return found

    def occurrence_arrays(self, ranges: Sequence[Range]) -> tuple[KeyArray, KeyArray]:
        """:meth:`occurrences` as sorted chunk ids and their counts (numpy)."""
        import numpy as np

        chunk_view = np.frombuffer(self._pair_chunks, dtype=np.int64)
        count_view = np.frombuffer(self._pair_counts, dtype=np.int64)
        ranges = [(start, end) for start, end in ranges if start < end]
        if len(ranges) == 1:
            start, end = ranges[0]
            return chunk_view[start:end], count_view[start:end]
        if not ranges:
            return chunk_view[:0], count_view[:0]
        chunk_ids = np.concatenate([chunk_view[start:end] for start, end in ranges])
        counts = np.concatenate([count_view[start:end] for start, end in ranges])
        order = np.argsort(chunk_ids, kind="stable")
        chunk_ids, counts = chunk_ids[order], counts[order]
        starts = run_starts(chunk_ids)
        return chunk_ids[starts], np.add.reduceat(counts, starts)

    @property
    def total(self) -> int:
        return self._bounds[-1]

    def _key_range(self, number: int, first: int, last: int) -> tuple[int, int]:
        """Where word ``number``'s keys in the chunks from ``first`` to ``last`` lie."""
        low, high = self._bounds[number], self._bounds[number + 1]
        start = bisect.bisect_left(self._keys, first << OFFSET_BITS, low, high)
        return start, bisect.bisect_left(self._keys, (last + 1) << OFFSET_BITS, start, high)

    def keys(self, numbers: Sequence[int], first: int, last: int) -> list[int]:
        """The sorted keys of these words in the chunks from ``first`` to ``last``."""
        found: list[int] = []
        words = 0
        for number in numbers:
            start, end = self._key_range(number, first, last)
            if start < end:
                found.extend(self._keys[start:end])
                words += 1
        if words > 1:
            found.sort()
        return found

    def key_array(self, numbers: Sequence[int], first: int, last: int) -> KeyArray:
        """:meth:`keys` as a numpy array (for the many keys of a long page)."""
        import numpy as np

        view = np.frombuffer(self._keys, dtype=np.int64)
        slices = []
        for number in numbers:
            start, end = self._key_range(number, first, last)
            if start < end:
                slices.append(view[start:end])
        if len(slices) == 1:
            return slices[0]
        return np.sort(np.concatenate(slices)) if slices else view[:0]

    def distinct_chunks(self, numbers: Sequence[int]) -> int:
        """How many chunks hold at least one of these words."""
        import numpy as np

        if not numbers:
            return 0
        view = np.frombuffer(self._keys, dtype=np.int64)
        joined = np.concatenate(
            [view[self._bounds[n] : self._bounds[n + 1]] >> OFFSET_BITS for n in numbers]
        )
        return int(np.unique(joined).size)


def chunk_counts(keys: Sequence[int]) -> dict[int, int]:
    """How many of these keys fall in each chunk."""
    return dict(collections.Counter(key >> OFFSET_BITS for key in keys))


def chunk_array_counts(keys: KeyArray) -> tuple[KeyArray, KeyArray]:
    """The chunk ids of these sorted keys (ascending, once each) and how many fall in
    each (run lengths)."""
    import numpy as np

    chunk_ids = keys >> OFFSET_BITS
    if not chunk_ids.size:
        return chunk_ids, chunk_ids
    starts = run_starts(chunk_ids)
    counts = np.empty(starts.size, dtype=np.int64)
    counts[:-1] = starts[1:] - starts[:-1]
    counts[-1] = chunk_ids.size - starts[-1]
    return chunk_ids[starts], counts


def chunk_offsets(keys: Sequence[int]) -> list[int]:
    """The token offsets of these keys (all of one chunk)."""
    return [key & OFFSET_MASK for key in keys]


__all__ = [
    "ChunkMemory",
    "MemoryChunk",
    "Postings",
    "chunk_array_counts",
    "chunk_counts",
    "chunk_offsets",
]
