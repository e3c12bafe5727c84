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
from typing import Final

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


def index_document(
    conn: sqlite3.Connection, doc_id: int, *, filepath: str, title: str | None, body: str
) -> None:
    """(Re)write a document's row; call after its ``documents`` row and tags are written."""
    metadata = conn.execute(_METADATA_SQL, (doc_id,)).fetchone()
    author, tags, categories = metadata if metadata is not None else ("", "", "")
    conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
    conn.execute(_INSERT_SQL, (doc_id, filepath, title, body, author, tags, categories))


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
    "index_document",
    "refresh_metadata",
    "remove_document",
]
