"""Housekeeping after a sync: dropping mirrors nothing refers to, merging the full-text indexes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from gno_trio.engine.store.database import write_transaction

# A sync that changed at least this share of the active documents (an initial
# index, a bulk import) merges the full-text indexes afterwards.
_COMPACT_SHARE = 8


def compact_full_text(conn: sqlite3.Connection, changed: int) -> bool:
    """Merge each full-text index into one segment after a large sync.

    FTS5 appends a segment per batch of writes and merges them only lazily;
    every query then looks each term up in every segment (measured here: 3
    segments instead of 1 cost a search a fifth more in its chunk lookups).
    Merging rewrites the whole index (0.1 s for 350 pages), so it is only
    worth it when a large share of the documents changed at once.
    """
    if changed <= 0:
        return False
    active = int(conn.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0])
    if changed * _COMPACT_SHARE < active:
        return False
    with write_transaction(conn):
        for table in ("documents_fts", "chunks_fts"):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    return True


def collect_garbage(conn: sqlite3.Connection, candidates: Iterable[str] | None = None) -> None:
    """Drop mirrors (and their chunks) that no document row refers to any more.

    ``candidates`` limits the check to mirrors a sync replaced; None checks
    every mirror (after a collection is removed).
    """
    if candidates is None:
        orphans = [
            row[0]
            for row in conn.execute(
                "SELECT mirror_hash FROM content WHERE mirror_hash NOT IN "
                "(SELECT mirror_hash FROM documents WHERE mirror_hash IS NOT NULL)"
            )
        ]
    else:
        orphans = [
            mirror
            for mirror in sorted(candidates)
            if conn.execute(
                "SELECT 1 FROM documents WHERE mirror_hash = ? LIMIT 1", (mirror,)
            ).fetchone()
            is None
        ]
    for mirror_hash in orphans:
        conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rowid, text, mirror_hash) "
            "SELECT 'delete', id, text, mirror_hash FROM chunk_texts WHERE mirror_hash = ?",
            (mirror_hash,),
        )
        conn.execute("DELETE FROM content_chunks WHERE mirror_hash = ?", (mirror_hash,))
        conn.execute("DELETE FROM content WHERE mirror_hash = ?", (mirror_hash,))
