"""Document reads of a search: the rows its results are built from, by id, uri or mirror.

Every statement here takes the request's filters as a
:class:`~.document_filters.DocumentFilter` and reads many documents at once
(one statement per step of a search, never one per hit): search is the hot
path, so the batching is part of the contract.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView, mapped_rows
from gno_trio.engine.store.document_filters import ACTIVE, DocumentFilter

DOCUMENT_COLUMNS: Final = ", ".join(
    [
        *(
            f"d.{name}"
            for name in (
                "id",
                "collection",
                "rel_path",
                "docid",
                "uri",
                "title",
                "source_hash",
                "source_mime",
                "source_ext",
                "source_size",
                "source_mtime",
                "mirror_hash",
                "converter_id",
                "converter_version",
                "conversion_warnings_json",
                "content_type",
                "categories_json",
                "frontmatter_date",
            )
        ),
        "(SELECT path FROM collections WHERE name = d.collection) AS collection_root",
        "(SELECT json_group_array(tag) FROM doc_tags WHERE doc_id = d.id) AS tags_json",
    ]
)
"""Everything a search result is built from: the document's columns, its collection's
folder and its tags. Vector hits (which come with their window) read these."""

RESULT_COLUMNS: Final = (
    f"{DOCUMENT_COLUMNS}, "
    "(SELECT id FROM content_chunks WHERE mirror_hash = d.mirror_hash "
    "ORDER BY seq LIMIT 1) AS first_chunk, "
    "(SELECT id FROM content_chunks WHERE mirror_hash = d.mirror_hash "
    "ORDER BY seq DESC LIMIT 1) AS last_chunk"
)
"""A lexical hit also needs the id range of its chunks (where its snippet comes from),
read for the top rows only. A mirror's chunks are written together, in order: its first
and last chunk ids are those of its first and last seq (two index seeks, where MIN/MAX(id)
walk every chunk entry of a long page)."""


class SearchDocumentStore(Protocol):
    """The documents a search reads, many per statement."""

    def result_rows(self, doc_ids: Sequence[int]) -> dict[int, RowView]:
        """The result rows (with their chunk id range) of these active documents, by id."""
        ...

    def rows_passing(self, doc_ids: Sequence[int], where: DocumentFilter) -> dict[int, RowView]:
        """The result rows (without chunk ids) of these documents that pass ``where``."""
        ...

    def rows_holding(self, mirrors: Sequence[str], where: DocumentFilter) -> list[RowView]:
        """The result rows (without chunk ids) of the documents holding ``mirrors``
        that pass ``where``."""
        ...

    def mirrors_passing(self, where: DocumentFilter) -> list[str]:
        """The mirrors of the documents passing ``where`` (a mirror shared is listed twice)."""
        ...

    def ids_passing(self, where: DocumentFilter) -> str | None:
        """The ids of the documents passing ``where``, ascending, comma-separated."""
        ...

    def passes(self, doc_id: int, where: DocumentFilter) -> bool: ...

    def active_ids(self, uris: Sequence[str]) -> dict[str, int]:
        """The ids of the active documents at these uris."""
        ...

    def tags_by_doc(self, doc_ids: Sequence[int]) -> dict[int, list[str]]:
        """Each document's tags in order (documents without any left out)."""
        ...

    def collection_roots(self) -> dict[str, str]:
        """Each collection's folder."""
        ...


class SqliteSearchDocuments:
    """:class:`SearchDocumentStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def result_rows(self, doc_ids: Sequence[int]) -> dict[int, RowView]:
        # The id list drives the join (``CROSS JOIN`` keeps that order): left to itself
        # the planner walks every active document through the ``active`` index and tests
        # each against the list, milliseconds at 10,000 documents.
        if not doc_ids:
            return {}
        return {
            int(row["id"]): row
            for row in mapped_rows(
                self._conn.execute(
                    f"SELECT {RESULT_COLUMNS} FROM json_each(?) wanted "
                    f"CROSS JOIN documents d ON d.id = wanted.value WHERE {ACTIVE}",
                    (json.dumps(list(doc_ids)),),
                )
            )
        }

    def rows_passing(self, doc_ids: Sequence[int], where: DocumentFilter) -> dict[int, RowView]:
        marks = ", ".join("?" for _ in doc_ids)
        return {
            int(row["id"]): row
            for row in self._conn.execute(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents d WHERE d.id IN ({marks}) "
                f"AND {where.where}",
                [*doc_ids, *where.params],
            )
        }

    def rows_holding(self, mirrors: Sequence[str], where: DocumentFilter) -> list[RowView]:
        # Looked up by mirror: without ``INDEXED BY`` SQLite prefers the index on
        # ``active`` and reads every active document to find these few.
        if not mirrors:
            return []
        marks = ", ".join("?" for _ in mirrors)
        rows: list[RowView] = self._conn.execute(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents d INDEXED BY documents_mirror "
            f"WHERE d.mirror_hash IN ({marks}) AND {where.where}",
            [*mirrors, *where.params],
        ).fetchall()
        return rows

    def mirrors_passing(self, where: DocumentFilter) -> list[str]:
        # Not DISTINCT: documents sharing a mirror just mark it twice, where sorting
        # them out would cost SQLite a temporary b-tree (most of this statement's time).
        return [
            r[0]
            for r in self._conn.execute(
                f"SELECT d.mirror_hash FROM documents d WHERE {where.where} "
                "AND d.mirror_hash IS NOT NULL",
                where.params,
            )
        ]

    def ids_passing(self, where: DocumentFilter) -> str | None:
        (listed,) = self._conn.execute(
            f"SELECT group_concat(id) FROM (SELECT d.id AS id FROM documents d "
            f"WHERE {where.where} ORDER BY d.id)",
            where.params,
        ).fetchone()
        return None if listed is None else str(listed)

    def passes(self, doc_id: int, where: DocumentFilter) -> bool:
        sql = f"SELECT 1 FROM documents d WHERE d.id = ? AND {where.where}"
        return self._conn.execute(sql, (doc_id, *where.params)).fetchone() is not None

    def active_ids(self, uris: Sequence[str]) -> dict[str, int]:
        if not uris:
            return {}
        marks = ", ".join("?" for _ in uris)
        return {
            row[0]: int(row[1])
            for row in self._conn.execute(
                f"SELECT uri, id FROM documents WHERE active = 1 AND uri IN ({marks})", list(uris)
            )
        }

    def tags_by_doc(self, doc_ids: Sequence[int]) -> dict[int, list[str]]:
        if not doc_ids:
            return {}
        marks = ", ".join("?" for _ in doc_ids)
        found: dict[int, list[str]] = {}
        for doc_id, tag in self._conn.execute(
            f"SELECT doc_id, tag FROM doc_tags WHERE doc_id IN ({marks}) ORDER BY tag",
            tuple(doc_ids),
        ):
            found.setdefault(doc_id, []).append(tag)
        return found

    def collection_roots(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self._conn.execute("SELECT name, path FROM collections")}


__all__ = ["DOCUMENT_COLUMNS", "RESULT_COLUMNS", "SearchDocumentStore", "SqliteSearchDocuments"]
