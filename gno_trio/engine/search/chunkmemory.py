"""The chunk index of a small index, held in memory by a process that serves searches.

A search ranks documents on FTS5, then looks inside each hit for its best
chunk and cuts that chunk's snippet. On FTS5 that is one statement per
step, each setting the query up over the whole chunk index and reading the
chunk's text back through a view: most of a search's time at ordinary
sizes. Yet both steps need only where the query's words occur in the hit's
chunks, each chunk's length, the index's totals and the chunk's text.

:class:`ChunkMemory` holds exactly that, copied from the chunk index in one
consistent read: every (word, chunk, token offset) posting FTS5 keeps for
the text column (read through ``fts5vocab``), each chunk's text, line range
and token boundaries, and each chunk's length as FTS5 recorded it. The
anchors worked out from it (:mod:`.memoryanchors`) are the ones FTS5 gives:
the same bm25 arithmetic, the same ``snippet()`` rules
(:mod:`.snippetwindow`).

It is an index, never a cache of answers: built once per state of the chunk
index (the key is FTS5's own structure record, rewritten by every change),
in a background thread, only for processes that asked for it
(:func:`keep`: the serving commands; a one-shot command would pay the build
for one search), and only up to :data:`MOST_TOKENS`. Until it is ready, and
for any chunk whose token boundaries cannot be proven equal to FTS5's, the
anchors come from FTS5 as before.
"""

from __future__ import annotations

import array
import bisect
import collections
import itertools
import logging
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    KeyArray = npt.NDArray[np.int64]
    FloatArray = npt.NDArray[np.float64]
else:  # numpy is imported only when a long page needs it
    KeyArray = FloatArray = Any

from gno_trio.engine.search import snippetwindow
from gno_trio.engine.search.chunkrank import totals_of
from gno_trio.engine.store.database import DEFAULT_TOKENIZE, connect, stored_tokenizer

logger = logging.getLogger("gno_trio.engine.chunkmemory")

MOST_TOKENS: Final = 2_000_000
"""Largest chunk index (tokens, all columns) held in memory: about 35 MB held per
million tokens (7 MB of Markdown is about a million)."""

OFFSET_BITS: Final = 24
OFFSET_MASK: Final = (1 << OFFSET_BITS) - 1
_STATE_SQL: Final = (
    "SELECT (SELECT block FROM chunks_fts_data WHERE id = 10), "
    "(SELECT block FROM chunks_fts_data WHERE id = 1)"
)
_WHERE_SQL: Final = (
    "SELECT (SELECT file FROM pragma_database_list WHERE name = 'main'), "
    "(SELECT block FROM chunks_fts_data WHERE id = 10), "
    "(SELECT block FROM chunks_fts_data WHERE id = 1)"
)
_WORDS: Final = re.compile(r"[^\W_]+")
# unicode61's separators and token characters agree with the pattern above
# for every character of these categories; any other (marks, private use,
# unassigned) may split otherwise, so its chunk is left to FTS5.
_CLEAR_CATEGORIES: Final = frozenset(
    [
        "Lu",
        "Ll",
        "Lt",
        "Lm",
        "Lo",
        "Nd",
        "Nl",
        "No",
        "Zs",
        "Zl",
        "Zp",
        "Pc",
        "Pd",
        "Ps",
        "Pe",
        "Pi",
        "Pf",
        "Po",
        "Sm",
        "Sc",
        "Sk",
        "So",
        "Cc",
        "Cf",
    ]
)
_TOKENIZER_WORDS: Final = frozenset(("porter", "unicode61", "remove_diacritics", "0", "1", "2"))


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


def _varints(blob: bytes) -> list[int]:
    from gno_trio.engine.search.chunkrank import _varints as decode

    return decode(blob)


def _clear(text: str) -> bool:
    """Whether every character of ``text`` splits into tokens as unicode61 splits it."""
    if text.isascii():
        return True
    return all(
        unicodedata.category(char) in _CLEAR_CATEGORIES for char in set(text) if not char.isascii()
    )


