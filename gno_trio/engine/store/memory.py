"""Where memory facts are read: the statements over the memory projection, behind one protocol.

A fact is *current* in a collection when its document is active, its file
validated (``memory_records.valid``), it shares a scope with the request
(``doc_memory_scopes``) and no active, valid fact of the same collection
supersedes it (``doc_edges``). Both conditions live in the ``WHERE`` clause
so that every ``LIMIT`` applies after them.

Facts are read from ``memory_records``, not re-parsed from their mirrors:
sync writes the mirror and its projection in one transaction, from one
validation, so the row always says what the mirror says, at a fraction of
the cost of parsing YAML per hit. Every fact row carries the columns of
:data:`_FACT_COLUMNS` (``uri``, ``docid``, ``record_id``, ``text``,
``scopes_json``, ``caller``, ``session``, ``created_at``, ``content_hash``,
``supersedes_json``, ``source``); :mod:`gno_trio.engine.memory` turns them
into facts and holds the rules of recall and remember.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Final, Protocol

from gno_trio.engine.store.database import RowView, write_transaction
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS

_CURRENT_FACTS_SQL: Final = """
    d.active = 1 AND d.collection = ? AND m.valid = 1
    AND EXISTS (SELECT 1 FROM doc_memory_scopes s WHERE s.document_id = d.id
                AND s.scope IN ({scopes}))
    AND NOT EXISTS (
        SELECT 1 FROM doc_edges e
        JOIN documents sd ON sd.id = e.src_doc_id
        JOIN memory_records sm ON sm.document_id = sd.id
        WHERE e.edge_type = 'supersedes' AND e.target = d.uri
          AND sd.active = 1 AND sd.collection = d.collection AND sm.valid = 1)
"""

_FACT_COLUMNS: Final = (
    "d.uri, d.docid, m.record_id, m.text, m.scopes_json, m.caller, m.session, m.created_at, "
    "m.content_hash, m.supersedes_json, m.source"
)
_WEIGHTS: Final = ", ".join(str(w) for w in FIELD_WEIGHTS)


def _current(scopes: Sequence[str]) -> str:
    """The condition (on ``d`` documents, ``m`` memory_records) for current in-scope facts;
    its parameters are the collection name followed by each scope."""
    return _CURRENT_FACTS_SQL.format(scopes=", ".join("?" for _ in scopes))


class FactStore(Protocol):
    """The memory facts of one index, as its projection holds them."""

    def ranked(
        self, match: str, collection: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[RowView, float]]:
        """Current in-scope facts matching the full-text ``match``, with their weighted
        BM25 rank (lower is better), best first."""
        ...

    def resembling(
        self, match: str, collection: str, scopes: Sequence[str], limit: int
    ) -> list[RowView]:
        """Current in-scope facts matching ``match``, by plain BM25, best first."""
        ...

    def current(self, collection: str, scopes: Sequence[str]) -> list[RowView]:
        """Every current in-scope fact, each with its document's ``mirror_hash``."""
        ...

    def by_hash(self, collection: str, scopes: Sequence[str], content_hash: str) -> RowView | None:
        """The oldest current in-scope fact with this content hash."""
        ...

    def at(self, uri: str, collection: str) -> RowView | None:
        """The active document at ``uri`` with its fact columns and ``valid`` (null when
        the document holds no fact)."""
        ...

    def successor(self, uri: str, collection: str) -> str | None:
        """The URI of the current fact that supersedes ``uri``, if any."""
        ...

    def indexed(self, collection: str, rel_path: str) -> RowView | None:
        """``uri``, ``docid`` and ``valid`` of the fact file at ``rel_path``, once indexed."""
        ...

    # -- the projection, as sync writes it (inside the caller's transaction) --

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """One write transaction for the block (rolled back on an exception)."""
        ...

    def clear(self, doc_id: int) -> None:
        """Forget the document's record and scopes."""
        ...

    def record_problem(self, doc_id: int, code: str, message: str) -> None:
        """Record that the document is a malformed fact file (after :meth:`clear`)."""
        ...

    def record_fact(
        self,
        doc_id: int,
        *,
        record_id: str,
        content_hash: str,
        caller: str,
        session: str,
        created_at: str,
        source: str | None,
        text: str,
        scopes: Sequence[str],
        supersedes: Sequence[str],
    ) -> None:
        """Record the document's valid fact and its scopes (after :meth:`clear`)."""
        ...

    def problems(self, collection: str, limit: int) -> list[tuple[str, str, str]]:
        """``(rel_path, code, message)`` of the collection's active malformed fact files."""
        ...

    def unprojected(self, collection: str, limit: int | None = None) -> list[RowView]:
        """``id``, ``rel_path`` and ``markdown`` of the collection's active documents that
        have no record yet (the first ``limit``)."""
        ...


