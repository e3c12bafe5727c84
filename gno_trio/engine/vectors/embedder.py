"""The embedder port and the rules every backend shares.

A backend only turns a list of strings into a matrix. Everything else is
done here, once, for all of them: how a chunk or a query is worded for the
model (GNO's prompt profiles), the bound on input length, and the checks on
what comes back (right dimension, finite numbers, unit length). A backend
that answers with the wrong shape is an error, never a silently stored
vector.

Identity: every vector is stored under the model's ``key`` (URI plus
version). Vectors of different keys are never compared; a changed key makes
the old vectors stale and their chunks count as backlog again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from gno_trio.errors import GnoError

Matrix = npt.NDArray[np.float32]

# Error codes of the semantic half (the lexical leg keeps answering on all of them).
MODEL_NOT_FOUND: Final = "MODEL_NOT_FOUND"
MODEL_LOAD_FAILED: Final = "MODEL_LOAD_FAILED"
EMBED_ENDPOINT_FAILED: Final = "EMBED_ENDPOINT_FAILED"
EMBED_DIMENSION_MISMATCH: Final = "EMBED_DIMENSION_MISMATCH"
VECTORS_UNAVAILABLE: Final = "VECTORS_UNAVAILABLE"

# Longest text handed to a model, in characters. A chunk is at most ~3,500
# characters and its title is short, so documents are never cut in practice;
# the bound keeps a pasted book as a query (or a hyde passage) from costing
# seconds of CPU. The model reads only the first MAX_INPUT_CHARS characters.
MAX_INPUT_CHARS: Final = 8192
# Chunks are 800 tokens (GNO's size, kept for snippets and line anchors), but
# one vector per 800 tokens blurs a chunk's several topics together. Each
# chunk is embedded as windows of about 250 tokens that overlap a little; a
# chunk matches a query as well as its best window, and the window gives the
# line anchor. On the evaluation sets this lifts vector nDCG@10 from 0.90 to
# 0.95 (same-language) and 0.77 to 0.86 (cross-lingual).
WINDOW_CHARS: Final = 1000
WINDOW_OVERLAP: Final = 150
# Part of every stored model key: how chunks were worded and windowed. A
# change here makes existing vectors stale, so they are re-embedded.
VECTOR_SCHEME: Final = "w1000o150"
# GNO's profile for Qwen embedding models (URI mentions both "qwen" and "embed").
_QWEN_QUERY_PREFIX: Final = "Instruct: Retrieve relevant documents for the given query\nQuery: "


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """Which model made a vector: what the configuration named and its version.

    ``dimension`` is ``None`` for an endpoint until it has answered once.
    """

    uri: str
    version: str
    dimension: int | None

    @property
    def key(self) -> str:
        """The identity vectors are stored and compared under (URI, version, scheme)."""
        named = f"{self.uri}@{self.version}" if self.version else self.uri
        return f"{named};{VECTOR_SCHEME}"


class EmbeddingBackend(Protocol):
    """Turns texts into vectors; one default (the bundled model) and an HTTP endpoint."""

    @property
    def identity(self) -> ModelIdentity: ...

    def embed_texts(self, texts: Sequence[str]) -> Matrix:
        """One row per text, in order. Rows need not be normalised."""
        ...


def _qwen(uri: str) -> bool:
    lowered = uri.lower()
    return "qwen" in lowered and "embed" in lowered


def document_text(uri: str, title: str | None, text: str) -> str:
    """How a chunk is worded for the model: its document's title, then its text."""
    if _qwen(uri):
        worded = f"{title}\n{text}" if title else text
    else:
        worded = f"title: {title or 'none'} | text: {text}"
    return worded[:MAX_INPUT_CHARS]


def windows(text: str) -> list[tuple[int, str]]:
    """A chunk's embedding windows as ``(offset in the chunk, text)``, in order.

    Each window ends at a line break in its second half when there is one,
    and the next starts :data:`WINDOW_OVERLAP` characters before that end.
    A chunk up to 1.3 windows long is one window.
    """
    return [(start, text[start:end]) for start, end in window_spans(text)]


def window(text: str, part: int) -> tuple[int, str]:
    """Window ``part`` of :func:`windows` (the first when there are fewer), cut alone."""
    first: tuple[int, int] | None = None
    for index, span in enumerate(window_spans(text)):
        if index == part:
            return span[0], text[span[0] : span[1]]
        first = first or span
    start, end = first or (0, 0)
    return start, text[start:end]


def window_spans(text: str) -> Iterator[tuple[int, int]]:
    """``[start, end)`` of each window of :func:`windows`, in order."""
    if len(text) <= WINDOW_CHARS * 13 // 10:
        yield 0, len(text)
        return
    start = 0
    while start < len(text):
        end = min(len(text), start + WINDOW_CHARS)
        if end < len(text):
            cut = text.rfind("\n", start + WINDOW_CHARS // 2, end)
            if cut > start:
                end = cut
        if len(text) - end < WINDOW_CHARS // 4:  # no tiny tail window
            end = len(text)
        yield start, end
        if end >= len(text):
            return
        start = max(end - WINDOW_OVERLAP, start + 1)


def query_text(uri: str, query: str) -> str:
    """How a search query is worded for the model (as typed, for the bundled model)."""
    worded = _QWEN_QUERY_PREFIX + query if _qwen(uri) else query
    return worded[:MAX_INPUT_CHARS]


def checked(matrix: object, rows: int, identity: ModelIdentity) -> Matrix:
    """A backend's answer as ``rows`` unit-length float32 rows, or a clear error."""
    try:
        array = np.asarray(matrix, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise GnoError(EMBED_ENDPOINT_FAILED, f"Model {identity.uri} returned no vectors") from exc
    if array.ndim != 2 or array.shape[0] != rows:
        raise GnoError(
            EMBED_ENDPOINT_FAILED,
            f"Model {identity.uri} returned {array.shape[0] if array.ndim else 0} vectors "
            f"for {rows} texts",
        )
    expected = identity.dimension
    if expected is not None and array.shape[1] != expected:
        raise GnoError(
            EMBED_DIMENSION_MISMATCH,
            f"Model {identity.uri} returned {array.shape[1]}-dimensional vectors; "
            f"{expected} expected",
        )
    if array.shape[1] == 0 or not np.isfinite(array).all():
        raise GnoError(EMBED_ENDPOINT_FAILED, f"Model {identity.uri} returned invalid numbers")
    norms = np.linalg.norm(array, axis=1)
    if (norms == 0).any():
        raise GnoError(EMBED_ENDPOINT_FAILED, f"Model {identity.uri} returned a zero vector")
    result: Matrix = (array / norms[:, None]).astype(np.float32, copy=False)
    return result


def embed_query(backend: EmbeddingBackend, query: str) -> npt.NDArray[np.float32]:
    """The unit vector of a search query (``INVALID_INPUT`` when it has no text)."""
    if not query.strip():
        raise GnoError("INVALID_INPUT", "Query must not be empty")
    identity = backend.identity
    row: npt.NDArray[np.float32] = checked(
        backend.embed_texts([query_text(identity.uri, query.strip())]), 1, identity
    )[0]
    return row


def embed_passage(backend: EmbeddingBackend, text: str) -> npt.NDArray[np.float32]:
    """The unit vector of a passage written by the caller (a hyde answer): worded as a chunk."""
    identity = backend.identity
    row: npt.NDArray[np.float32] = checked(
        backend.embed_texts([document_text(identity.uri, None, text.strip())]), 1, identity
    )[0]
    return row