class ChunkMemory:
    """The chunk index's text-column postings, chunk texts and totals, for one state.

    A posting is one int64 key, ``chunk id << 24 | token offset``; the keys of
    a word are contiguous and sorted (FTS5's own order), so the postings of
    a range of chunks are one slice, found by binary search, and a phrase's
    next word is the same key plus one.
    """

    def __init__(
        self,
        state: tuple[bytes, bytes],
        totals: tuple[int, int],
        terms: list[str],
        postings: Postings,
        chunks: dict[int, MemoryChunk],
        left_out: list[int],
        stems: dict[str, str],
    ) -> None:
        self.state = state
        self.totals = totals
        self.chunks = chunks
        self._left_out = sorted(left_out)
        """Chunks of the index not held (their boundaries might differ from FTS5's)."""
        self._terms = terms
        self._term_numbers = {term: number for number, term in enumerate(terms)}
        self._postings = postings
        self._stems = stems
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

    def words(self, term: str, prefix: bool) -> list[int]:
        """The word numbers ``term`` stands for: itself, or every word it begins."""
        if not prefix:
            number = self._term_numbers.get(term)
            return [] if number is None else [number]
        number = bisect.bisect_left(self._terms, term)
        found = []
        while number < len(self._terms) and self._terms[number].startswith(term):
            found.append(number)
            number += 1
        return found

    def chunks_holding(self, words: Sequence[int]) -> int:
        """Chunks whose text holds one of these words: FTS5's count of the chunks a
        one-word phrase matches."""
        if len(words) == 1:
            return self._postings.chunks_holding[words[0]]
        return self._postings.distinct_chunks(words)

    def tokens(self, text: str) -> list[str] | None:
        """The tokens FTS5 makes of ``text`` (a query phrase), when every word of it
        occurs in the indexed text; None otherwise (tokenize it on FTS5 then)."""
        if not text.isascii():
            return None
        tokens = [self._stems.get(word.lower()) for word in _WORDS.findall(text)]
        if None in tokens:
            return None
        return [token for token in tokens if token is not None]

    def word_chunks(self, words: Sequence[int], first: int, last: int) -> int:
        """Chunks from ``first`` to ``last`` holding these words, counted once per word."""
        return self._postings.chunks_in(words, first, last)

    def word_occurrences(self, words: Sequence[int], first: int, last: int) -> dict[int, int]:
        """Occurrences of these words per chunk from ``first`` to ``last``."""
        return self._postings.occurrences(words, first, last)

    def word_occurrence_arrays(
        self, words: Sequence[int], first: int, last: int
    ) -> tuple[KeyArray, KeyArray]:
        """:meth:`word_occurrences` as numpy arrays (sorted chunk ids, counts)."""
        return self._postings.occurrence_arrays(words, first, last)

    def phrase_keys(self, phrase: Sequence[Sequence[int]], first: int, last: int) -> list[int]:
        """The keys where a phrase begins in the chunks from ``first`` to ``last``
        (FTS5's instances of it); ``phrase`` gives each token's :meth:`words`."""
        postings = self._postings
        keys = postings.keys(phrase[0], first, last)
        for step, words in enumerate(phrase[1:], start=1):
            if not keys:
                break
            following = set(postings.keys(words, first, last))
            keys = [key for key in keys if key + step in following]
        return keys

    def phrase_key_array(self, phrase: Sequence[Sequence[int]], first: int, last: int) -> KeyArray:
        """:meth:`phrase_keys` as a numpy array."""
        import numpy as np

        postings = self._postings
        keys = postings.key_array(phrase[0], first, last)
        for step, words in enumerate(phrase[1:], start=1):
            if not keys.size:
                break
            following = postings.key_array(words, first, last)
            keys = keys[np.isin(keys + step, following, assume_unique=True)]
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
        opens = np.ones(chunk_ids.size, dtype=bool)
        np.not_equal(chunk_ids[1:], chunk_ids[:-1], out=opens[1:])
        opens[self._bounds[1:-1]] = True  # a word's first key opens a run
        starts = np.flatnonzero(opens)
        self._pair_chunks = array.array("q", chunk_ids[starts].tobytes())
        self._pair_counts = array.array("q", np.diff(starts, append=chunk_ids.size).tobytes())
        self._pair_bounds = np.searchsorted(starts, self._bounds).tolist()

    def _pairs(self, number: int, first: int, last: int) -> tuple[int, int]:
        low, high = self._pair_bounds[number], self._pair_bounds[number + 1]
        start = bisect.bisect_left(self._pair_chunks, first, low, high)
        return start, bisect.bisect_right(self._pair_chunks, last, start, high)

    def chunks_in(self, numbers: Sequence[int], first: int, last: int) -> int:
        """How many (word, chunk) pairs these words have in the chunks from ``first``
        to ``last``: the candidates ranking them would score."""
        total = 0
        for number in numbers:
            start, end = self._pairs(number, first, last)
            total += end - start
        return total

    def occurrences(self, numbers: Sequence[int], first: int, last: int) -> dict[int, int]:
        """Occurrences of these words in each chunk from ``first`` to ``last`` holding one."""
        found: dict[int, int] = {}
        for number in numbers:
            start, end = self._pairs(number, first, last)
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

    def occurrence_arrays(
        self, numbers: Sequence[int], first: int, last: int
    ) -> tuple[KeyArray, KeyArray]:
        """:meth:`occurrences` as sorted chunk ids and their counts (numpy)."""
        import numpy as np

        chunk_view = np.frombuffer(self._pair_chunks, dtype=np.int64)
        count_view = np.frombuffer(self._pair_counts, dtype=np.int64)
        ranges = [self._pairs(number, first, last) for number in numbers]
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
        opens = np.ones(chunk_ids.size, dtype=bool)
        np.not_equal(chunk_ids[1:], chunk_ids[:-1], out=opens[1:])
        starts = np.flatnonzero(opens)
        return chunk_ids[starts], np.add.reduceat(counts, starts)

    @property
    def total(self) -> int:
        return self._bounds[-1]

    def keys(self, numbers: Sequence[int], first: int, last: int) -> list[int]:
        """The sorted keys of these words in the chunks from ``first`` to ``last``."""
        low_key, high_key = first << OFFSET_BITS, (last + 1) << OFFSET_BITS
        keys = self._keys
        found: list[int] = []
        words = 0
        for number in numbers:
            low, high = self._bounds[number], self._bounds[number + 1]
            start = bisect.bisect_left(keys, low_key, low, high)
            end = bisect.bisect_left(keys, high_key, start, high)
            if start < end:
                found.extend(keys[start:end])
                words += 1
        if words > 1:
            found.sort()
        return found

    def key_array(self, numbers: Sequence[int], first: int, last: int) -> KeyArray:
        """:meth:`keys` as a numpy array (for the many keys of a long page)."""
        import numpy as np

        view = np.frombuffer(self._keys, dtype=np.int64)
        low_key, high_key = first << OFFSET_BITS, (last + 1) << OFFSET_BITS
        slices = []
        for number in numbers:
            low, high = self._bounds[number], self._bounds[number + 1]
            start = bisect.bisect_left(self._keys, low_key, low, high)
            end = bisect.bisect_left(self._keys, high_key, start, high)
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
    each (run lengths: ``numpy.unique`` would sort again, several times slower)."""
    import numpy as np

    chunk_ids = keys >> OFFSET_BITS
    if not chunk_ids.size:
        return chunk_ids, chunk_ids
    opens = np.empty(chunk_ids.size, dtype=bool)
    opens[0] = True
    np.not_equal(chunk_ids[1:], chunk_ids[:-1], out=opens[1:])
    starts = np.flatnonzero(opens)
    counts = np.empty(starts.size, dtype=np.int64)
    counts[:-1] = starts[1:] - starts[:-1]
    counts[-1] = chunk_ids.size - starts[-1]
    return chunk_ids[starts], counts


def chunk_offsets(keys: Sequence[int]) -> list[int]:
    """The token offsets of these keys (all of one chunk)."""
    return [key & OFFSET_MASK for key in keys]


def suits(tokenize: str) -> bool:
    """Whether token boundaries of this tokenizer are unicode61's default ones."""
    words = tokenize.split()
    return "unicode61" in words and set(words) <= _TOKENIZER_WORDS


