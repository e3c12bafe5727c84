"""Sentence-window vectors: finer vectors for queries whose words the index lacks.

A chunk's vectors cover about 250 tokens each, and a question asked in
another language (or in other words) often matches one or two sentences of
a passage that is about something broader; the window's vector blurs them.
So, at index time, a chunk with more than :data:`SENTENCE_WINDOW` sentences
also gets a vector for each run of :data:`SENTENCE_WINDOW` sentences, every
:data:`SENTENCE_STRIDE` sentences (at most :data:`MAX_WINDOWS_PER_CHUNK`, longer
windows tiling a long chunk), worded without the document's title (which
every window of a page shares and so blurs them together again), stored in ``sentence_vectors``
(migration 19). The query pipeline reads them only for a low-coverage
query's best candidates (:func:`best_sentence_cosines`); queries whose words
the index holds never touch them.

A chunk with no such window gets one empty row (part -1), so the sentence
backlog (chunks with vectors but no sentence rows, filled by the same embed
run) stays a plain "NOT EXISTS" query.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.store.sentence_vectors import SentenceRow, SentenceVectorStore
from gno_trio.engine.store.vectors import ModelRow
from gno_trio.engine.vectors.storage import quantise

SENTENCE_WINDOW: Final = 3
"""Sentences per window."""
SENTENCE_STRIDE: Final = 2
"""Sentences from one window's start to the next (one sentence of overlap)."""
MAX_WINDOWS_PER_CHUNK: Final = 32
"""Bound on a chunk's windows (and so on the extra embedding work per chunk)."""
MAX_WINDOW_CHARS: Final = 600
"""A window's text is cut here (a run-on "sentence" must not cost a full chunk)."""
NO_WINDOWS: Final = -1
"""The part of the empty row that marks a chunk done without windows."""

_LINE = re.compile(r"\n+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])")
_WORDY = re.compile(r"[^\W_]")


def sentences(text: str) -> list[str]:
    """The chunk's sentences: each line split at sentence ends, pieces without a letter
    or digit (rules, table borders) left out."""
    found: list[str] = []
    for line in _LINE.split(text):
        for piece in _SENTENCE_END.split(line):
            piece = piece.strip()
            if _WORDY.search(piece):
                found.append(piece)
    return found


def sentence_windows(text: str) -> list[str]:
    """The chunk's sentence windows, in order (none for a chunk of few sentences).

    Windows of :data:`SENTENCE_WINDOW` sentences every :data:`SENTENCE_STRIDE`; a
    chunk that would get more than :data:`MAX_WINDOWS_PER_CHUNK` of them is tiled
    instead, with windows just long enough to cover it in that many (a stride wider
    than the window would skip sentences, and measurably loses answers).
    """
    found = sentences(text)
    if len(found) <= SENTENCE_WINDOW:
        return []
    size, stride = SENTENCE_WINDOW, SENTENCE_STRIDE
    if math.ceil((len(found) - size) / stride) + 1 > MAX_WINDOWS_PER_CHUNK:
        size = stride = max(SENTENCE_WINDOW, math.ceil(len(found) / MAX_WINDOWS_PER_CHUNK))
    last = len(found) - size
    starts = list(range(0, last + 1, stride))
    if starts[-1] != last:
        starts.append(last)
    return [" ".join(found[s : s + size])[:MAX_WINDOW_CHARS] for s in starts]


def store_windows(
    into: SentenceVectorStore,
    model: ModelRow,
    keys: Sequence[tuple[str, int, int]],
    vectors: npt.NDArray[np.float32] | None,
    done: Sequence[tuple[str, int]],
) -> None:
    """Insert sentence vectors (keys: mirror_hash, seq, part) and the empty rows of the
    ``done`` chunks that have none, inside the caller's transaction; only for chunks
    that still exist."""
    rows: list[SentenceRow] = []
    if vectors is not None and len(keys):
        codes, scales = quantise(vectors)
        rows = [
            (model.id, mirror, seq, part, codes[i].tobytes(), float(scales[i]))
            for i, (mirror, seq, part) in enumerate(keys)
        ]
    rows.extend((model.id, mirror, seq, NO_WINDOWS, b"", 0.0) for mirror, seq in done)
    into.add(rows)


def best_sentence_cosines(
    sentences: SentenceVectorStore,
    model_id: int,
    query: npt.NDArray[np.float32],
    doc_ids: Sequence[int],
) -> dict[int, float]:
    """Each document's best cosine to ``query`` over its sentence windows (documents
    without any are left out)."""
    rows = sentences.of_documents(model_id, doc_ids)
    if not rows:
        return {}
    codes = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.int8)
    matrix = codes.reshape(len(rows), -1).astype(np.float32)
    cosines = (matrix @ query.astype(np.float32)) * np.array([r[2] for r in rows], np.float32)
    best: dict[int, float] = {}
    for (doc_id, _, _), cosine in zip(rows, cosines.tolist(), strict=True):
        if cosine > best.get(doc_id, -2.0):
            best[doc_id] = float(cosine)
    return best


def disk_use(sentences: SentenceVectorStore) -> dict[str, int]:
    """How many sentence-window vectors are stored and the bytes of the pages their table
    and its index take on disk (their rows' own bytes where the store cannot tell)."""
    count, size = sentences.disk_use()
    return {"vectors": count, "bytes": size}


__all__ = [
    "MAX_WINDOWS_PER_CHUNK",
    "SENTENCE_STRIDE",
    "SENTENCE_WINDOW",
    "best_sentence_cosines",
    "disk_use",
    "sentence_windows",
    "sentences",
    "store_windows",
]
