"""The document-level full-text index: its searchable fields, their weights, its writers.

``documents_fts`` holds one row per active document (rowid = documents.id)
with six fields:

* ``filepath``, ``title``, ``body``: GNO's three fields, with GNO's BM25
  weights 1.5, 4.0 and 1.0. The body is the text after the frontmatter.
* ``author``, ``tags``, ``categories`` (since migration 010): what the
  frontmatter says about the document, searchable like the text
  (``search alice`` finds the notes whose author is alice). Tags are all the
  document's tags (frontmatter, inline ``#tags`` and ones added with
  ``tags add``); categories include the content type.

The metadata fields are read from the ``documents`` row and ``doc_tags``
rather than passed in, so every writer (sync, rename, reactivation, tag
edits, the migration itself) produces the same row for the same document.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from gno_trio.engine.store.database import QUEUE_PAUSED

DOCUMENT_FIELDS: Final = ("filepath", "title", "body", "author", "tags", "categories")
FIELD_WEIGHTS: Final = (1.5, 4.0, 1.0, 2.0, 3.0, 2.0)
"""bm25() weights, in :data:`DOCUMENT_FIELDS` order."""

_METADATA_SQL: Final = """
SELECT COALESCE(d.author, ''),
       COALESCE((SELECT group_concat(t.tag, ' ') FROM doc_tags t WHERE t.doc_id = d.id), ''),
       trim(COALESCE((SELECT group_concat(j.value, ' ') FROM json_each(d.categories_json) j), '')
            || ' ' || COALESCE(d.content_type, ''))
FROM documents d WHERE d.id = ?
"""
_INSERT_SQL: Final = (
    f"INSERT INTO documents_fts(rowid, {', '.join(DOCUMENT_FIELDS)}) "
    f"VALUES ({', '.join('?' for _ in range(len(DOCUMENT_FIELDS) + 1))})"
)


_PAUSE_SQL: Final = (
    f"UPDATE schema_meta SET value = '{QUEUE_PAUSED}' "
    "WHERE key = 'document_index' AND value = 'tantivy'"
)
_RESUME_SQL: Final = (
    f"UPDATE schema_meta SET value = 'tantivy' "
    f"WHERE key = 'document_index' AND value = '{QUEUE_PAUSED}'"
)
_QUEUE_SQL: Final = "INSERT OR REPLACE INTO doc_index_pending(doc_id) VALUES (?)"

DocumentRow = tuple[int, str, str | None, str, str, str, str]
"""``documents_fts``'s rowid and fields, in :data:`DOCUMENT_FIELDS` order."""
_CHUNK_INSERT_SQL: Final = "INSERT INTO chunks_fts(rowid, text, mirror_hash) VALUES (?, ?, ?)"


class PendingRows:
    """Full-text rows a write transaction adds, written together just before it commits.

    FTS5 keeps the terms of new rows in memory and writes them out as a new
    segment whenever a later statement of the transaction opens a statement
    savepoint (an insert that fires a trigger does). Written one by one
    between the other rows of a sync, every chunk became a segment of its
    own and the index spent most of a bulk sync merging them (measured: a
    document row insert cost 0.7 ms instead of 0.15 ms). Queued here, a
    batch's rows make one segment. The queue holds at most one batch of
    text (the sync bounds a batch's characters).

    The writer must :meth:`flush` before it commits and before it deletes or
    reads full-text rows in the same transaction.

    New documents are queued for the tantivy document index here too, when
    tantivy ranks: migration 12's triggers cost a document insert 110 us of
    its 190 (measured on a 10,000-document index), so a sync creating
    documents pauses them (:meth:`pause_document_queue`, inside its
    transaction: no other connection ever sees it) and queues the new ids in
    one statement; :meth:`resume` puts the triggers back before any other
    write, and :meth:`flush` before the commit.
    """

    def __init__(self) -> None:
        self._document_deletes: list[tuple[int]] = []
        self._documents: list[DocumentRow] = []
        self._chunks: list[tuple[int, str, str]] = []
        self._queue_paused = False
        self._new_documents: list[tuple[int]] = []
        self.bulk = False
        """A bulk sync, merged once at its end: large flushes skip FTS5's incremental merging."""
        self.text_is_utf8: bool | None = None
        """Whether the database stores its text as UTF-8 (None: not asked yet). A database
        keeps the encoding it was created with, so the writer asks once, not per document."""

    def pause_document_queue(self, conn: sqlite3.Connection) -> bool:
        """Stop the triggers queueing changes; True if paused (tantivy ranks documents).

        Only for a transaction that creates documents and queues each with
        :meth:`new_document`; every other write must come after :meth:`resume`.
        """
        if not self._queue_paused:
            self._queue_paused = conn.execute(_PAUSE_SQL).rowcount == 1
        return self._queue_paused

    @property
    def queue_paused(self) -> bool:
        """Whether the triggers are paused (so tantivy ranks documents)."""
        return self._queue_paused

    def new_document(self, doc_id: int) -> None:
        """Queue a document created while the triggers are paused."""
        if self._queue_paused:
            self._new_documents.append((doc_id,))

    def resume(self, conn: sqlite3.Connection) -> None:
        """Queue the new documents and let the triggers queue changes again."""
        if self._new_documents:
            conn.executemany(_QUEUE_SQL, self._new_documents)
            self._new_documents.clear()
        if self._queue_paused:
            conn.execute(_RESUME_SQL)
            self._queue_paused = False

    def document(self, row: DocumentRow, *, fresh: bool) -> None:
        if not fresh:
            self._document_deletes.append((row[0],))
        self._documents.append(row)

    def chunk(self, rowid: int, text: str, mirror_hash: str) -> None:
        self._chunks.append((rowid, text, mirror_hash))

    def flush(self, conn: sqlite3.Connection) -> None:
        """Write the queued rows (deletes first) and empty the queue."""
        self.resume(conn)
        if self._document_deletes:
            conn.executemany("DELETE FROM documents_fts WHERE rowid = ?", self._document_deletes)
        _insert(conn, "documents_fts", _INSERT_SQL, self._documents, merge=not self.bulk)
        _insert(conn, "chunks_fts", _CHUNK_INSERT_SQL, self._chunks, merge=not self.bulk)
        self.clear()

    def clear(self) -> None:
        """Forget what is queued (after a rollback, which also undid a pause)."""
        self._queue_paused = False
        self._new_documents.clear()
        self._document_deletes.clear()
        self._documents.clear()
        self._chunks.clear()