class SqliteFacts:
    """:class:`FactStore` on one SQLite connection (full-text matches on FTS5)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def ranked(
        self, match: str, collection: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[RowView, float]]:
        rows = self._conn.execute(
            f"SELECT {_FACT_COLUMNS}, bm25(documents_fts, {_WEIGHTS}) AS rank "
            f"FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid "
            f"JOIN memory_records m ON m.document_id = d.id "
            f"WHERE documents_fts MATCH ? AND {_current(scopes)} "
            f"ORDER BY rank, d.id LIMIT ?",
            (match, collection, *scopes, limit),
        ).fetchall()
        return [(row, float(row["rank"])) for row in rows]

    def resembling(
        self, match: str, collection: str, scopes: Sequence[str], limit: int
    ) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM documents_fts JOIN documents d ON "
            f"d.id = documents_fts.rowid JOIN memory_records m ON m.document_id = d.id "
            f"WHERE documents_fts MATCH ? AND {_current(scopes)} "
            f"ORDER BY bm25(documents_fts) LIMIT ?",
            (match, collection, *scopes, limit),
        ).fetchall()
        return rows

    def current(self, collection: str, scopes: Sequence[str]) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            f"SELECT {_FACT_COLUMNS}, d.mirror_hash FROM documents d "
            f"JOIN memory_records m ON m.document_id = d.id WHERE {_current(scopes)}",
            (collection, *scopes),
        ).fetchall()
        return rows

    def by_hash(self, collection: str, scopes: Sequence[str], content_hash: str) -> RowView | None:
        row: RowView | None = self._conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM memory_records m "
            f"JOIN documents d ON d.id = m.document_id "
            f"WHERE m.content_hash = ? AND {_current(scopes)} "
            f"ORDER BY m.created_at LIMIT 1",
            (content_hash, collection, *scopes),
        ).fetchone()
        return row

    def at(self, uri: str, collection: str) -> RowView | None:
        row: RowView | None = self._conn.execute(
            f"SELECT {_FACT_COLUMNS}, m.valid FROM documents d "
            f"LEFT JOIN memory_records m ON m.document_id = d.id "
            f"WHERE d.uri = ? AND d.collection = ? AND d.active = 1",
            (uri, collection),
        ).fetchone()
        return row

    def successor(self, uri: str, collection: str) -> str | None:
        row = self._conn.execute(
            "SELECT sd.uri FROM doc_edges e JOIN documents sd ON sd.id = e.src_doc_id "
            "JOIN memory_records sm ON sm.document_id = sd.id "
            "WHERE e.edge_type = 'supersedes' AND e.target = ? AND sd.active = 1 "
            "AND sd.collection = ? AND sm.valid = 1 LIMIT 1",
            (uri, collection),
        ).fetchone()
        return str(row[0]) if row is not None else None

    def indexed(self, collection: str, rel_path: str) -> RowView | None:
        row: RowView | None = self._conn.execute(
            "SELECT d.uri, d.docid, m.valid FROM documents d JOIN memory_records m "
            "ON m.document_id = d.id WHERE d.collection = ? AND d.rel_path = ? "
            "AND d.active = 1",
            (collection, rel_path),
        ).fetchone()
        return row

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with write_transaction(self._conn):
            yield

    def clear(self, doc_id: int) -> None:
        self._conn.execute("DELETE FROM doc_memory_scopes WHERE document_id = ?", (doc_id,))
        self._conn.execute("DELETE FROM memory_records WHERE document_id = ?", (doc_id,))

    def record_problem(self, doc_id: int, code: str, message: str) -> None:
        self._conn.execute(
            "INSERT INTO memory_records(document_id, valid, problem_code, problem_message) "
            "VALUES (?, 0, ?, ?)",
            (doc_id, code, message),
        )

    def record_fact(
        self,
        doc_id: int,
        *,
        record_id: str,
        content_hash: str,
        caller: str,
        session: str,
        created_at: str,
        source: str | None,
        text: str,
        scopes: Sequence[str],
        supersedes: Sequence[str],
    ) -> None:
        self._conn.execute(
            """INSERT INTO memory_records(document_id, valid, record_id, content_hash, caller,
                   session, created_at, source, text, scopes_json, supersedes_json)
               VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                doc_id,
                record_id,
                content_hash,
                caller,
                session,
                created_at,
                source,
                text,
                json.dumps(list(scopes), ensure_ascii=False),
                json.dumps(list(supersedes), ensure_ascii=False),
            ),
        )
        self._conn.executemany(
            "INSERT OR IGNORE INTO doc_memory_scopes(scope, document_id) VALUES (?, ?)",
            [(scope, doc_id) for scope in scopes],
        )

    def problems(self, collection: str, limit: int) -> list[tuple[str, str, str]]:
        rows = self._conn.execute(
            "SELECT d.rel_path, m.problem_code, m.problem_message FROM memory_records m "
            "JOIN documents d ON d.id = m.document_id WHERE d.collection = ? AND d.active = 1 "
            "AND m.valid = 0 ORDER BY d.rel_path LIMIT ?",
            (collection, limit),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def unprojected(self, collection: str, limit: int | None = None) -> list[RowView]:
        sql = _UNPROJECTED_SQL if limit is None else f"{_UNPROJECTED_SQL} LIMIT {int(limit)}"
        rows: list[RowView] = self._conn.execute(sql, (collection,)).fetchall()
        return rows


_UNPROJECTED_SQL: Final = """
    SELECT d.id, d.rel_path, c.markdown FROM documents d
    JOIN content c ON c.mirror_hash = d.mirror_hash
    WHERE d.collection = ? AND d.active = 1
      AND NOT EXISTS (SELECT 1 FROM memory_records m WHERE m.document_id = d.id)
"""


__all__ = ["FactStore", "SqliteFacts"]
