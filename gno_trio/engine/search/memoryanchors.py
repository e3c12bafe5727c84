"""Search anchors worked out from the in-memory chunk index, as FTS5 would give them.

The steps are :func:`.anchors.anchors_for`'s, in its order: each mirror of
several chunks gets its best chunk by bm25 for the exact terms, else for
the prefix terms; a single-chunk mirror's chunk is its best; the chosen
chunk is cut with the form that found it (a single chunk tries each form);
a mirror none of whose chunks matches is anchored at its opening text.
Only the postings of the hits' own chunks are read, so the cost follows the
hits, not the index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gno_trio.engine.search import chunkrank, snippetwindow
from gno_trio.engine.search.anchortext import (
    ELLIPSIS,
    MARK_CLOSE,
    MARK_OPEN,
    SNIPPET_TOKENS,
    Anchor,
    exact_first,
    excerpt,
    first_hit_line,
)
from gno_trio.engine.search.chunkmemory import (
    ChunkMemory,
    Range,
    chunk_array_counts,
    chunk_counts,
    chunk_offsets,
)
from gno_trio.engine.search.keyruns import KeyArray
from gno_trio.engine.store.database import Connection

Span = tuple[int, int]

_MARKS = snippetwindow.Marks(MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS)


class _Form:
    """One match form's phrases, tokenized, and their occurrences per chunk."""

    def __init__(
        self,
        memory: ChunkMemory,
        tokenized: Mapping[str, list[str]],
        phrases: list[chunkrank.Phrase],
    ) -> None:
        self.phrases = phrases
        tokens = [tokenized[phrase.text] for phrase in phrases]
        self.sizes = [len(each) for each in tokens]
        # Each phrase's tokens as word numbers (a prefix: every word it begins),
        # looked up once per search.
        self.words = [
            [
                memory.words(token, phrase.prefix and place == len(each) - 1)
                for place, token in enumerate(each)
            ]
            for phrase, each in zip(phrases, tokens, strict=True)
        ]
        self._memory = memory
        self._holding: dict[int, int] = {}

    def keys(self, first: int, last: int) -> list[list[int]]:
        """Per phrase, the keys of its instances in the chunks from ``first`` to ``last``."""
        return [self._memory.phrase_keys(phrase, first, last) for phrase in self.words]

    def pair_ranges(self, first: int, last: int) -> list[list[Range]]:
        """Per phrase, where its first token's pairs in the chunks from ``first`` to
        ``last`` lie (read once, for the count and the occurrences both)."""
        postings = self._memory.postings
        return [postings.pair_ranges(phrase[0], first, last) for phrase in self.words]

    def occurrences(self, ranges: list[list[Range]], first: int, last: int) -> list[dict[int, int]]:
        """Per phrase, its occurrences in each chunk from ``first`` to ``last``."""
        return [
            self._memory.postings.occurrences(found)
            if len(phrase) == 1
            else chunk_counts(self._memory.phrase_keys(phrase, first, last))
            for phrase, found in zip(self.words, ranges, strict=True)
        ]

    def occurrence_arrays(
        self, ranges: list[list[Range]], first: int, last: int
    ) -> list[tuple[KeyArray, KeyArray]]:
        """:meth:`occurrences` as numpy arrays (sorted chunk ids, counts) per phrase."""
        return [
            self._memory.postings.occurrence_arrays(found)
            if len(phrase) == 1
            else chunk_array_counts(self._memory.phrase_key_array(phrase, first, last))
            for phrase, found in zip(self.words, ranges, strict=True)
        ]

    def chunks_holding(self, counts: chunkrank.ChunkCounts, index: int) -> int:
        """FTS5's count of chunks holding phrase ``index`` (read here for a single word),
        counted once per search: every mirror ranked needs the same count, and a prefix
        of many words counts the distinct chunks of all their postings."""
        held = self._holding.get(index)
        if held is None:
            if len(self.words[index]) == 1:
                held = self._memory.chunks_holding(self.words[index][0])
            else:
                held = counts.of(self.phrases[index])
            self._holding[index] = held
        return held


