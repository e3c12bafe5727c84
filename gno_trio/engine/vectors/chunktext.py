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

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

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
    conn: sqlite3.Connection, keys: Sequence[ChunkKey], *, byte_pos: bool = False
) -> dict[ChunkKey, ChunkText]:
    """The text and line range of each chunk that exists (missing keys are left out).

    ``byte_pos`` also reads where each chunk starts in its mirror's bytes.
    """
    if not keys:
        return {}
    where = (
        ", length(CAST(substr(m.markdown, 1, c.pos) AS BLOB)) FROM json_each(?) k "
        "JOIN content_chunks c ON c.mirror_hash = json_extract(k.value, '$[0]') "
        "AND c.seq = json_extract(k.value, '$[1]') "
        "JOIN content m ON m.mirror_hash = c.mirror_hash"
        if byte_pos
        else ", NULL FROM json_each(?) k JOIN content_chunks c "
        "ON c.mirror_hash = json_extract(k.value, '$[0]') "
        "AND c.seq = json_extract(k.value, '$[1]')"
    )
    rows = conn.execute(
        "SELECT c.mirror_hash, c.seq, t.text, c.start_line, c.end_line, c.language"
        f"{where} JOIN chunk_texts t ON t.id = c.id",
        (json.dumps([[mirror, seq] for mirror, seq in keys]),),
    )
    return {
        (row[0], int(row[1])): ChunkText(
            row[2], int(row[3]), int(row[4]), row[5], None if row[6] is None else int(row[6])
        )
        for row in rows
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
    conn: sqlite3.Connection, model_id: int, keys: Sequence[WindowKey]
) -> dict[WindowKey, PlacedWindow]:
    """The windows of ``keys`` whose vectors of ``model_id`` carry their place, cut by bytes.

    Keys of windows stored before places were (or in an index whose text is
    not UTF-8) are left out: the caller cuts those from the chunk text.
    """
    if not keys:
        return {}
    rows = conn.execute(
        "SELECT v.mirror_hash, v.seq, v.part, v.start_line, v.end_line, c.language, "
        "substr(CAST(m.markdown AS BLOB), v.byte_start + 1, v.byte_length) "
        # CROSS JOIN: SQLite would otherwise walk all of the model's rows by model_id.
        "FROM json_each(?) k CROSS JOIN content_vectors v "
        "ON v.mirror_hash = json_extract(k.value, '$[0]') "
        "AND v.seq = json_extract(k.value, '$[1]') AND v.model_id = ? "
        "AND v.part = json_extract(k.value, '$[2]') "
        "JOIN content_chunks c ON c.mirror_hash = v.mirror_hash AND c.seq = v.seq "
        "JOIN content m ON m.mirror_hash = v.mirror_hash "
        "WHERE v.byte_start IS NOT NULL",
        (json.dumps([list(key) for key in keys]), model_id),
    )
    found: dict[WindowKey, PlacedWindow] = {}
    for row in rows:
        try:
            text = bytes(row[6]).decode("utf-8")
        except UnicodeDecodeError:
            continue  # not a UTF-8 index: the caller's character cut answers
        found[(row[0], int(row[1]), int(row[2]))] = PlacedWindow(
            text, int(row[3]), int(row[4]), row[5]
        )
    return found


def text_is_utf8(conn: sqlite3.Connection) -> bool:
    """Whether the index stores text as UTF-8 (the bytes places count)."""
    row = conn.execute("PRAGMA encoding").fetchone()
    return row is not None and str(row[0]).upper() == "UTF-8"
