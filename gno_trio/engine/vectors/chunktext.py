"""Chunk text by chunk identity: the one place the semantic half reads chunk text.

Chunks are identified by ``(mirror_hash, seq)`` everywhere (vectors, fusion,
the embed backlog). Reading their text goes through this module only, so
where chunk text lives can change without touching the callers: it is cut
from the document's mirror (the ``chunk_texts`` view, migration 11).

Cutting a chunk by characters makes SQLite count the mirror's UTF-8
characters from its start: ~0.7 ms for a chunk deep in a long page, per
search hit. So each embedding window's place in its mirror, in bytes and
lines, is stored beside its vector (migration 18, :func:`place_windows`),
and a search hit's window is cut by bytes (:func:`placed_windows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gno_trio.engine.store.chunks import ChunkStore
from gno_trio.engine.store.vectors import VectorStore
from gno_trio.engine.vectors.embedder import window_spans

ChunkKey = tuple[str, int]
WindowKey = tuple[str, int, int]  # mirror_hash, seq, part


@dataclass(frozen=True, slots=True)
class ChunkText:
    text: str
    start_line: int
    end_line: int
    language: str | None
    # Where the chunk starts in its mirror's UTF-8 bytes (read only when asked for).
    byte_pos: int | None = None


@dataclass(frozen=True, slots=True)
class WindowPlace:
    """Where one embedding window lies: its bytes in the mirror and its line range."""

    byte_start: int
    byte_length: int
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class PlacedWindow:
    """A window's text, cut from its mirror by bytes, with its lines and language."""

    text: str
    start_line: int
    end_line: int
    language: str | None


def chunk_texts(
    chunks: ChunkStore, keys: Sequence[ChunkKey], *, byte_pos: bool = False
) -> dict[ChunkKey, ChunkText]:
    """The text and line range of each chunk that exists (missing keys are left out).

    ``byte_pos`` also reads where each chunk starts in its mirror's bytes.
    """
    return {
        (mirror, seq): ChunkText(text, start, end, language, pos)
        for mirror, seq, text, start, end, language, pos in chunks.texts(keys, byte_pos=byte_pos)
    }


def window_lines(chunk: ChunkText, offset: int, text: str) -> tuple[int, int]:
    """The first and last line of the window ``text`` found at ``offset`` in ``chunk``."""
    start = chunk.start_line + chunk.text.count("\n", 0, offset)
    return start, min(chunk.end_line, start + text.rstrip("\n").count("\n"))


def place_windows(chunk: ChunkText) -> list[WindowPlace]:
    """The place of each of ``chunk``'s embedding windows (read with ``byte_pos``)."""
    assert chunk.byte_pos is not None
    places = []
    byte = chunk.byte_pos
    done = 0
    for start, end in window_spans(chunk.text):
        byte += len(chunk.text[done:start].encode("utf-8"))
        done = start
        text = chunk.text[start:end]
        first, last = window_lines(chunk, start, text)
        places.append(WindowPlace(byte, len(text.encode("utf-8")), first, last))
    return places


def placed_windows(
    vectors: VectorStore, model_id: int, keys: Sequence[WindowKey]
) -> dict[WindowKey, PlacedWindow]:
    """The windows of ``keys`` whose vectors of ``model_id`` carry their place, cut by bytes.

    Keys of windows stored before places were (or in an index whose text is
    not UTF-8) are left out: the caller cuts those from the chunk text.
    """
    found: dict[WindowKey, PlacedWindow] = {}
    for mirror, seq, part, start, end, language, raw in vectors.placed(model_id, keys):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue  # not a UTF-8 index: the caller's character cut answers
        found[(mirror, seq, part)] = PlacedWindow(text, start, end, language)
    return found
