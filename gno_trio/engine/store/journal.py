"""Where the change journal is kept: its statements, behind one protocol.

The journal's rules (what an entry says, the structure delta and its
bounds, retention, cursors, the ``changes`` page) live in
:mod:`gno_trio.engine.journal`; this module only stores and reads entries.
:class:`JournalStore` is what those rules ask of any store;
:class:`SqliteJournal` answers it on one SQLite connection, inside the
transaction of the call that holds it (a document write and its entry
commit together). A second database is a second class with these methods.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One retained entry: its sequence, what happened, and the two sides as recorded."""

    id: int
    kind: str
    collection: str
    observed_at: str
    previous: dict[str, Any] | None
    current: dict[str, Any] | None
    delta: dict[str, Any]


class JournalStore(Protocol):
    """The change journal of one index: entries numbered in the order they were written."""

    def append(
        self,
        kind: str,
        collection: str,
        observed_at: str,
        previous: Mapping[str, Any] | None,
        current: Mapping[str, Any] | None,
        delta: Mapping[str, Any],
    ) -> None:
        """One entry, numbered after every entry ever issued (pruned ones included)."""
        ...

    def prune(self, *, observed_before: str, keep: int) -> int:
        """Drop entries observed before ``observed_before`` and all but the newest
        ``keep``; how many went."""
        ...

    def bounds(self) -> tuple[int, int]:
        """(first retained id, last id ever issued). The last id survives retention;
        with no entry retained the first is the next one to be issued."""
        ...

    def page(
        self, *, after: int, observed_after: str | None, collection: str | None, limit: int
    ) -> list[JournalEntry]:
        """Entries after sequence ``after`` (and observed after ``observed_after``, in
        ``collection`` when given), oldest first, at most ``limit``."""
        ...

    def entry(self, sequence: int) -> JournalEntry | None: ...

    def of_collection(self, collection: str) -> list[JournalEntry]:
        """Every retained entry of ``collection``, newest first."""
        ...

    def latest(self, collection: str | None = None) -> int:
        """The newest sequence (of ``collection`` when given), 0 when there is none."""
        ...

    def generations(self) -> tuple[int, int]:
        """(newest sequence of any kind, newest that changed content), 0 for none."""
        ...

    def rename_collection(self, old: str, new: str) -> None:
        """Entries of collection ``old`` now name ``new``."""
        ...

    def links_and_edges(self, doc_id: int) -> tuple[list[str], list[tuple[str, str]]]:
        """The stored link targets and ``(edge type, target)`` pairs of one document,
        the structure an update is diffed against."""
        ...


def _entry(row: sqlite3.Row) -> JournalEntry:
    return JournalEntry(
        id=int(row["id"]),
        kind=row["kind"],
        collection=row["collection"],
        observed_at=row["observed_at"],
        previous=json.loads(row["previous_json"]) if row["previous_json"] else None,
        current=json.loads(row["current_json"]) if row["current_json"] else None,
        delta=json.loads(row["delta_json"] or "{}"),
    )


class SqliteJournal:
    """:class:`JournalStore` on one SQLite connection (``document_changes``, AUTOINCREMENT)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def append(
        self,
        kind: str,
        collection: str,
        observed_at: str,
        previous: Mapping[str, Any] | None,
        current: Mapping[str, Any] | None,
        delta: Mapping[str, Any],
    ) -> None:
        self._conn.execute(
            """INSERT INTO document_changes(kind, collection, observed_at, previous_json,
                   current_json, delta_json) VALUES (?, ?, ?, ?, ?, ?)""",
            (
                kind,
                collection,
                observed_at,
                json.dumps(previous) if previous is not None else None,
                json.dumps(current) if current is not None else None,
                json.dumps(delta),
            ),
        )

    def prune(self, *, observed_before: str, keep: int) -> int:
        conn = self._conn
        dropped = conn.execute(
            "DELETE FROM document_changes WHERE observed_at < ?", (observed_before,)
        ).rowcount
        dropped += conn.execute(
            "DELETE FROM document_changes WHERE id <= (SELECT MAX(id) FROM document_changes) - ?",
            (keep,),
        ).rowcount
        return int(dropped)

    def bounds(self) -> tuple[int, int]:
        # sqlite_sequence keeps the last id issued even when every entry was pruned.
        row = self._conn.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'document_changes'"
        ).fetchone()
        latest = int(row[0]) if row is not None and row[0] is not None else 0
        first = self._conn.execute("SELECT MIN(id) FROM document_changes").fetchone()[0]
        return (int(first) if first is not None else latest + 1), latest

    def page(
        self, *, after: int, observed_after: str | None, collection: str | None, limit: int
    ) -> list[JournalEntry]:
        clauses = ["id > ?"]
        params: list[Any] = [after]
        if observed_after is not None:
            clauses.append("observed_at > ?")
            params.append(observed_after)
        if collection is not None:
            clauses.append("collection = ?")
            params.append(collection)
        rows = self._conn.execute(
            f"SELECT * FROM document_changes WHERE {' AND '.join(clauses)} ORDER BY id LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [_entry(row) for row in rows]

    def entry(self, sequence: int) -> JournalEntry | None:
        row = self._conn.execute(
            "SELECT * FROM document_changes WHERE id = ?", (sequence,)
        ).fetchone()
        return None if row is None else _entry(row)

    def of_collection(self, collection: str) -> list[JournalEntry]:
        rows = self._conn.execute(
            "SELECT * FROM document_changes WHERE collection = ? ORDER BY id DESC", (collection,)
        ).fetchall()
        return [_entry(row) for row in rows]

    def latest(self, collection: str | None = None) -> int:
        if collection is None:
            row = self._conn.execute("SELECT MAX(id) FROM document_changes").fetchone()
        else:
            row = self._conn.execute(
                "SELECT MAX(id) FROM document_changes WHERE collection = ?", (collection,)
            ).fetchone()
        return int(row[0] or 0)

    def generations(self) -> tuple[int, int]:
        row = self._conn.execute(
            "SELECT COALESCE(MAX(id), 0), COALESCE(MAX(CASE WHEN kind IN "
            "('create', 'update', 'reactivate') THEN id END), 0) FROM document_changes"
        ).fetchone()
        return int(row[0]), int(row[1])

    def rename_collection(self, old: str, new: str) -> None:
        self._conn.execute(
            "UPDATE document_changes SET collection = ? WHERE collection = ?", (new, old)
        )

    def links_and_edges(self, doc_id: int) -> tuple[list[str], list[tuple[str, str]]]:
        links = [
            str(r[0])
            for r in self._conn.execute("SELECT target FROM doc_links WHERE doc_id = ?", (doc_id,))
        ]
        edges = [
            (str(r[0]), str(r[1]))
            for r in self._conn.execute(
                "SELECT edge_type, target FROM doc_edges WHERE src_doc_id = ?", (doc_id,)
            )
        ]
        return links, edges


__all__ = ["JournalEntry", "JournalStore", "SqliteJournal"]
