"""Where retrieval traces are kept: their statements, behind one protocol.

The trace rules (:mod:`gno_trio.engine.traces`) decide what a trace and its
records say, when a trace is finished, what retention drops first and what
an export holds; this module only stores and reads their rows: one row per
trace (its creation record as canonical JSON, its status, times, record
count and bytes), its records keyed by ``(trace, section, idempotency
key)``, the exports and their links to traces, and a little per-index
state. :class:`TraceStore` is what the rules ask of any store;
:class:`SqliteTraces` answers it on one SQLite connection. A rule that must
hold across several statements runs them inside :meth:`TraceStore.writing`.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from gno_trio.engine.store import pages
from gno_trio.engine.store.database import RowView, write_transaction


class TraceStore(Protocol):
    """The stored retrieval traces of one index."""

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """One write transaction for the block (rolled back on an exception)."""
        ...

    def erasing(self) -> contextlib.AbstractContextManager[None]:
        """Rows deleted in the block are overwritten on disk, not only unlinked."""
        ...

    def cleanup(self) -> dict[str, Any]:
        """Fold what deletions left behind into the file; how far that got."""
        ...

    # -- traces --

    def trace(self, trace_id: str) -> RowView | None:
        """A trace's row: ``trace_id``, ``status``, ``created_at_ms``, ``updated_at_ms``,
        ``expires_at_ms``, ``byte_size``, ``records`` and ``creation`` (JSON text)."""
        ...

    def page(
        self, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[RowView], pages.PageKey | None]:
        """Traces newest first, and the key of the next page (None at the end)."""
        ...

    def newest_created(self) -> int | None: ...

    def insert_trace(
        self, trace_id: str, moment: int, expires_at_ms: int, byte_size: int, creation: str
    ) -> None:
        """A new open trace with no records."""
        ...

    def grow(self, trace_id: str, byte_size: int, moment: int, status: str) -> None:
        """One more record of ``byte_size`` bytes, written at ``moment``; the status then."""
        ...

    def finish(self, trace_id: str, status: str, moment: int) -> None:
        """An open trace takes its final status (a finished one keeps its own)."""
        ...

    def settle(self, trace_id: str, idle_ms: int, moment: int) -> None:
        """An open trace idle for ``idle_ms`` by ``moment`` is recorded ``completed``."""
        ...

    def totals(self) -> tuple[int, int]:
        """How many traces, and their bytes."""
        ...

    def oldest_first(self) -> list[tuple[str, int]]:
        """Every trace id with its bytes, oldest first."""
        ...

    def delete_expired(self, moment: int) -> None: ...

    def delete_trace(self, trace_id: str) -> None:
        """One trace and its records and export links."""
        ...

    def delete_all(self) -> None:
        """Every trace, record, export and link."""
        ...

    def counts(self, trace_id: str | None = None) -> tuple[int, dict[str, int], int]:
        """Traces, records by section and export links, of one trace or of all."""
        ...

    # -- records --

    def records(
        self, trace_id: str, section: str, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Up to ``limit`` record bodies of one section in write order, and how many."""
        ...

    def record(self, trace_id: str, section: str, idempotency_key: str) -> dict[str, Any] | None:
        """The body stored under an idempotency key, if any."""
        ...

    def insert_record(
        self,
        record_id: str,
        trace_id: str,
        section: str,
        seq: int,
        idempotency_key: str,
        moment: int,
        body: str,
    ) -> None: ...

    # -- exports --

    def exports_of(self, trace_id: str) -> list[RowView]:
        """``export_id``, ``format``, ``artifact_hash``, ``created_at_ms`` of the exports
        holding a trace, oldest first."""
        ...

    def export(self, export_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A stored export's manifest and artifact."""
        ...

    def insert_export(
        self,
        export_id: str,
        export_format: str,
        artifact_hash: str,
        moment: int,
        manifest: str,
        artifact: str,
        trace_ids: Sequence[str],
    ) -> None: ...

    def export_count(self) -> int: ...

    def drop_orphan_exports(self) -> int:
        """Exports no trace links to any more go; how many."""
        ...

    # -- state --

    def state(self, key: str, make: Callable[[], str]) -> str:
        """The value kept under ``key``, ``make()`` stored first when there is none."""
        ...


class SqliteTraces:
    """:class:`TraceStore` on one SQLite connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with write_transaction(self._conn):
            yield

    def erasing(self) -> contextlib.AbstractContextManager[None]:
        return pages.secure_deletion(self._conn)

    def cleanup(self) -> dict[str, Any]:
        return pages.physical_cleanup(self._conn)

    def trace(self, trace_id: str) -> RowView | None:
        row: sqlite3.Row | None = self._conn.execute(
            "SELECT * FROM retrieval_traces WHERE trace_id = ?", (trace_id,)
        ).fetchone()
        return row

    def page(
        self, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[RowView], pages.PageKey | None]:
        rows, following = pages.newest_first(
            self._conn, table="retrieval_traces", id_column="trace_id", limit=limit, after=after
        )
        return list(rows), following

    def newest_created(self) -> int | None:
        newest = self._conn.execute("SELECT MAX(created_at_ms) FROM retrieval_traces").fetchone()
        return None if newest[0] is None else int(newest[0])

    def insert_trace(
        self, trace_id: str, moment: int, expires_at_ms: int, byte_size: int, creation: str
    ) -> None:
        self._conn.execute(
            "INSERT INTO retrieval_traces (trace_id, status, created_at_ms, updated_at_ms, "
            "expires_at_ms, byte_size, records, creation) VALUES (?, 'open', ?, ?, ?, ?, 0, ?)",
            (trace_id, moment, moment, expires_at_ms, byte_size, creation),
        )

    def grow(self, trace_id: str, byte_size: int, moment: int, status: str) -> None:
        self._conn.execute(
            "UPDATE retrieval_traces SET records = records + 1, byte_size = byte_size + ?, "
            "updated_at_ms = ?, status = ? WHERE trace_id = ?",
            (byte_size, moment, status, trace_id),
        )

    def finish(self, trace_id: str, status: str, moment: int) -> None:
        self._conn.execute(
            "UPDATE retrieval_traces SET status = ?, updated_at_ms = ? "
            "WHERE trace_id = ? AND status = 'open'",
            (status, moment, trace_id),
        )

    def settle(self, trace_id: str, idle_ms: int, moment: int) -> None:
        self._conn.execute(
            "UPDATE retrieval_traces SET status = 'completed' WHERE trace_id = ? "
            "AND status = 'open' AND updated_at_ms + ? <= ?",
            (trace_id, idle_ms, moment),
        )

    def totals(self) -> tuple[int, int]:
        count, size = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(byte_size), 0) FROM retrieval_traces"
        ).fetchone()
        return int(count), int(size)

    def oldest_first(self) -> list[tuple[str, int]]:
        rows = self._conn.execute(
            "SELECT trace_id, byte_size FROM retrieval_traces ORDER BY created_at_ms, trace_id"
        ).fetchall()
        return [(str(row["trace_id"]), int(row["byte_size"])) for row in rows]

    def delete_expired(self, moment: int) -> None:
        self._conn.execute("DELETE FROM retrieval_traces WHERE expires_at_ms <= ?", (moment,))

    def delete_trace(self, trace_id: str) -> None:
        self._conn.execute("DELETE FROM retrieval_traces WHERE trace_id = ?", (trace_id,))

    def delete_all(self) -> None:
        self._conn.execute("DELETE FROM retrieval_traces")
        self._conn.execute("DELETE FROM retrieval_trace_exports")

    def counts(self, trace_id: str | None = None) -> tuple[int, dict[str, int], int]:
        where, params = ("WHERE trace_id = ?", (trace_id,)) if trace_id is not None else ("", ())
        conn = self._conn
        traces = conn.execute(f"SELECT COUNT(*) FROM retrieval_traces {where}", params).fetchone()
        sections = {
            str(row[0]): int(row[1])
            for row in conn.execute(
                f"SELECT section, COUNT(*) FROM retrieval_trace_records {where} GROUP BY section",
                params,
            )
        }
        links = conn.execute(
            f"SELECT COUNT(*) FROM retrieval_trace_export_links {where}", params
        ).fetchone()
        return int(traces[0]), sections, int(links[0])

    def records(
        self, trace_id: str, section: str, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        total = self._conn.execute(
            "SELECT COUNT(*) FROM retrieval_trace_records WHERE trace_id = ? AND section = ?",
            (trace_id, section),
        ).fetchone()
        rows = self._conn.execute(
            "SELECT body FROM retrieval_trace_records WHERE trace_id = ? AND section = ? "
            "ORDER BY seq LIMIT ?",
            (trace_id, section, -1 if limit is None else limit),
        ).fetchall()
        return [json.loads(row["body"]) for row in rows], int(total[0])

    def record(self, trace_id: str, section: str, idempotency_key: str) -> dict[str, Any] | None:
        row = self._conn.execute(
            "SELECT body FROM retrieval_trace_records "
            "WHERE trace_id = ? AND section = ? AND idempotency_key = ?",
            (trace_id, section, idempotency_key),
        ).fetchone()
        return None if row is None else dict(json.loads(row["body"]))

    def insert_record(
        self,
        record_id: str,
        trace_id: str,
        section: str,
        seq: int,
        idempotency_key: str,
        moment: int,
        body: str,
    ) -> None:
        self._conn.execute(
            "INSERT INTO retrieval_trace_records (record_id, trace_id, section, seq, "
            "idempotency_key, created_at_ms, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (record_id, trace_id, section, seq, idempotency_key, moment, body),
        )

    def exports_of(self, trace_id: str) -> list[RowView]:
        rows: list[RowView] = self._conn.execute(
            "SELECT e.export_id, e.format, e.artifact_hash, e.created_at_ms "
            "FROM retrieval_trace_exports e JOIN retrieval_trace_export_links l "
            "ON l.export_id = e.export_id WHERE l.trace_id = ? "
            "ORDER BY e.created_at_ms, e.export_id",
            (trace_id,),
        ).fetchall()
        return rows

    def export(self, export_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        row = self._conn.execute(
            "SELECT manifest, artifact FROM retrieval_trace_exports WHERE export_id = ?",
            (export_id,),
        ).fetchone()
        if row is None:
            return None
        return json.loads(row["manifest"]), json.loads(row["artifact"])

    def insert_export(
        self,
        export_id: str,
        export_format: str,
        artifact_hash: str,
        moment: int,
        manifest: str,
        artifact: str,
        trace_ids: Sequence[str],
    ) -> None:
        self._conn.execute(
            "INSERT INTO retrieval_trace_exports (export_id, format, artifact_hash, "
            "created_at_ms, manifest, artifact) VALUES (?, ?, ?, ?, ?, ?)",
            (export_id, export_format, artifact_hash, moment, manifest, artifact),
        )
        self._conn.executemany(
            "INSERT INTO retrieval_trace_export_links (export_id, trace_id) VALUES (?, ?)",
            [(export_id, trace_id) for trace_id in trace_ids],
        )

    def export_count(self) -> int:
        row = self._conn.execute("SELECT COUNT(*) FROM retrieval_trace_exports").fetchone()
        return int(row[0])

    def drop_orphan_exports(self) -> int:
        return int(
            self._conn.execute(
                "DELETE FROM retrieval_trace_exports WHERE export_id NOT IN "
                "(SELECT export_id FROM retrieval_trace_export_links)"
            ).rowcount
        )

    def state(self, key: str, make: Callable[[], str]) -> str:
        conn = self._conn
        row = conn.execute(
            "SELECT value FROM retrieval_trace_state WHERE key = ?", (key,)
        ).fetchone()
        if row is not None:
            return str(row["value"])
        with write_transaction(conn):
            conn.execute(
                "INSERT OR IGNORE INTO retrieval_trace_state (key, value) VALUES (?, ?)",
                (key, make()),
            )
            row = conn.execute(
                "SELECT value FROM retrieval_trace_state WHERE key = ?", (key,)
            ).fetchone()
        return str(row["value"])


__all__ = ["SqliteTraces", "TraceStore"]
