"""The links around a few documents, as the hybrid query's graph expansion reads them.

Only links that can touch the seeds are read: the seeds' own links, wiki
links whose target text can name a seed (an indexed, case-blind lookup), and
markdown links picked by row id (the search side groups the markdown links'
last path segments once per state of the link table,
:meth:`NeighbourLinkStore.stamp`).
Each row carries a graph summary of the document the link is written in
(``id``, ``docid``, ``uri``, ``title``, ``collection``, ``rel_path``) and
the link's ``kind``, ``target`` and ``link_collection``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView

_COLUMNS: Final = (
    "l.kind, l.target, l.collection AS link_collection, "
    "d.id, d.docid, d.uri, d.title, d.collection, d.rel_path"
)


class NeighbourLinkStore(Protocol):
    """Links of active documents that can reach or leave a few seed documents."""

    def stamp(self) -> tuple[int, int]:
        """The link table's newest row id and its row count (with the change journal's
        newest id: whether links can have changed)."""
        ...

    def markdown_targets(self) -> Iterator[tuple[int, str]]:
        """``(row id, target)`` of every markdown link, by row id."""
        ...

    def written_in(self, doc_ids: Sequence[int], limit: int) -> list[RowView]:
        """Up to ``limit`` links written in these (active) documents."""
        ...

    def wiki_naming(
        self, names: Sequence[str], doc_ids: Sequence[int], limit: int
    ) -> list[RowView]:
        """Up to ``limit`` wiki links of other active documents whose target is one of
        ``names`` (any case)."""
        ...

    def listed(self, rowids: Sequence[int], doc_ids: Sequence[int], limit: int) -> list[RowView]:
        """Up to ``limit`` of these links (by row id) of active documents other than
        ``doc_ids``, by row id."""
        ...


class SqliteNeighbourLinks:
    """:class:`NeighbourLinkStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def stamp(self) -> tuple[int, int]:
        row = self._conn.execute(
            "SELECT COALESCE(MAX(rowid), 0), COUNT(*) FROM doc_links"
        ).fetchone()
        return int(row[0]), int(row[1])

    def markdown_targets(self) -> Iterator[tuple[int, str]]:
        for rowid, target in self._conn.execute(
            "SELECT rowid, target FROM doc_links WHERE kind = 'markdown' ORDER BY rowid"
        ):
            yield int(rowid), str(target)

    def written_in(self, doc_ids: Sequence[int], limit: int) -> list[RowView]:
        marks = ", ".join("?" for _ in doc_ids)
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_COLUMNS} FROM doc_links l JOIN documents d ON d.id = l.doc_id "
            f"WHERE l.doc_id IN ({marks}) AND d.active = 1 LIMIT ?",
            [*doc_ids, limit],
        ).fetchall()
        return rows

    def wiki_naming(
        self, names: Sequence[str], doc_ids: Sequence[int], limit: int
    ) -> list[RowView]:
        marks = ", ".join("?" for _ in doc_ids)
        name_marks = ", ".join("?" for _ in names)
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_COLUMNS} FROM doc_links l JOIN documents d ON d.id = l.doc_id "
            f"WHERE l.kind = 'wiki' AND l.target COLLATE NOCASE IN ({name_marks}) "
            f"AND d.active = 1 AND l.doc_id NOT IN ({marks}) LIMIT ?",
            [*names, *doc_ids, limit],
        ).fetchall()
        return rows

    def listed(self, rowids: Sequence[int], doc_ids: Sequence[int], limit: int) -> list[RowView]:
        marks = ", ".join("?" for _ in doc_ids)
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_COLUMNS} FROM doc_links l JOIN documents d ON d.id = l.doc_id "
            f"WHERE l.rowid IN (SELECT value FROM json_each(?)) AND d.active = 1 "
            f"AND l.doc_id NOT IN ({marks}) ORDER BY l.rowid LIMIT ?",
            [json.dumps(list(rowids)), *doc_ids, limit],
        ).fetchall()
        return rows


__all__ = ["NeighbourLinkStore", "SqliteNeighbourLinks"]
