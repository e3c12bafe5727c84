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

These are the rules; the rows are kept by a
:class:`~gno_trio.engine.store.traces.TraceStore` the kernel opens on the
call's connection, and no statement is written here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal

from gno_trio.config.features import TraceRetention
from gno_trio.engine.store import pages
from gno_trio.engine.store.database import RowView
from gno_trio.engine.store.traces import TraceStore
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


def status_of(row: RowView, moment: int) -> str:
    """The status a trace has now: an open trace left alone past the window is completed."""
    status = str(row["status"])
    if status == "open" and int(row["updated_at_ms"]) + OPEN_WINDOW_MS <= moment:
        return "completed"
    return status


def trace_object(row: RowView, moment: int) -> dict[str, Any]:
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


def trace_row(traces: TraceStore, trace_id: str) -> RowView:
    row = traces.trace(trace_id)
    if row is None:
        raise GnoError("NOT_FOUND", f"Retrieval trace not found: {trace_id}")
    return row


def records(
    traces: TraceStore, trace_id: str, section: Section, limit: int | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Up to ``limit`` records of one section in write order, and how many there are."""
    return traces.records(trace_id, section, limit)


def export_rows(traces: TraceStore, trace_id: str, limit: int) -> tuple[list[dict[str, Any]], int]:
    found = [
        {
            "exportId": row["export_id"],
            "traceId": trace_id,
            "format": row["format"],
            "artifactHash": row["artifact_hash"],
            "createdAtMs": int(row["created_at_ms"]),
        }
        for row in traces.exports_of(trace_id)
    ]
    return found[:limit], len(found)


def list_page(traces: TraceStore, *, limit: int, cursor: str | None, moment: int) -> dict[str, Any]:
    if not 1 <= limit <= LIST_MAX_LIMIT:
        raise GnoError("INVALID_INPUT", f"limit must be between 1 and {LIST_MAX_LIMIT}")
    after = pages.decode_cursor(CURSOR_PREFIX, cursor, what="trace") if cursor else None
    rows, following = traces.page(limit=limit, after=after)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "traces": [summary_of(trace_object(row, moment)) for row in rows],
        "nextCursor": pages.encode_cursor(CURSOR_PREFIX, following) if following else None,
    }


def detail(traces: TraceStore, trace_id: str, *, detail_limit: int, moment: int) -> dict[str, Any]:
    if not 1 <= detail_limit <= DETAIL_MAX_LIMIT:
        raise GnoError("INVALID_INPUT", f"detailLimit must be between 1 and {DETAIL_MAX_LIMIT}")
    row = trace_row(traces, trace_id)
    shown: dict[str, list[dict[str, Any]]] = {}
    totals: dict[str, int] = {}
    for section in SECTIONS:
        shown[_PLURAL[section]], totals[_PLURAL[section]] = records(
            traces, trace_id, section, detail_limit
        )
    shown["exports"], totals["exports"] = export_rows(traces, trace_id, detail_limit)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "trace": trace_object(row, moment),
        **shown,
        "totals": totals,
        "truncated": {key: len(shown[key]) < totals[key] for key in totals},
    }


# -- writing -------------------------------------------------------------------------------


def enforce_retention(traces: TraceStore, retention: TraceRetention, moment: int) -> None:
    """Drop expired traces, then the oldest beyond the count and byte caps (in the caller's
    transaction)."""
    traces.delete_expired(moment)
    count, size = traces.totals()
    if count <= retention.max_traces and size <= retention.max_bytes:
        return
    for trace_id, byte_size in traces.oldest_first():
        if count <= retention.max_traces and size <= retention.max_bytes:
            break
        traces.delete_trace(trace_id)
        count, size = count - 1, size - byte_size
    traces.drop_orphan_exports()


def next_moment(traces: TraceStore, now: int) -> int:
    """``now``, or just after the newest trace: newest-first lists keep their order."""
    newest = traces.newest_created()
    return max(now, (newest if newest is not None else -1) + 1)


def create(
    traces: TraceStore, creation: Mapping[str, Any], retention: TraceRetention, moment: int
) -> None:
    text = dumps(creation)
    with traces.writing():
        traces.insert_trace(
            creation["traceId"], moment, creation["expiresAtMs"], size_of(text), text
        )
        enforce_retention(traces, retention, moment)


def append(
    traces: TraceStore,
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
    with traces.writing():
        row = trace_row(traces, trace_id)
        stored = traces.record(trace_id, section, idempotency_key)
        if stored is not None:
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
        traces.insert_record(
            record_id, trace_id, section, int(row["records"]), idempotency_key, moment, text
        )
        traces.grow(trace_id, size_of(text), moment, status_of(row, moment))
        enforce_retention(traces, retention, moment)
    return "inserted", dict(body)


def _same_record(stored: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """Two writes of one record differ only in their ids and times."""
    volatile = {"createdAtMs", "runId", "eventId", "judgmentId"}
    return {k: v for k, v in stored.items() if k not in volatile} == {
        k: v for k, v in body.items() if k not in volatile
    }


def finalize(traces: TraceStore, trace_id: str, status: str, moment: int) -> None:
    with traces.writing():
        traces.finish(trace_id, status, moment)


def settle(traces: TraceStore, trace_ids: Iterable[str], moment: int) -> None:
    """Record ``completed`` for open traces whose follow-up window has passed."""
    with traces.writing():
        for trace_id in trace_ids:
            traces.settle(trace_id, OPEN_WINDOW_MS, moment)


def counts(traces: TraceStore, trace_id: str | None = None) -> dict[str, int]:
    """How many traces, records of each section and export links (of one trace, or all)."""
    total, by_section, links = traces.counts(trace_id)
    found = {"traces": total}
    for section in SECTIONS:
        found[_PLURAL[section]] = by_section.get(section, 0)
    found["exportLinks"] = links
    return found


def delete(traces: TraceStore, trace_id: str) -> dict[str, Any]:
    """Delete one trace and everything it owns; an unknown trace deletes nothing."""
    with traces.erasing(), traces.writing():
        owned = counts(traces, trace_id)
        traces.delete_trace(trace_id)
        owned["exports"] = traces.drop_orphan_exports()
    return {
        "schemaVersion": SCHEMA_VERSION,
        "traceId": trace_id,
        "deleted": owned["traces"] == 1,
        "counts": {
            key: owned[key]
            for key in ("traces", "runs", "events", "judgments", "exports", "exportLinks")
        },
    }


def purge(traces: TraceStore) -> dict[str, Any]:
    """Delete every trace, record and export (and nothing else)."""
    with traces.erasing():
        with traces.writing():
            every = counts(traces)
            every["exports"] = traces.export_count()
            traces.delete_all()
        cleanup = traces.cleanup()
    order = ("traces", "runs", "events", "judgments", "exports", "exportLinks")
    return {"schemaVersion": SCHEMA_VERSION, **{key: every[key] for key in order}, **cleanup}


def state_value(traces: TraceStore, key: str, make: Callable[[], str]) -> str:
    """A per-index value kept beside the traces, created by ``make()`` on first use."""
    return traces.state(key, make)
