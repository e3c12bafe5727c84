"""Housekeeping: dropping mirrors nothing refers to, merging the full-text indexes, upgrades.

Also the part of a schema upgrade that needs code (:func:`finish_upgrades`).
"""

from __future__ import annotations

from collections.abc import Iterable

from gno_trio.engine.store import fulltext, upgrades
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, release_free_pages, write_transaction

# A sync that changed at least this share of the active documents (an initial
# index, a bulk import) merges the full-text indexes afterwards.
_COMPACT_SHARE = 8


def compacts_after(changed: int, active: int) -> bool:
    """Whether a sync that changes ``changed`` of ``active`` documents merges the indexes after."""
    return changed > 0 and changed * _COMPACT_SHARE >= active


def compact_full_text(conn: Connection, changed: int) -> bool:
    """Merge each full-text index into one segment after a large sync.

    FTS5 appends a segment per batch of writes and merges them only lazily;
    every query then looks each term up in every segment (measured here: 3
    segments instead of 1 cost a search a fifth more in its chunk lookups).
    Merging rewrites the whole index (0.1 s for 350 pages), so it is only
    worth it when a large share of the documents changed at once.
    """
    if changed <= 0:
        return False
    if not compacts_after(changed, SQLITE_STORES.counts(conn).active_documents()):
        return False
    with write_transaction(conn):
        for table in ("documents_fts", "chunks_fts"):
            fulltext.optimize(conn, table)
    release_free_pages(conn)
    return True


def collect_garbage(conn: Connection, candidates: Iterable[str] | None = None) -> None:
    """Drop mirrors (and their chunks) that no document row refers to any more.

    ``candidates`` limits the check to mirrors a sync replaced; None checks
    every mirror (after a collection is removed).
    """
    mirrors = SQLITE_STORES.mirrors(conn)
    for mirror_hash in mirrors.unreferenced(candidates):
        mirrors.drop(mirror_hash)


def finish_upgrades(conn: Connection) -> None:
    """Work a migration left for code: redo the chunks of mirrors that begin with frontmatter.

    Migration 010 took the frontmatter out of chunks; mirrors chunked before
    it are chunked again here, once (the flag it set is cleared in the same
    transaction), and documents whose only author is their capture source
    get it as their author. Their vectors, if any, are dropped with their old
    chunks: the text they were computed from is gone. Only mirrors whose text
    starts with ``---`` can change, so this touches few rows on most indexes.
    """
    if not upgrades.rechunk_pending(conn):
        return
    # Chunking and writing load only when an index still needs this (every open checks).
    from gno_trio.engine.ingest.frontmatter import extract_meta
    from gno_trio.engine.ingest.prepare import body_chunks
    from gno_trio.engine.ingest.writes import insert_chunks

    with write_transaction(conn):
        if not upgrades.rechunk_pending(conn):  # another process finished it meanwhile
            return
        mirrors = SQLITE_STORES.mirrors(conn)
        for mirror_hash, markdown, markdown_only, language in upgrades.frontmatter_mirrors(conn):
            if not markdown_only:
                continue  # chunked from the top before and after
            meta = extract_meta(markdown, "upgrade.md")
            if meta.body_start_line <= 1:
                continue
            if meta.author:  # a captured note's source author counts as its author now
                for doc_id in upgrades.give_author(conn, mirror_hash, meta.author):
                    fulltext.refresh_metadata(conn, doc_id)
            mirrors.drop_chunks(mirror_hash)
            upgrades.drop_mirror_vectors(conn, mirror_hash)
            insert_chunks(
                conn, mirror_hash, markdown, body_chunks(markdown, meta, code=False), language
            )
        upgrades.rechunk_done(conn)
