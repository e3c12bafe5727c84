"""Housekeeping: dropping mirrors nothing refers to, merging the full-text indexes, upgrades.

Also the part of a schema upgrade that needs code (:func:`finish_upgrades`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from gno_trio.engine.store import fulltext
from gno_trio.engine.store.database import release_free_pages, write_transaction

# A sync that changed at least this share of the active documents (an initial
# index, a bulk import) merges the full-text indexes afterwards.
_COMPACT_SHARE = 8


def compacts_after(changed: int, active: int) -> bool:
    """Whether a sync that changes ``changed`` of ``active`` documents merges the indexes after."""
    return changed > 0 and changed * _COMPACT_SHARE >= active


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
    if not compacts_after(changed, active):
        return False
    with write_transaction(conn):
        for table in ("documents_fts", "chunks_fts"):
            fulltext.optimize(conn, table)
    release_free_pages(conn)
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
        drop_chunks(conn, mirror_hash)
        conn.execute("DELETE FROM content WHERE mirror_hash = ?", (mirror_hash,))


def drop_chunks(conn: sqlite3.Connection, mirror_hash: str) -> None:
    """A mirror's chunks and their full-text entries (read through the view before they go)."""
    conn.execute(
        "INSERT INTO chunks_fts(chunks_fts, rowid, text, mirror_hash) "
        "SELECT 'delete', id, text, mirror_hash FROM chunk_texts WHERE mirror_hash = ?",
        (mirror_hash,),
    )
    conn.execute("DELETE FROM content_chunks WHERE mirror_hash = ?", (mirror_hash,))


_RECHUNK_FLAG = "rechunk_frontmatter"


def finish_upgrades(conn: sqlite3.Connection) -> None:
    """Work a migration left for code: redo the chunks of mirrors that begin with frontmatter.

    Migration 010 took the frontmatter out of chunks; mirrors chunked before
    it are chunked again here, once (the flag it set is cleared in the same
    transaction), and documents whose only author is their capture source
    get it as their author. Their vectors, if any, are dropped with their old
    chunks: the text they were computed from is gone. Only mirrors whose text
    starts with ``---`` can change, so this touches few rows on most indexes.
    """
    if not _upgrade_pending(conn):
        return
    # Chunking and writing load only when an index still needs this (every open checks).
    from gno_trio.engine.ingest.frontmatter import extract_meta
    from gno_trio.engine.ingest.prepare import body_chunks
    from gno_trio.engine.ingest.writes import insert_chunks

    with write_transaction(conn):
        if not _upgrade_pending(conn):  # another process finished it meanwhile
            return
        has_vectors = (
            conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'content_vectors'"
            ).fetchone()
            is not None
        )
        rows = conn.execute(
            "SELECT c.mirror_hash, c.markdown, "
            "(SELECT MIN(d.source_mime = 'text/markdown') FROM documents d "
            " WHERE d.mirror_hash = c.mirror_hash) AS markdown_only, "
            "(SELECT language FROM content_chunks k WHERE k.mirror_hash = c.mirror_hash "
            " ORDER BY seq LIMIT 1) AS language "
            "FROM content c WHERE substr(c.markdown, 1, 3) = '---' "
            "OR substr(c.markdown, 1, 4) = ?",
            ("\ufeff---",),
        ).fetchall()
        for mirror_hash, markdown, markdown_only, language in rows:
            if not markdown_only:
                continue  # chunked from the top before and after
            meta = extract_meta(str(markdown), "upgrade.md")
            if meta.body_start_line <= 1:
                continue
            if meta.author:  # a captured note's source author counts as its author now
                for (doc_id,) in conn.execute(
                    "SELECT id FROM documents WHERE mirror_hash = ? AND author IS NULL",
                    (mirror_hash,),
                ).fetchall():
                    conn.execute(
                        "UPDATE documents SET author = ? WHERE id = ?", (meta.author, doc_id)
                    )
                    fulltext.refresh_metadata(conn, int(doc_id))
            drop_chunks(conn, mirror_hash)
            if has_vectors:
                conn.execute("DELETE FROM content_vectors WHERE mirror_hash = ?", (mirror_hash,))
            insert_chunks(conn, mirror_hash, body_chunks(str(markdown), meta, code=False), language)
        conn.execute("DELETE FROM schema_meta WHERE key = ?", (_RECHUNK_FLAG,))


def _upgrade_pending(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute("SELECT 1 FROM schema_meta WHERE key = ?", (_RECHUNK_FLAG,)).fetchone()
        is not None
    )
