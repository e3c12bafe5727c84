"""The database's side of collections: rows kept in line with ``index.yml``.

``index.yml`` is the source of truth and people edit it by hand. These
functions write the ``collections`` table (and soft-delete the documents
of a collection that went away) inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gno_trio.engine.ingest.memory_projection import backfill
from gno_trio.engine.ingest.spec import (
    CollectionSpec,
    collection_row_matches,
    now_iso,
    upsert_collection,
)
from gno_trio.engine.ingest.writes import inactivate
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, write_transaction


def drop_collection_rows(conn: Connection, name: str) -> int:
    """Soft-delete a collection's documents (journaled) and forget the collection.

    Runs inside the caller's transaction; returns how many documents left.
    """
    rows = SQLITE_STORES.documents(conn).active_of(name)
    observed = now_iso()
    for row in rows:
        inactivate(conn, row, observed)
    SQLITE_STORES.collections(conn).delete(name)
    return len(rows)


def reconcile_collections(
    conn: Connection, specs: Sequence[CollectionSpec], *, drop_missing: bool = True
) -> dict[str, Any]:
    """Make the database's collections those of the config file; what changed.

    A collection deleted from the file (or left behind by an interrupted
    removal) must not keep serving search results from the database; with
    ``drop_missing`` false such rows are kept. A collection that became
    memory-managed gets its already indexed facts projected. Nothing is
    written when the two already agree.
    """
    rows = SQLITE_STORES.collections(conn).rows()
    added = [s for s in specs if s.name not in rows]
    updated = [s for s in specs if s.name in rows and not collection_row_matches(rows[s.name], s)]
    configured = {s.name for s in specs}
    stale = [name for name in rows if name not in configured] if drop_missing else []
    removed: list[dict[str, Any]] = []
    if added or updated or stale:
        with write_transaction(conn):
            for spec in (*added, *updated):
                upsert_collection(conn, spec)
            for name in stale:
                removed.append({"collection": name, "documents": drop_collection_rows(conn, name)})
        for spec in (*added, *updated):
            if spec.memory_managed:
                backfill(conn, spec.name)
    return {
        "added": [s.name for s in added],
        "updated": [s.name for s in updated],
        "removed": removed,
    }


__all__ = ["drop_collection_rows", "reconcile_collections"]
