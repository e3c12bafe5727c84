"""Indexing the one file a writer has just put on disk, before the call returns.

Capture, filing and tagging each write a file and then index just that
file; a failure to index is reported in the answer's ``sync`` block and
never undoes the write, because the next sync picks the file up anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView, StoreError
from gno_trio.engine.store.lease import HeldLease
from gno_trio.errors import GnoError


def indexed_document(conn: Connection, collection: str, rel_path: str) -> RowView | None:
    """The id and docid of the active document at this path, if one is indexed."""
    return SQLITE_STORES.documents(conn).active_at(collection, rel_path)


@dataclass(slots=True)
class SyncOutcome:
    status: dict[str, Any]
    row: RowView | None = None


def index_written(
    engine: IndexingKernel,
    collection: str,
    rel_path: str,
    conn: Connection,
    lease: HeldLease,
) -> SyncOutcome:
    """Index one file just written; a failure becomes the ``sync`` block, never an error.

    The file stays on disk either way: the next sync picks it up.
    """
    try:
        report = engine.sync_paths(collection, [rel_path], lease=lease)
        row = indexed_document(conn, collection, rel_path)
    except GnoError as error:
        return SyncOutcome({"status": "failed", "error": f"{error.code}: {error.message}"})
    except (StoreError, OSError) as exc:
        return SyncOutcome({"status": "failed", "error": f"RUNTIME: {exc}"})
    if report.errors:
        first = report.errors[0]
        return SyncOutcome({"status": "failed", "error": f"{first['code']}: {first['message']}"})
    if row is None:
        return SyncOutcome({"status": "failed", "error": "RUNTIME: the file was not indexed"})
    return SyncOutcome({"status": "completed"}, row)
