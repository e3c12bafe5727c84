"""Chunk text by chunk identity: the one place the semantic half reads chunk text.

Chunks are identified by ``(mirror_hash, seq)`` everywhere (vectors, fusion,
the embed backlog). Reading their text goes through :func:`chunk_texts` only,
so where chunk text lives can change without touching the callers: it is
cut from the document's mirror (the ``chunk_texts`` view, migration 11).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

ChunkKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class ChunkText:
    text: str
    start_line: int
    end_line: int
    language: str | None


def chunk_texts(conn: sqlite3.Connection, keys: Sequence[ChunkKey]) -> dict[ChunkKey, ChunkText]:
    """The text and line range of each chunk that exists (missing keys are left out)."""
    if not keys:
        return {}
    rows = conn.execute(
        "SELECT c.mirror_hash, c.seq, t.text, c.start_line, c.end_line, c.language "
        "FROM json_each(?) k JOIN content_chunks c "
        "ON c.mirror_hash = json_extract(k.value, '$[0]') "
        "AND c.seq = json_extract(k.value, '$[1]') "
        "JOIN chunk_texts t ON t.id = c.id",
        (json.dumps([[mirror, seq] for mirror, seq in keys]),),
    )
    return {
        (row[0], int(row[1])): ChunkText(row[2], int(row[3]), int(row[4]), row[5]) for row in rows
    }