def build(conn: sqlite3.Connection) -> ChunkMemory | None:
    """A copy of the chunk index read in one transaction of ``conn``; None when the
    index's tokenizer or size does not suit (or it changed under a reader that
    holds no transaction, which never happens inside one)."""
    tokenize = stored_tokenizer(conn) or DEFAULT_TOKENIZE
    if not suits(tokenize):
        return None
    conn.execute("BEGIN")
    try:
        structure, averages = conn.execute(_STATE_SQL).fetchone()
        totals = totals_of(averages)
        if totals is None or totals[0] <= 0 or totals[1] > MOST_TOKENS:
            return None
        for name, kind in (("chunk_words", "instance"), ("chunk_terms", "col")):
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} "
                f"USING fts5vocab(main, chunks_fts, {kind})"
            )
        listed = conn.execute(
            "SELECT term, doc, cnt FROM temp.chunk_terms WHERE col = 'text'"
        ).fetchall()
        joined = conn.execute(
            f"SELECT group_concat((doc << {OFFSET_BITS}) | offset) FROM temp.chunk_words "
            "WHERE col = 'text'"
        ).fetchone()[0]
        chunk_rows = conn.execute(
            "SELECT c.id, t.text, c.start_line, c.end_line, c.language, s.sz "
            "FROM content_chunks c JOIN chunk_texts t ON t.id = c.id "
            "JOIN chunks_fts_docsize s ON s.id = c.id"
        ).fetchall()
    finally:
        conn.execute("ROLLBACK")
    import numpy as np  # parses the joined keys without a string object per posting

    keys = array.array("q")
    if joined:
        keys.frombytes(np.fromstring(joined, dtype=np.int64, sep=",").tobytes())
    del joined
    terms = [str(row[0]) for row in listed]
    postings = Postings(keys, [int(row[2]) for row in listed], [int(row[1]) for row in listed])
    if postings.total != len(keys):
        logger.warning("chunk index postings disagree with its counts; left on FTS5")
        return None
    chunks: dict[int, MemoryChunk] = {}
    left_out: list[int] = []
    words: set[str] = set()
    for chunk_id, text, start_line, end_line, language, sizes in chunk_rows:
        text = str(text)
        if not _clear(text):
            left_out.append(int(chunk_id))
            continue
        spans = array.array("H" if len(text) < 65_536 else "i")  # half the bytes, mostly
        for word in _WORDS.finditer(text):
            spans.append(word.start())
            spans.append(word.end())
            words.add(word.group())
        counted = _varints(bytes(sizes))
        if not counted or counted[0] != len(spans) // 2:
            left_out.append(int(chunk_id))
            continue
        chunks[int(chunk_id)] = MemoryChunk(
            text,
            int(start_line),
            int(end_line),
            language,
            spans,
            snippetwindow.sentence_starts(text, spans),
            sum(counted),
        )
    return ChunkMemory(
        (bytes(structure or b""), bytes(averages or b"")),
        totals,
        terms,
        postings,
        chunks,
        left_out,
        _stems(tokenize, {word.lower() for word in words if word.isascii()}),
    )


