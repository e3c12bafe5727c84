"""Where the link graph is read: the statements over links, typed edges and their documents.

Links (``doc_links``) and typed edges (``doc_edges``) are written by a sync
with their document; the graph package resolves their targets to active
documents and builds every view from them (:mod:`gno_trio.engine.graph`).
This module reads the rows, and writes a document's as a sync gives them
(inside its transaction). Every document row here carries the
columns of a graph summary: ``id``, ``docid``, ``uri``, ``title``,
``collection``, ``rel_path``; a link row adds ``kind``, ``target`` and
``link_collection`` (the collection the link names, if any).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final, Protocol

from gno_trio.engine.docmeta import Link
from gno_trio.engine.store.database import RowView
from gno_trio.engine.store.documents import SqliteDocuments

_SUMMARY: Final = "d.id, d.docid, d.uri, d.title, d.collection, d.rel_path"


class LinkStore(Protocol):
    """The links, typed edges and active documents of one index, as the graph reads them."""

    def collection_exists(self, name: str) -> bool: ...

    def active_documents(self, collection: str | None, *, by_uri: bool = False) -> list[RowView]:
        """Active documents (of ``collection``, all with None), by URI when asked."""
        ...

    def active_by_docid(self, docid: str) -> RowView | None:
        """The oldest active document with this docid."""
        ...

    def active_by_ids(self, ids: Sequence[int]) -> list[RowView]: ...

    def mirrors(self, ids: Sequence[int]) -> dict[int, str | None]:
        """The mirror hash of each document id that exists."""
        ...

    def all_links(self) -> list[RowView]:
        """Every link of an active document, in document and reading order."""
        ...

    def links_of(self, doc_id: int, kind: str | None) -> list[RowView]:
        """One document's links (of ``kind``) in reading order, with ``collection``,
        ``heading``, ``display``, ``line`` and ``col``."""
        ...

    def links_maybe_reaching(self, collection: str, source_collection: str | None) -> list[RowView]:
        """Links of active documents (of ``source_collection``) that can reach a document
        of ``collection``: written in it, naming it, or a ``gno://`` URI; by source URI,
        then position, with ``display``, ``line`` and ``col``."""
        ...

    def typed_edges(self, edge_type: str | None) -> list[RowView]:
        """Every typed edge (of ``edge_type``) of an active document, with ``edge_type``,
        ``target``, ``confidence`` and ``origin``, by document then edge."""
        ...

    def naming_collection(self, collection: str, uri_prefix: str) -> tuple[int, int]:
        """How many links of active documents name ``collection`` (by its name, or a URI
        starting with ``uri_prefix``, compared lower-cased), and in how many documents."""
        ...

    def replace(
        self,
        doc_id: int,
        links: Sequence[Link],
        relations: Sequence[tuple[str, str]],
        *,
        fresh: bool,
    ) -> None:
        """A document's links and ``(edge_type, target)`` typed edges, in place of the ones
        it had (``fresh``: a new document, it had none)."""
        ...


class SqliteLinks:
    """:class:`LinkStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def collection_exists(self, name: str) -> bool:
        return SqliteDocuments(self._conn).collection_exists(name)

    def active_documents(self, collection: str | None, *, by_uri: bool = False) -> list[RowView]:
        query = f"SELECT {_SUMMARY} FROM documents d WHERE d.active = 1"
        params: tuple[str, ...] = ()
        if collection is not None:
            query += " AND d.collection = ?"
            params = (collection,)
        if by_uri:
            query += " ORDER BY d.uri"
        rows: list[RowView] = self._conn.execute(query, params).fetchall()
        return rows

    def active_by_docid(self, docid: str) -> RowView | None:
        row: RowView | None = self._conn.execute(
            f"SELECT {_SUMMARY} FROM documents d WHERE d.docid = ? AND d.active = 1 "
            f"ORDER BY d.id LIMIT 1",
            (docid,),
        ).fetchone()
        return row

    def active_by_ids(self, ids: Sequence[int]) -> list[RowView]:
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_SUMMARY} FROM documents d WHERE d.id IN ({marks}) AND d.active = 1",
            list(ids),
        ).fetchall()
        return rows

    def mirrors(self, ids: Sequence[int]) -> dict[int, str | None]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._conn.execute(
            f"SELECT id, mirror_hash FROM documents WHERE id IN ({marks})", list(ids)
        )
        return {int(r[0]): r[1] for r in rows}

    def all_links(self) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            f"""
            SELECT l.kind, l.target, l.collection AS link_collection, {_SUMMARY}
            FROM doc_links l JOIN documents d ON d.id = l.doc_id
            WHERE d.active = 1
            ORDER BY d.id, l.line, l.col, l.rowid
            """
        ).fetchall()
        return rows

    def links_of(self, doc_id: int, kind: str | None) -> list[RowView]:
        query = (
            "SELECT kind, target, collection, heading, display, line, col FROM doc_links "
            "WHERE doc_id = ?"
        )
        params: tuple[object, ...] = (doc_id,)
        if kind is not None:
            query += " AND kind = ?"
            params += (kind,)
        rows: list[RowView] = self._conn.execute(
            query + " ORDER BY line, col, rowid", params
        ).fetchall()
        return rows

    def links_maybe_reaching(self, collection: str, source_collection: str | None) -> list[RowView]:
        query = f"""
            SELECT l.kind, l.target, l.collection AS link_collection, l.display, l.line, l.col,
                   {_SUMMARY}
            FROM doc_links l JOIN documents d ON d.id = l.doc_id
            WHERE d.active = 1
              AND (d.collection = :target_collection
                   OR l.collection = :target_collection
                   OR (l.kind = 'markdown' AND l.target LIKE 'gno://%'))
        """
        params: dict[str, str] = {"target_collection": collection}
        if source_collection is not None:
            query += " AND d.collection = :source_collection"
            params["source_collection"] = source_collection
        rows: list[RowView] = self._conn.execute(
            query + " ORDER BY d.uri, l.line, l.col, l.rowid", params
        ).fetchall()
        return rows

    def typed_edges(self, edge_type: str | None) -> list[RowView]:
        query = f"""
            SELECT e.edge_type, e.target, e.confidence, e.source AS origin, {_SUMMARY}
            FROM doc_edges e JOIN documents d ON d.id = e.src_doc_id
            WHERE d.active = 1
        """
        params: tuple[str, ...] = ()
        if edge_type is not None:
            query += " AND e.edge_type = ?"
            params = (edge_type,)
        rows: list[RowView] = self._conn.execute(
            query + " ORDER BY d.id, e.rowid", params
        ).fetchall()
        return rows

    def naming_collection(self, collection: str, uri_prefix: str) -> tuple[int, int]:
        row = self._conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT l.doc_id) FROM doc_links l "
            "JOIN documents d ON d.id = l.doc_id AND d.active = 1 "
            "WHERE l.collection = ? OR lower(substr(l.target, 1, ?)) = ?",
            (collection, len(uri_prefix), uri_prefix),
        ).fetchone()
        return int(row[0]), int(row[1])

    def replace(
        self,
        doc_id: int,
        links: Sequence[Link],
        relations: Sequence[tuple[str, str]],
        *,
        fresh: bool,
    ) -> None:
        if not fresh:
            self._conn.execute("DELETE FROM doc_links WHERE doc_id = ?", (doc_id,))
            self._conn.execute("DELETE FROM doc_edges WHERE src_doc_id = ?", (doc_id,))
        # Most documents have no links or edges: a statement is run only for rows to insert.
        if links:
            self._conn.executemany(
                """INSERT INTO doc_links(doc_id, kind, target, collection, heading, display,
                       line, col) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                [
                    (
                        doc_id,
                        ln.kind,
                        ln.target,
                        ln.collection,
                        ln.heading,
                        ln.display,
                        ln.line,
                        ln.col,
                    )
                    for ln in links
                ],
            )
        if relations:
            self._conn.executemany(
                "INSERT INTO doc_edges(src_doc_id, edge_type, target) VALUES (?, ?, ?)",
                [(doc_id, edge_type, target) for edge_type, target in relations],
            )
