"""The database's side of collections: rows kept in line with ``index.yml``.

``index.yml`` is the source of truth and people edit it by hand. These
functions write the ``collections`` table (and soft-delete the documents
of a collection that went away) inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from gno_trio.engine.ingest.sync import (
    CollectionSpec,
    collection_row_matches,
    inactivate,
    now_iso,
    upsert_collection,
)
from gno_trio.engine.store.database import write_transaction


def drop_collection_rows(conn: sqlite3.Connection, name: str) -> int:
    """Soft-delete a collection's documents (journaled) and forget the collection.

    Runs inside the caller's transaction; returns how many documents left.
    """
    rows = conn.execute(
        "SELECT * FROM documents WHERE collection = ? AND active = 1", (name,)
    ).fetchall()
    observed = now_iso()
    for row in rows:
        inactivate(conn, row, observed)
    conn.execute("DELETE FROM collections WHERE name = ?", (name,))
    conn.execute("DELETE FROM ingest_errors WHERE collection = ?", (name,))
    return len(rows)


def reconcile_collections(conn: sqlite3.Connection, specs: Sequence[CollectionSpec]) -> None:
    """Make the database's collections those of the config file.

    A collection deleted from the file (or left behind by an interrupted
    removal) must not keep serving search results from the database.
    Nothing is written when they already agree.
    """
    rows = {row["name"]: row for row in conn.execute("SELECT * FROM collections")}
    changed = [
        s for s in specs if s.name not in rows or not collection_row_matches(rows[s.name], s)
    ]
    configured = {s.name for s in specs}
    stale = [name for name in rows if name not in configured]
    if not changed and not stale:
        return
    with write_transaction(conn):
        for spec in changed:
            upsert_collection(conn, spec)
        for name in stale:
            drop_collection_rows(conn, name)


__all__ = ["drop_collection_rows", "reconcile_collections"]