def _stems(tokenize: str, words: set[str]) -> dict[str, str]:
    """What the tokenizer makes of each of these words (each one ASCII token), from
    FTS5 itself: all of them indexed as one row of a private table, read back in
    order."""
    ordered = sorted(words)
    conn = sqlite3.connect(":memory:")
    try:
        quoted = tokenize.replace("'", "''")
        conn.execute(f"CREATE VIRTUAL TABLE said USING fts5(text, tokenize = '{quoted}')")
        conn.execute("CREATE VIRTUAL TABLE said_words USING fts5vocab(said, instance)")
        conn.execute("INSERT INTO said(rowid, text) VALUES (1, ?)", (" ".join(ordered),))
        terms = dict(conn.execute("SELECT offset, term FROM said_words"))
    finally:
        conn.close()
    if len(terms) != len(ordered):
        return {}
    return {word: str(terms[offset]) for offset, word in enumerate(ordered)}


# -- which processes hold which indexes ------------------------------------------


class _Slot:
    """One kept index: its memory (when built) and whether a build is running."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.memory: ChunkMemory | None = None
        self.tried: tuple[bytes, bytes] | None = None
        self.building = False
        self.users = 0


_SLOTS: dict[str, _Slot] = {}
_LOCK = threading.Lock()
_SNIPPETS_AGREE: dict[str, bool] = {}


def keep(path: Path) -> None:
    """Hold the chunk index of the database at ``path`` in memory from its first search."""
    with _LOCK:
        slot = _SLOTS.setdefault(str(path), _Slot(path))
        slot.users += 1


def release(path: Path) -> None:
    """Undo one :func:`keep`; the memory goes with the last one."""
    with _LOCK:
        slot = _SLOTS.get(str(path))
        if slot is not None:
            slot.users -= 1
            if slot.users <= 0:
                del _SLOTS[str(path)]


def current(conn: sqlite3.Connection, tokenize: str) -> ChunkMemory | None:
    """The memory of the index state ``conn`` reads, if this process keeps one and it
    is built; otherwise None, and a build starts for that state."""
    if not _SLOTS:
        return None
    path, structure, averages = conn.execute(_WHERE_SQL).fetchone()
    slot = _SLOTS.get(str(path))
    if slot is None:
        return None
    state = (bytes(structure or b""), bytes(averages or b""))
    memory = slot.memory
    if memory is not None and memory.state == state:
        return memory
    with _LOCK:
        if slot.building or slot.tried == state:
            return None
        slot.building = True
        slot.tried = state
    threading.Thread(
        target=_build_into, args=(slot, tokenize), name="gno-chunk-memory", daemon=True
    ).start()
    return None


def _build_into(slot: _Slot, tokenize: str) -> None:
    try:
        agrees = _SNIPPETS_AGREE.get(tokenize)
        if agrees is None:
            agrees = _SNIPPETS_AGREE[tokenize] = snippetwindow.agrees_with_sqlite(tokenize)
            if not agrees:
                logger.warning("this SQLite cuts snippets otherwise; anchors stay on FTS5")
        if not agrees:
            return
        conn = connect(slot.path, readonly=True)
        try:
            memory = build(conn)
        finally:
            conn.close()
        if memory is not None:
            slot.memory = memory
            slot.tried = memory.state
    except Exception:  # a failed build leaves anchors on FTS5, never fails a search
        logger.exception("building the in-memory chunk index failed")
    finally:
        with _LOCK:
            slot.building = False


__all__ = ["ChunkMemory", "MemoryChunk", "build", "current", "keep", "release", "suits"]
