"""What the database keeps of the tantivy document index: its state, change queue and feed.

The tantivy index is a copy kept beside the database
(:mod:`gno_trio.engine.search.docindex`); the database is its source of
truth. It records which index ranks documents and the generation of the
tantivy directory (``schema_meta``), queues every change to a document's
searchable columns (``doc_index_pending``, filled by migration 12's
triggers) and holds the rows the index is fed from. The feeder reads and
prunes the queue here and switches backends through
:meth:`DocumentIndexStore.switch`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final, Protocol

from gno_trio.engine.store.database import write_transaction

StateRow = tuple[str | None, str | None, int, str | None]
"""``(backend, tantivy generation, queue position, chunk index tokenizer)`` as stored."""

FeedRow = tuple[Any, ...]
"""One document as the index is fed it: ``(id, active, collection, rel_path, uri, title,
body or None, whole mirror when the body position is unknown, tags (lower-cased, unit
separated), categories (likewise), author key, language key, julian date, author text,
tags text, categories text, mime)``."""

_STATE_SQL: Final = (
    "SELECT (SELECT value FROM schema_meta WHERE key = 'document_index'), "
    "(SELECT value FROM schema_meta WHERE key = 'document_index_generation'), "
    "COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'doc_index_pending'), 0), "
    "(SELECT value FROM schema_meta WHERE key = 'fts_tokenizer')"
)
_FEED_SQL: Final = """
SELECT d.id, d.active, d.collection, d.rel_path, d.uri, COALESCE(d.title, ''),
       CASE WHEN d.body_pos IS NOT NULL THEN substr(c.markdown, d.body_pos + 1) END,
       CASE WHEN d.body_pos IS NULL THEN c.markdown END,
       (SELECT group_concat(lower(t.tag), char(31)) FROM doc_tags t WHERE t.doc_id = d.id),
       trim(COALESCE((SELECT group_concat(lower(j.value), char(31))
                      FROM json_each(d.categories_json) j), '')
            || char(31) || lower(COALESCE(d.content_type, '')), char(31)),
       lower(COALESCE(d.author, '')),
       COALESCE(lower(d.language_hint), '-'),
       julianday(COALESCE(d.frontmatter_date, d.source_mtime)),
       COALESCE(d.author, ''),
       COALESCE((SELECT group_concat(t.tag, ' ') FROM doc_tags t WHERE t.doc_id = d.id), ''),
       trim(COALESCE((SELECT group_concat(j.value, ' ') FROM json_each(d.categories_json) j), '')
            || ' ' || COALESCE(d.content_type, '')),
       d.source_mime
FROM documents d LEFT JOIN content c ON c.mirror_hash = d.mirror_hash
WHERE d.id IN (SELECT value FROM json_each(?))
"""
_SET_META_SQL: Final = (
    "INSERT INTO schema_meta(key, value) VALUES (?, ?) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)


class DocumentIndexStore(Protocol):
    """The document index's record in the database, read by searches and the feeder."""

    def state(self) -> StateRow:
        """The backend, generation, queue position and tokenizer, in one read."""
        ...

    def queued_after(self, position: int) -> list[int]:
        """The documents queued past ``position``, in queue order."""
        ...

    def any_queued(self) -> bool: ...

    def prune(self, position: int) -> bool:
        """Drop the queue up to ``position`` (its own transaction); False when the
        database was busy (the rows go with a later prune)."""
        ...

    def active_ids(self) -> list[int]: ...

    def feed_rows(self, doc_ids: Sequence[int]) -> list[FeedRow]:
        """These documents as the index is fed them (inactive ones too, to skip)."""
        ...

    def switch(self, backend: str, generation: str | None) -> None:
        """Record which index ranks documents (and the tantivy generation, None for none)
        and empty the queue; inside the caller's transaction."""
        ...

    def keep_memory_rows_only(self) -> None:
        """Empty ``documents_fts`` but for memory-managed collections' documents (memory
        recall ranks them with FTS5 whichever index ranks documents)."""
        ...

    def unindexed_active(self) -> list[int]:
        """Active documents ``documents_fts`` does not hold."""
        ...

    def julian_days(self, since: str | None, until: str | None) -> tuple[float | None, ...]:
        """These instants as the filters compare dates (julian days; None for none)."""
        ...


def json_ids(ids: Sequence[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


class SqliteDocumentIndex:
    """:class:`DocumentIndexStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def state(self) -> StateRow:
        mode, generation, position, tokenizer = self._conn.execute(_STATE_SQL).fetchone()
        return mode, generation, int(position), tokenizer

    def queued_after(self, position: int) -> list[int]:
        return [
            int(row[0])
            for row in self._conn.execute(
                "SELECT doc_id FROM doc_index_pending WHERE seq > ? ORDER BY seq", (position,)
            )
        ]

    def any_queued(self) -> bool:
        return self._conn.execute("SELECT 1 FROM doc_index_pending LIMIT 1").fetchone() is not None

    def prune(self, position: int) -> bool:
        try:
            with write_transaction(self._conn):
                self._conn.execute("DELETE FROM doc_index_pending WHERE seq <= ?", (position,))
        except sqlite3.OperationalError:
            return False
        return True

    def active_ids(self) -> list[int]:
        return [
            int(row[0]) for row in self._conn.execute("SELECT id FROM documents WHERE active = 1")
        ]

    def feed_rows(self, doc_ids: Sequence[int]) -> list[FeedRow]:
        return self._conn.execute(_FEED_SQL, (json_ids(doc_ids),)).fetchall()

    def switch(self, backend: str, generation: str | None) -> None:
        self._conn.execute(_SET_META_SQL, ("document_index", backend))
        if generation is None:
            self._conn.execute("DELETE FROM schema_meta WHERE key = 'document_index_generation'")
        else:
            self._conn.execute(_SET_META_SQL, ("document_index_generation", generation))
        self._conn.execute("DELETE FROM doc_index_pending")

    def keep_memory_rows_only(self) -> None:
        self._conn.execute(
            "DELETE FROM documents_fts WHERE rowid IN (SELECT d.id FROM documents d "
            "JOIN collections c ON c.name = d.collection WHERE c.memory_managed = 0)"
        )

    def unindexed_active(self) -> list[int]:
        return [
            int(row[0])
            for row in self._conn.execute(
                "SELECT id FROM documents WHERE active = 1 AND id NOT IN "
                "(SELECT rowid FROM documents_fts)"
            )
        ]

    def julian_days(self, since: str | None, until: str | None) -> tuple[float | None, ...]:
        return tuple(
            self._conn.execute("SELECT julianday(?), julianday(?)", (since, until)).fetchone()
        )


__all__ = ["DocumentIndexStore", "FeedRow", "SqliteDocumentIndex", "StateRow", "json_ids"]
