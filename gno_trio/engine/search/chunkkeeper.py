"""Which processes hold an in-memory chunk index (:mod:`.chunkmemory`), and its build.

The document index (:mod:`.docmemory`) is read in the same transaction and
held with it. It is an index, never a cache of answers: built once per
state of the two indexes (the key is FTS5's own structure and averages
records of both, rewritten by every change), in a background thread, only
for processes that asked for it (:func:`keep`: the serving commands; a
one-shot command would pay the build for one search), and only up to
:data:`MOST_TOKENS`. Until it is ready, and
for any chunk whose token boundaries cannot be proven equal to FTS5's, the
anchors come from FTS5 as before.

The build reads everything in one read transaction: the postings through
``fts5vocab`` (as one joined string parsed by numpy: a string object per
posting made the build's peak five times the memory it keeps), the chunk
texts, their lengths from FTS5's ``docsize`` table, and each word's stem
from FTS5 itself, so a query word found in the corpus needs no tokenizer
round trip.
"""

from __future__ import annotations

import array
import logging
import threading
import unicodedata
from pathlib import Path
from typing import Final

from gno_trio.engine.search import docmemory, snippetwindow
from gno_trio.engine.search.chunkmemory import (
    OFFSET_BITS,
    ChunkMemory,
    MemoryChunk,
    Postings,
)
from gno_trio.engine.search.keyruns import listed_keys
from gno_trio.engine.search.stems import WORDS, ascii_words
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import DEFAULT_TOKENIZE, Connection, connect, stored_tokenizer
from gno_trio.engine.store.scratch_fulltext import stems_of
from gno_trio.heap import trim_heap

logger = logging.getLogger("gno_trio.engine.chunkkeeper")

MOST_TOKENS: Final = 2_000_000
"""Largest chunk index and document index (tokens, all columns) held in memory."""

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


def _clear(text: str) -> bool:
    """Whether every character of ``text`` splits into tokens as unicode61 splits it."""
    if text.isascii():
        return True
    return all(
        unicodedata.category(char) in _CLEAR_CATEGORIES for char in set(text) if not char.isascii()
    )


def suits(tokenize: str) -> bool:
    """Whether token boundaries of this tokenizer are unicode61's default ones."""
    words = tokenize.split()
    return "unicode61" in words and set(words) <= _TOKENIZER_WORDS


def build(conn: Connection, tokenize: str) -> ChunkMemory | None:
    """A copy of the chunk index (tokenized as ``tokenize``) read in one transaction
    of ``conn``; None when its tokenizer or size does not suit."""
    if not suits(tokenize):
        return None
    copy = SQLITE_STORES.fulltext_copy(conn)
    with copy.snapshot() as read:
        totals = copy.chunk_totals(read)
        if totals is None or totals[0] <= 0 or totals[1] > MOST_TOKENS:
            return None
        listed, joined = copy.chunk_postings(OFFSET_BITS)
        chunk_rows = copy.chunk_rows()
        stems = stems_of(tokenize, ascii_words(row[1] for row in chunk_rows))
        documents = docmemory.build(copy, stems, lambda more: stems_of(tokenize, more), MOST_TOKENS)
    keys = array.array("q", listed_keys(joined).tobytes())
    del joined
    terms = [str(row[0]) for row in listed]
    postings = Postings(keys, [int(row[2]) for row in listed], [int(row[1]) for row in listed])
    if postings.total != len(keys):
        logger.warning("chunk index postings disagree with its counts; left on FTS5")
        return None
    chunks: dict[int, MemoryChunk] = {}
    left_out: list[int] = []
    for chunk_id, text, start_line, end_line, language, counted in chunk_rows:
        text = str(text)
        if not _clear(text):
            left_out.append(int(chunk_id))
            continue
        spans = array.array("H" if len(text) < 65_536 else "i")  # half the bytes, mostly
        for word in WORDS.finditer(text):
            spans.append(word.start())
            spans.append(word.end())
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
        tokenize,
        read[1],
        totals,
        terms,
        postings,
        chunks,
        left_out,
        stems,
        documents,
    )


# -- which processes hold which indexes ------------------------------------------


class _Slot:
    """One kept index: its memory (when built) and whether a build is running."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.memory: ChunkMemory | None = None
        self.tried: tuple[bytes, ...] | None = None
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


def current(conn: Connection) -> ChunkMemory | None:
    """The memory of the index state ``conn`` reads, if this process keeps one and it
    is built; otherwise None, and a build starts for that state."""
    if not _SLOTS:
        return None
    path, state = SQLITE_STORES.fulltext_copy(conn).state()
    slot = _SLOTS.get(path)
    if slot is None:
        return None
    memory = slot.memory
    if memory is not None and memory.state == state:
        return memory
    with _LOCK:
        if slot.building or slot.tried == state:
            return None
        slot.building = True
        slot.tried = state
    threading.Thread(target=_build_into, args=(slot,), name="gno-chunk-memory", daemon=True).start()
    return None


def _build_into(slot: _Slot) -> None:
    try:
        conn = connect(slot.path, readonly=True)
        try:
            tokenize = stored_tokenizer(conn) or DEFAULT_TOKENIZE
            agrees = _SNIPPETS_AGREE.get(tokenize)
            if agrees is None:
                agrees = _SNIPPETS_AGREE[tokenize] = snippetwindow.agrees_with_sqlite(tokenize)
                if not agrees:
                    logger.warning("this SQLite cuts snippets otherwise; anchors stay on FTS5")
            memory = build(conn, tokenize) if agrees else None
        finally:
            conn.close()
        if memory is not None:
            slot.memory = memory
            slot.tried = memory.state
        # The build's rows, joined postings and arrays were freed; give their pages back,
        # or a serving process would keep the build's peak at rest.
        trim_heap()
    except Exception:  # a failed build leaves anchors on FTS5, never fails a search
        logger.exception("building the in-memory chunk index failed")
    finally:
        with _LOCK:
            slot.building = False


__all__ = ["MOST_TOKENS", "build", "current", "keep", "release", "suits"]