BULK_ROWS: Final = 256
"""Rows from which one flush writes its table without FTS5's incremental merging."""
_AUTOMERGE: Final = 4
"""FTS5's default ``automerge``, put back after a bulk write."""


def _insert(
    conn: sqlite3.Connection, table: str, sql: str, rows: Sequence[tuple[Any, ...]], *, merge: bool
) -> None:
    """Insert a batch's rows; a large batch of a bulk sync (not ``merge``) without merging.

    With ``automerge`` FTS5 merges a little after every write, and a bulk
    sync paid for the same data merged at every level (a seventh of the
    chunk index's writing time on 10,000 notes). Turned off for the batch
    (inside its transaction, so a crash changes nothing) segments pile up
    only to FTS5's crisis merge, and the bulk sync's final merge
    (``upkeep.compact_full_text``) rewrites them once. Other syncs merge as
    usual, so the index of many small syncs keeps few segments.
    """
    if not rows:
        return
    if merge or len(rows) < BULK_ROWS:
        conn.executemany(sql, rows)
        return
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 0)")
    conn.executemany(sql, rows)
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {_AUTOMERGE})")


def index_document(
    conn: sqlite3.Connection,
    doc_id: int,
    *,
    filepath: str,
    title: str | None,
    body: str,
    fresh: bool = False,
    pending: PendingRows | None = None,
) -> None:
    """(Re)write a document's row; call after its ``documents`` row and tags are written.

    ``fresh``: the document has no row yet (nothing to delete). With
    ``pending`` the row is queued there instead of written now.
    """
    metadata = conn.execute(_METADATA_SQL, (doc_id,)).fetchone()
    author, tags, categories = metadata if metadata is not None else ("", "", "")
    row: DocumentRow = (doc_id, filepath, title, body, author, tags, categories)
    if pending is not None:
        pending.document(row, fresh=fresh)
        return
    if not fresh:
        conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
    conn.execute(_INSERT_SQL, row)


def index_chunk(
    conn: sqlite3.Connection,
    rowid: int,
    text: str,
    mirror_hash: str,
    pending: PendingRows | None = None,
) -> None:
    """A chunk's entry in ``chunks_fts`` (its text is read back through ``chunk_texts``)."""
    if pending is not None:
        pending.chunk(rowid, text, mirror_hash)
    else:
        conn.execute(_CHUNK_INSERT_SQL, (rowid, text, mirror_hash))


def optimize(conn: sqlite3.Connection, table: str) -> None:
    """Merge the full-text table ``table`` (``documents_fts`` or ``chunks_fts``) into one
    segment, inside the caller's transaction."""
    if table not in ("documents_fts", "chunks_fts"):
        raise ValueError(f"not a full-text table: {table}")
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def refresh_metadata(conn: sqlite3.Connection, doc_id: int) -> None:
    """Rewrite the metadata fields of an indexed document (after its tags changed)."""
    row = conn.execute(
        "SELECT filepath, title, body FROM documents_fts WHERE rowid = ?", (doc_id,)
    ).fetchone()
    if row is not None:  # an inactive document is not in the index
        index_document(conn, doc_id, filepath=row[0], title=row[1], body=row[2])


def remove_document(conn: sqlite3.Connection, doc_id: int) -> None:
    conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))


__all__ = [
    "DOCUMENT_FIELDS",
    "FIELD_WEIGHTS",
    "PendingRows",
    "index_chunk",
    "index_document",
    "refresh_metadata",
    "remove_document",
]
