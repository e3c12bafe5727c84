"""Where documents are read back: the statements of ``get``, listings and tags, behind one protocol.

:mod:`gno_trio.engine.reads.documents` holds the rules (line numbering,
byte budgets, what a listing or a folder shows, errors); this module only
reads the rows. A listed row carries ``docid``, ``uri``, ``title``,
``collection``, ``rel_path``, ``source_mime``, ``source_size`` and
``source_mtime``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView, database_path

_LISTED: Final = "docid, uri, title, collection, rel_path, source_mime, source_size, source_mtime"


class DocumentStore(Protocol):
    """The documents of one index, as reads list and return them."""

    def collection_exists(self, name: str) -> bool: ...

    def is_empty(self) -> bool:
        """Whether the index has no collection at all."""
        ...

    def active_of(self, collection: str) -> list[RowView]:
        """The active documents of ``collection``, whole rows."""
        ...

    def conversion_warnings(self, collection: str) -> Iterator[tuple[str, str]]:
        """``(rel_path, warnings JSON)`` of the collection's active documents whose
        conversion left warnings, by path, read as they are consumed."""
        ...

    def delete_inactive(self) -> None:
        """Delete every inactive document row (its tags, links, edges and memory rows go
        with it), inside the caller's transaction."""
        ...

    def fingerprint_rows(self, collections: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """``(collection, uri, source_hash, mirror_hash)`` of the active documents of
        ``collections``, by collection then URI."""
        ...

    def database_file(self) -> str:
        """The path of the index's database file."""
        ...

    def by_path(self, collection: str, rel_path: str, *, inactive: bool) -> RowView | None:
        """The document at this path (an inactive one too with ``inactive``, the active
        first), whole row."""
        ...

    def by_docid(self, docid: str, *, prefix: bool, inactive: bool) -> RowView | None:
        """The document with this docid (or the first whose docid starts with it), as
        :meth:`by_path` chooses."""
        ...

    def active_at(self, collection: str, rel_path: str) -> RowView | None:
        """``id`` and ``docid`` of the active document at this path."""
        ...

    def active_paths(self, collection: str, *, except_id: int) -> list[str]:
        """Paths of the collection's active documents, but one."""
        ...

    def holds_under(self, collection: str, folder: str) -> bool:
        """Whether an active document lies under ``folder`` (a path without slash at
        either end)."""
        ...

    def hashes_at(self, uri: str) -> RowView | None:
        """``source_hash`` and ``mirror_hash`` of the active document at ``uri``."""
        ...

    def mirror(self, mirror_hash: str) -> str | None:
        """The stored Markdown mirror with this hash."""
        ...

    def quotable(self, uris: Sequence[str]) -> list[RowView]:
        """``uri``, ``docid``, ``collection``, ``title``, ``source_hash``, ``mirror_hash``,
        ``source_mtime`` and ``frontmatter_date`` of the active documents at ``uris``."""
        ...

    def active(self, *, by_uri: bool = False) -> list[RowView]:
        """Every active document, whole rows, by collection then path (or by URI)."""
        ...

    def tagged(self, tags: Sequence[str]) -> set[int]:
        """Ids of the documents carrying any of ``tags`` (compared lower-cased)."""
        ...

    def active_uri_by_docid_prefix(self, prefix: str) -> str | None:
        """The URI of an active document whose docid starts with ``prefix``."""
        ...

    def listed_count(self, collection: str | None, prefix: str | None) -> int:
        """How many active documents (of ``collection``, under path ``prefix``) there are."""
        ...

    def listed(
        self, collection: str | None, prefix: str | None, limit: int, offset: int
    ) -> list[RowView]:
        """One page of those documents, by collection then path."""
        ...

    def collection_counts(self) -> list[tuple[str, int]]:
        """Every collection with its active documents, by name."""
        ...

    def under(self, collection: str, prefix: str) -> list[RowView]:
        """The active documents of ``collection`` whose path starts with ``prefix``, by path."""
        ...

    def tag_counts(self, collection: str | None, prefix: str | None) -> list[tuple[str, int]]:
        """Tags (lower-cased, starting with ``prefix``) of active documents with how many
        documents carry each, most first then by tag."""
        ...


class SqliteDocuments:
    """:class:`DocumentStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def collection_exists(self, name: str) -> bool:
        found = self._conn.execute("SELECT 1 FROM collections WHERE name = ?", (name,))
        return found.fetchone() is not None

    def is_empty(self) -> bool:
        return self._conn.execute("SELECT 1 FROM collections LIMIT 1").fetchone() is None

    def database_file(self) -> str:
        return database_path(self._conn)

    def active_of(self, collection: str) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            "SELECT * FROM documents WHERE collection = ? AND active = 1", (collection,)
        ).fetchall()
        return rows

    def conversion_warnings(self, collection: str) -> Iterator[tuple[str, str]]:
        rows = self._conn.execute(
            "SELECT rel_path, conversion_warnings_json FROM documents WHERE collection = ? "
            "AND active = 1 AND conversion_warnings_json != '[]' ORDER BY rel_path",
            (collection,),
        )
        for row in rows:
            yield str(row[0]), str(row[1])

    def delete_inactive(self) -> None:
        self._conn.execute("DELETE FROM documents WHERE active = 0")

    def fingerprint_rows(self, collections: Sequence[str]) -> list[tuple[str, str, str, str]]:
        if not collections:
            return []
        marks = ", ".join("?" for _ in collections)
        rows = self._conn.execute(
            f"SELECT collection, uri, source_hash, mirror_hash FROM documents "
            f"WHERE active = 1 AND collection IN ({marks}) ORDER BY collection, uri",
            list(collections),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def _one(self, where: str, params: tuple[object, ...], inactive: bool) -> RowView | None:
        if not inactive:
            where += " AND active = 1"
        row: RowView | None = self._conn.execute(
            f"SELECT * FROM documents WHERE {where} ORDER BY active DESC, id LIMIT 1", params
        ).fetchone()
        return row

    def by_path(self, collection: str, rel_path: str, *, inactive: bool) -> RowView | None:
        return self._one("collection = ? AND rel_path = ?", (collection, rel_path), inactive)

    def by_docid(self, docid: str, *, prefix: bool, inactive: bool) -> RowView | None:
        if prefix:
            return self._one("substr(docid, 1, ?) = ?", (len(docid), docid), inactive)
        return self._one("docid = ?", (docid,), inactive)

    def active_at(self, collection: str, rel_path: str) -> RowView | None:
        row: RowView | None = self._conn.execute(
            "SELECT id, docid FROM documents WHERE collection = ? AND rel_path = ? AND active = 1",
            (collection, rel_path),
        ).fetchone()
        return row

    def active_paths(self, collection: str, *, except_id: int) -> list[str]:
        rows = self._conn.execute(
            "SELECT rel_path FROM documents WHERE active = 1 AND collection = ? AND id != ?",
            (collection, except_id),
        )
        return [str(r[0]) for r in rows]

    def holds_under(self, collection: str, folder: str) -> bool:
        # "/" sorts just before "0": the paths under the folder are the ones in between.
        row = self._conn.execute(
            "SELECT 1 FROM documents WHERE collection = ? AND active = 1 "
            "AND rel_path >= ? AND rel_path < ? LIMIT 1",
            (collection, folder + "/", folder + "0"),
        ).fetchone()
        return row is not None

    def hashes_at(self, uri: str) -> RowView | None:
        row: RowView | None = self._conn.execute(
            "SELECT source_hash, mirror_hash FROM documents WHERE uri = ? AND active = 1", (uri,)
        ).fetchone()
        return row

    def mirror(self, mirror_hash: str) -> str | None:
        found = self._conn.execute(
            "SELECT markdown FROM content WHERE mirror_hash = ?", (mirror_hash,)
        ).fetchone()
        return None if found is None else str(found[0])

    def quotable(self, uris: Sequence[str]) -> list[RowView]:
        if not uris:
            return []
        marks = ", ".join("?" for _ in uris)
        rows: list[RowView] = self._conn.execute(
            f"SELECT uri, docid, collection, title, source_hash, mirror_hash, source_mtime, "
            f"frontmatter_date FROM documents WHERE active = 1 AND uri IN ({marks})",
            tuple(uris),
        ).fetchall()
        return rows

    def active(self, *, by_uri: bool = False) -> list[RowView]:
        order = "uri" if by_uri else "collection, rel_path"
        rows: list[RowView] = self._conn.execute(
            f"SELECT * FROM documents WHERE active = 1 ORDER BY {order}"
        ).fetchall()
        return rows

    def tagged(self, tags: Sequence[str]) -> set[int]:
        if not tags:
            return set()
        marks = ", ".join("?" for _ in tags)
        rows = self._conn.execute(
            f"SELECT doc_id FROM doc_tags WHERE lower(tag) IN ({marks})", list(tags)
        )
        return {int(row[0]) for row in rows}

    def active_uri_by_docid_prefix(self, prefix: str) -> str | None:
        row = self._conn.execute(
            "SELECT uri FROM documents WHERE active = 1 AND docid LIKE ? LIMIT 1", (prefix + "%",)
        ).fetchone()
        return None if row is None else str(row[0])

    @staticmethod
    def _where(collection: str | None, prefix: str | None) -> tuple[str, list[object]]:
        clauses = ["active = 1"]
        params: list[object] = []
        if collection:
            clauses.append("collection = ?")
            params.append(collection)
        if prefix:
            clauses.append("substr(rel_path, 1, ?) = ?")
            params.extend([len(prefix), prefix])
        return " AND ".join(clauses), params

    def listed_count(self, collection: str | None, prefix: str | None) -> int:
        where, params = self._where(collection, prefix)
        row = self._conn.execute(f"SELECT COUNT(*) FROM documents WHERE {where}", params)
        return int(row.fetchone()[0])

    def listed(
        self, collection: str | None, prefix: str | None, limit: int, offset: int
    ) -> list[RowView]:
        where, params = self._where(collection, prefix)
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_LISTED} FROM documents WHERE {where} "
            f"ORDER BY collection, rel_path LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return rows

    def collection_counts(self) -> list[tuple[str, int]]:
        rows = self._conn.execute(
            "SELECT c.name AS name, COUNT(d.docid) AS n FROM collections c "
            "LEFT JOIN documents d ON d.collection = c.name AND d.active = 1 "
            "GROUP BY c.name ORDER BY c.name"
        )
        return [(str(r[0]), int(r[1])) for r in rows]

    def under(self, collection: str, prefix: str) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_LISTED} FROM documents WHERE active = 1 AND collection = ? "
            f"AND substr(rel_path, 1, ?) = ? ORDER BY rel_path",
            (collection, len(prefix), prefix),
        ).fetchall()
        return rows

    def tag_counts(self, collection: str | None, prefix: str | None) -> list[tuple[str, int]]:
        clauses = ["d.active = 1"]
        params: list[object] = []
        if collection:
            clauses.append("d.collection = ?")
            params.append(collection)
        if prefix:
            clauses.append("substr(lower(t.tag), 1, ?) = ?")
            params.extend([len(prefix), prefix.lower()])
        rows = self._conn.execute(
            f"SELECT lower(t.tag) AS tag, COUNT(DISTINCT d.id) AS n FROM doc_tags t "
            f"JOIN documents d ON d.id = t.doc_id WHERE {' AND '.join(clauses)} "
            f"GROUP BY lower(t.tag) ORDER BY n DESC, tag",
            params,
        )
        return [(str(r[0]), int(r[1])) for r in rows]


__all__ = ["DocumentStore", "SqliteDocuments"]
