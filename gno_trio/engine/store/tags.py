"""Where document tags are kept: the statements over ``doc_tags``, behind one protocol.

A tag comes from a note's text (front matter or an inline ``#tag``, written
by the sync) or from a user (``source = 'user'``, added by ``tag`` and
``capture``); tags compare lower-cased. The rules (which tags a user may
remove, rewriting a note's front matter) live in
:mod:`gno_trio.engine.ingest.tagging`; this module only reads and writes
rows, inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol


class TagStore(Protocol):
    """The tags of one index's documents."""

    def sources(self, doc_id: int) -> dict[str, str]:
        """Each tag of the document (lower-cased) and where it came from."""
        ...

    def source_of(self, doc_id: int, tag: str) -> str | None:
        """Where the document's tag ``tag`` (lower-case) came from, if it has it."""
        ...

    def of_document(self, doc_id: int) -> list[str]:
        """The document's tags, lower-cased, in tag order."""
        ...

    def add_user(self, doc_id: int, tags: Sequence[str]) -> None:
        """Give the document these user tags (one it has already stays as it is)."""
        ...

    def remove_user(self, doc_id: int, tag: str) -> None:
        """Take the user tag ``tag`` (lower-case) off the document."""
        ...

    def replace_from_text(self, doc_id: int, tags: Sequence[str], *, fresh: bool) -> None:
        """The tags the document's text gives it, in place of the ones it gave before
        (``fresh``: a new document, it had none); user tags stay."""
        ...


class SqliteTags:
    """:class:`TagStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def sources(self, doc_id: int) -> dict[str, str]:
        rows = self._conn.execute("SELECT tag, source FROM doc_tags WHERE doc_id = ?", (doc_id,))
        return {str(r[0]).lower(): str(r[1]) for r in rows}

    def source_of(self, doc_id: int, tag: str) -> str | None:
        row = self._conn.execute(
            "SELECT source FROM doc_tags WHERE doc_id = ? AND lower(tag) = ?", (doc_id, tag)
        ).fetchone()
        return None if row is None else str(row[0])

    def of_document(self, doc_id: int) -> list[str]:
        rows = self._conn.execute(
            "SELECT lower(tag) FROM doc_tags WHERE doc_id = ? ORDER BY tag", (doc_id,)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def add_user(self, doc_id: int, tags: Sequence[str]) -> None:
        self._conn.executemany(
            "INSERT OR IGNORE INTO doc_tags(doc_id, tag, source) VALUES (?, ?, 'user')",
            [(doc_id, tag) for tag in tags],
        )

    def remove_user(self, doc_id: int, tag: str) -> None:
        self._conn.execute(
            "DELETE FROM doc_tags WHERE doc_id = ? AND lower(tag) = ? AND source = 'user'",
            (doc_id, tag),
        )

    def replace_from_text(self, doc_id: int, tags: Sequence[str], *, fresh: bool) -> None:
        if not fresh:
            self._conn.execute(
                "DELETE FROM doc_tags WHERE doc_id = ? AND source = 'frontmatter'", (doc_id,)
            )
        if tags:
            self._conn.executemany(
                "INSERT OR IGNORE INTO doc_tags(doc_id, tag, source) VALUES (?, ?, 'frontmatter')",
                [(doc_id, tag) for tag in tags],
            )


__all__ = ["SqliteTags", "TagStore"]
