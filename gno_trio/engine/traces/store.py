"""Where retrieval traces live: one row per trace, its records, its exports, and retention.

A trace row holds the immutable creation record (canonical JSON) plus what
changes: the status, the last-update time, the number of records and the
bytes the trace occupies. Its runs, events and judgments are records keyed
by ``(trace, section, idempotency key)``, so writing the same record twice
is answered ``duplicate`` instead of storing it twice.

Retention runs in the same transaction as every write: expired traces go
first, then the oldest beyond ``maxTraces`` and beyond ``maxBytes``; a trace
that already holds ``maxRecordsPerTrace`` records takes no more.

A retrieval trace stays ``open`` for follow-up reads (``gno_get`` with its
``traceId``) until :data:`OPEN_WINDOW_MS` pass without a new record; from
then on it counts as ``completed``, which the next write on it records.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from gno_trio.config.features import TraceRetention
from gno_trio.engine.store import pages
from gno_trio.engine.store.database import write_transaction
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
CURSOR_PREFIX: Final = "gno-trace-v1."
OPEN_WINDOW_MS: Final = 15 * 60 * 1000
DAY_MS: Final = 86_400_000
LIST_DEFAULT_LIMIT: Final = 50
LIST_MAX_LIMIT: Final = 1000
DETAIL_DEFAULT_LIMIT: Final = 500
DETAIL_MAX_LIMIT: Final = 5000
TERMINAL: Final = ("completed", "partial", "failed", "cancelled")

Section = Literal["run", "event", "judgment"]
SECTIONS: Final[tuple[Section, ...]] = ("run", "event", "judgment")
_PLURAL: Final = {"run": "runs", "event": "events", "judgment": "judgments"}
_TRACE_KEYS: Final = (
    "traceId",
    "schemaVersion",
    "redactionMode",
    "replayCapable",
    "status",
    "queryText",
    "queryDigest",
    "queryShape",
    "goalText",
    "goalDigest",
    "goalShape",
    "filters",
    "egressLineage",
    "fingerprints",
    "createdAtMs",
    "updatedAtMs",
    "expiresAtMs",
    "byteSize",
    "creationDigest",
)
_REPLAY_KEYS: Final = frozenset({"queryText", "queryDigest", "goalText", "goalDigest", "filters"})
_SUMMARY_KEYS: Final = tuple(key for key in _TRACE_KEYS if key not in _REPLAY_KEYS)
"""A summary is the trace without what could replay it (query and goal text, filters)."""


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def size_of(text: str) -> int:
    return len(text.encode("utf-8"))


# -- reading -------------------------------------------------------------------------------


def status_of(row: sqlite3.Row, moment: int) -> str:
    """The status a trace has now: an open trace left alone past the window is completed."""
    status = str(row["status"])
    if status == "open" and int(row["updated_at_ms"]) + OPEN_WINDOW_MS <= moment:
        return "completed"
    return status


def trace_object(row: sqlite3.Row, moment: int) -> dict[str, Any]:
    """The full ``trace`` of a row (GNO's retrieval-trace-common ``trace``)."""
    creation = json.loads(row["creation"])
    values = {
        **creation,
        "status": status_of(row, moment),
        "updatedAtMs": int(row["updated_at_ms"]),
        "byteSize": int(row["byte_size"]),
    }
    return {key: values[key] for key in _TRACE_KEYS if key in values}


def summary_of(trace: Mapping[str, Any]) -> dict[str, Any]:
    """A trace without its replay content (query and goal text, filters)."""
    return {key: trace[key] for key in _SUMMARY_KEYS if key in trace}


def trace_row(conn: sqlite3.Connection, trace_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM retrieval_traces WHERE trace_id = ?", (trace_id,)
    ).fetchone()
    if row is None:
        raise GnoError("NOT_FOUND", f"Retrieval trace not found: {trace_id}")
    return row


def records(
    conn: sqlite3.Connection, trace_id: str, section: Section, limit: int | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Up to ``limit`` records of one section in write order, and how many there are."""
    total = int(
        conn.execute(
            "SELECT COUNT(*) FROM retrieval_trace_records WHERE trace_id = ? AND section = ?",
            (trace_id, section),
        ).fetchone()[0]
    )
    rows = conn.execute(
        "SELECT body FROM retrieval_trace_records WHERE trace_id = ? AND section = ? "
        "ORDER BY seq LIMIT ?",
        (trace_id, section, -1 if limit is None else limit),
    ).fetchall()
    return [json.loads(row["body"]) for row in rows], total


def export_rows(
    conn: sqlite3.Connection, trace_id: str, limit: int
) -> tuple[list[dict[str, Any]], int]:
    rows = conn.execute(
        "SELECT e.export_id, e.format, e.artifact_hash, e.created_at_ms "
        "FROM retrieval_trace_exports e JOIN retrieval_trace_export_links l "
        "ON l.export_id = e.export_id WHERE l.trace_id = ? ORDER BY e.created_at_ms, e.export_id",
        (trace_id,),
    ).fetchall()
    found = [
        {
            "exportId": row["export_id"],
            "traceId": trace_id,
            "format": row["format"],
            "artifactHash": row["artifact_hash"],
            "createdAtMs": int(row["created_at_ms"]),
        }
        for row in rows
    ]
    return found[:limit], len(found)


def list_page(
    conn: sqlite3.Connection, *, limit: int, cursor: str | None, moment: int
) -> dict[str, Any]:
    if not 1 <= limit <= LIST_MAX_LIMIT:
        raise GnoError("INVALID_INPUT", f"limit must be between 1 and {LIST_MAX_LIMIT}")
    after = pages.decode_cursor(CURSOR_PREFIX, cursor, what="trace") if cursor else None
    rows, following = pages.newest_first(
        conn, table="retrieval_traces", id_column="trace_id", limit=limit, after=after
    )
    return {
        "schemaVersion": SCHEMA_VERSION,
        "traces": [summary_of(trace_object(row, moment)) for row in rows],
        "nextCursor": pages.encode_cursor(CURSOR_PREFIX, following) if following else None,
    }


def detail(
    conn: sqlite3.Connection, trace_id: str, *, detail_limit: int, moment: int
) -> dict[str, Any]:
    if not 1 <= detail_limit <= DETAIL_MAX_LIMIT:
        raise GnoError("INVALID_INPUT", f"detailLimit must be between 1 and {DETAIL_MAX_LIMIT}")
    row = trace_row(conn, trace_id)
    shown: dict[str, list[dict[str, Any]]] = {}
    totals: dict[str, int] = {}
    for section in SECTIONS:
        shown[_PLURAL[section]], totals[_PLURAL[section]] = records(
            conn, trace_id, section, detail_limit
        )
    shown["exports"], totals["exports"] = export_rows(conn, trace_id, detail_limit)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "trace": trace_object(row, moment),
        **shown,
        "totals": totals,
        "truncated": {key: len(shown[key]) < totals[key] for key in totals},
    }


# -- writing -------------------------------------------------------------------------------


def enforce_retention(conn: sqlite3.Connection, retention: TraceRetention, moment: int) -> None:
    """Drop expired traces, then the oldest beyond the count and byte caps (in the caller's
    transaction)."""
    conn.execute("DELETE FROM retrieval_traces WHERE expires_at_ms <= ?", (moment,))
    count, size = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(byte_size), 0) FROM retrieval_traces"
    ).fetchone()
    if count <= retention.max_traces and size <= retention.max_bytes:
        return
    for row in conn.execute(
        "SELECT trace_id, byte_size FROM retrieval_traces ORDER BY created_at_ms, trace_id"
    ).fetchall():
        if count <= retention.max_traces and size <= retention.max_bytes:
            break
        conn.execute("DELETE FROM retrieval_traces WHERE trace_id = ?", (row["trace_id"],))
        count, size = count - 1, size - int(row["byte_size"])
    drop_orphan_exports(conn)


def drop_orphan_exports(conn: sqlite3.Connection) -> int:
    return int(
        conn.execute(
            "DELETE FROM retrieval_trace_exports WHERE export_id NOT IN "
            "(SELECT export_id FROM retrieval_trace_export_links)"
        ).rowcount
    )


def next_moment(conn: sqlite3.Connection, now: int) -> int:
    """``now``, or just after the newest trace: newest-first lists keep their order."""
    newest = conn.execute("SELECT MAX(created_at_ms) FROM retrieval_traces").fetchone()[0]
    return max(now, (newest if newest is not None else -1) + 1)


def create(
    conn: sqlite3.Connection, creation: Mapping[str, Any], retention: TraceRetention, moment: int
) -> None:
    text = dumps(creation)
    with write_transaction(conn):
        conn.execute(
            "INSERT INTO retrieval_traces (trace_id, status, created_at_ms, updated_at_ms, "
            "expires_at_ms, byte_size, records, creation) VALUES (?, 'open', ?, ?, ?, ?, 0, ?)",
            (
                creation["traceId"],
                moment,
                moment,
                creation["expiresAtMs"],
                size_of(text),
                text,
            ),
        )
        enforce_retention(conn, retention, moment)


def append(
    conn: sqlite3.Connection,
    trace_id: str,
    section: Section,
    body: Mapping[str, Any],
    *,
    idempotency_key: str,
    record_id: str,
    retention: TraceRetention,
    moment: int,
) -> tuple[str, dict[str, Any]]:
    """Store one record; ``("duplicate", stored)`` when its idempotency key was used already.

    ``NOT_FOUND`` when the trace is gone, ``CONFLICT`` when it holds its
    maximum number of records or its key was used for a different record.
    """
    text = dumps(body)
    with write_transaction(conn):
        row = trace_row(conn, trace_id)
        existing = conn.execute(
            "SELECT body FROM retrieval_trace_records "
            "WHERE trace_id = ? AND section = ? AND idempotency_key = ?",
            (trace_id, section, idempotency_key),
        ).fetchone()
        if existing is not None:
            stored: dict[str, Any] = json.loads(existing["body"])
            if _same_record(stored, body):
                return "duplicate", stored
            raise GnoError(
                "CONFLICT", f"Idempotency key {idempotency_key} was used for a different record"
            )
        if int(row["records"]) >= retention.max_records_per_trace:
            raise GnoError(
                "CONFLICT",
                f"Retrieval trace {trace_id} holds its maximum of "
                f"{retention.max_records_per_trace} records",
            )
        conn.execute(
            "INSERT INTO retrieval_trace_records (record_id, trace_id, section, seq, "
            "idempotency_key, created_at_ms, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (record_id, trace_id, section, int(row["records"]), idempotency_key, moment, text),
        )
        conn.execute(
            "UPDATE retrieval_traces SET records = records + 1, byte_size = byte_size + ?, "
            "updated_at_ms = ?, status = ? WHERE trace_id = ?",
            (size_of(text), moment, status_of(row, moment), trace_id),
        )
        enforce_retention(conn, retention, moment)
    return "inserted", dict(body)


def _same_record(stored: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """Two writes of one record differ only in their ids and times."""
    volatile = {"createdAtMs", "runId", "eventId", "judgmentId"}
    return {k: v for k, v in stored.items() if k not in volatile} == {
        k: v for k, v in body.items() if k not in volatile
    }


def finalize(conn: sqlite3.Connection, trace_id: str, status: str, moment: int) -> None:
    with write_transaction(conn):
        conn.execute(
            "UPDATE retrieval_traces SET status = ?, updated_at_ms = ? "
            "WHERE trace_id = ? AND status = 'open'",
            (status, moment, trace_id),
        )


def settle(conn: sqlite3.Connection, trace_ids: Iterable[str], moment: int) -> None:
    """Record ``completed`` for open traces whose follow-up window has passed."""
    with write_transaction(conn):
        for trace_id in trace_ids:
            conn.execute(
                "UPDATE retrieval_traces SET status = 'completed' WHERE trace_id = ? "
                "AND status = 'open' AND updated_at_ms + ? <= ?",
                (trace_id, OPEN_WINDOW_MS, moment),
            )


def counts(
    conn: sqlite3.Connection, where: str = "", params: tuple[Any, ...] = ()
) -> dict[str, int]:
    """How many traces, records of each section, exports and links ``where`` selects."""
    traces = conn.execute(f"SELECT COUNT(*) FROM retrieval_traces {where}", params).fetchone()[0]
    found = {"traces": int(traces)}
    for section in SECTIONS:
        clause = f"{where} AND" if where else "WHERE"
        found[_PLURAL[section]] = int(
            conn.execute(
                f"SELECT COUNT(*) FROM retrieval_trace_records {clause} section = ?",
                (*params, section),
            ).fetchone()[0]
        )
    found["exportLinks"] = int(
        conn.execute(
            f"SELECT COUNT(*) FROM retrieval_trace_export_links {where}", params
        ).fetchone()[0]
    )
    return found


def delete(conn: sqlite3.Connection, trace_id: str) -> dict[str, Any]:
    """Delete one trace and everything it owns; an unknown trace deletes nothing."""
    with pages.secure_deletion(conn), write_transaction(conn):
        owned = counts(conn, "WHERE trace_id = ?", (trace_id,))
        conn.execute("DELETE FROM retrieval_traces WHERE trace_id = ?", (trace_id,))
        owned["exports"] = drop_orphan_exports(conn)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "traceId": trace_id,
        "deleted": owned["traces"] == 1,
        "counts": {
            key: owned[key]
            for key in ("traces", "runs", "events", "judgments", "exports", "exportLinks")
        },
    }


def purge(conn: sqlite3.Connection) -> dict[str, Any]:
    """Delete every trace, record and export (and nothing else)."""
    with pages.secure_deletion(conn):
        with write_transaction(conn):
            every = counts(conn)
            every["exports"] = int(
                conn.execute("SELECT COUNT(*) FROM retrieval_trace_exports").fetchone()[0]
            )
            conn.execute("DELETE FROM retrieval_traces")
            conn.execute("DELETE FROM retrieval_trace_exports")
        cleanup = pages.physical_cleanup(conn)
    order = ("traces", "runs", "events", "judgments", "exports", "exportLinks")
    return {"schemaVersion": SCHEMA_VERSION, **{key: every[key] for key in order}, **cleanup}


def state_value(conn: sqlite3.Connection, key: str, make: Any) -> str:
    """A per-index value kept beside the traces, created by ``make()`` on first use."""
    row = conn.execute("SELECT value FROM retrieval_trace_state WHERE key = ?", (key,)).fetchone()
    if row is not None:
        return str(row["value"])
    with write_transaction(conn):
        conn.execute(
            "INSERT OR IGNORE INTO retrieval_trace_state (key, value) VALUES (?, ?)", (key, make())
        )
        row = conn.execute(
            "SELECT value FROM retrieval_trace_state WHERE key = ?", (key,)
        ).fetchone()
    return str(row["value"])