def anchors_in_memory(
    conn: Connection,
    memory: ChunkMemory,
    tokenizer: Callable[[str], list[str]],
    spans: Mapping[str, Span],
    match: str,
) -> dict[str, Anchor] | None:
    """The anchor of every mirror of ``spans`` (all their chunks held in ``memory``), or
    None when ``match`` is not an expression worked out here. ``tokenizer`` tokenizes
    a phrase with a word the corpus lacks as the index does."""
    texts = exact_first(match)
    parsed = [chunkrank.or_phrases(text) for text in texts]
    if any(phrases is None or not phrases for phrases in parsed):
        return None
    tokenized: dict[str, list[str]] = {}
    for phrases in parsed:
        for phrase in phrases or ():
            if phrase.text not in tokenized:
                known = memory.tokens(phrase.text)
                tokenized[phrase.text] = known if known is not None else tokenizer(phrase.text)
    forms = [_Form(memory, tokenized, phrases) for phrases in parsed if phrases]
    if any(not size for form in forms for size in form.sizes):
        return None
    counts = chunkrank.ChunkCounts(conn)
    chosen: dict[str, tuple[int, int]] = {}  # mirror -> (chunk id, form index or -1)
    pending: dict[str, Span] = {}
    for mirror, (first, last) in spans.items():
        if first == last:
            chosen[mirror] = (first, -1)
        else:
            pending[mirror] = (first, last)
    for number, form in enumerate(forms):
        if not pending:
            break
        for mirror, chunk_id in _best(memory, counts, form, pending).items():
            chosen[mirror] = (chunk_id, number)
            del pending[mirror]
    found: dict[str, Anchor] = {}
    for number, form in enumerate(forms):
        for mirror, (chunk_id, found_by) in chosen.items():
            if mirror in found or found_by not in (-1, number):
                continue
            anchor = _cut(memory, form, chunk_id)
            if anchor is not None:
                found[mirror] = anchor
    for mirror, (first, _) in spans.items():
        if mirror not in found:
            found[mirror] = opening_anchor(memory, first)
    return found


LONG_PAGE_CHUNKS = 40
"""Candidate chunks in a mirror above which its best chunk is ranked with numpy."""


def _best(
    memory: ChunkMemory,
    counts: chunkrank.ChunkCounts,
    form: _Form,
    pending: Mapping[str, Span],
) -> dict[str, int]:
    best: dict[str, int] = {}
    holding = lambda index: form.chunks_holding(counts, index)  # noqa: E731
    for mirror, (first, last) in pending.items():
        ranges = form.pair_ranges(first, last)
        if sum(end - start for found in ranges for start, end in found) > LONG_PAGE_CHUNKS:
            chosen = chunkrank.best_of_arrays(
                form.occurrence_arrays(ranges, first, last),
                memory.lengths_of,
                holding,
                memory.totals,
            )
            if chosen is not None:
                best[mirror] = chosen
            continue
        hits = form.occurrences(ranges, first, last)
        lengths = {chunk_id: memory.chunks[chunk_id].length for found in hits for chunk_id in found}
        best.update(
            chunkrank.best_by_bm25({mirror: (first, last)}, hits, lengths, holding, memory.totals)
        )
    return best


def _cut(memory: ChunkMemory, form: _Form, chunk_id: int) -> Anchor | None:
    """The chunk's snippet for ``form``, or None when the form does not match it."""
    instances = sorted(
        (offset, number)
        for number, keys in enumerate(form.keys(chunk_id, chunk_id))
        for offset in chunk_offsets(keys)
    )
    if not instances:
        return None
    chunk = memory.chunks[chunk_id]
    snippet = snippetwindow.cut(
        chunk.text, chunk.spans, chunk.sentences, instances, form.sizes, _MARKS
    )
    return Anchor(
        snippet,
        chunk.start_line,
        chunk.end_line,
        chunk.language,
        first_hit_line(snippet, chunk.text, chunk.start_line),
    )


def opening_anchor(memory: ChunkMemory, chunk_id: int) -> Anchor:
    """The chunk's opening text (the anchor of a hit no chunk of which matches)."""
    chunk = memory.chunks[chunk_id]
    return Anchor(
        excerpt(chunk.text), chunk.start_line, chunk.end_line, chunk.language, chunk.start_line
    )
