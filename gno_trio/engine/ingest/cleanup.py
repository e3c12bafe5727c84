"""``cleanup``: delete what no active document needs any more.

Removing a collection, or a file vanishing from one, only marks its
documents inactive: they leave search, reads and links at once, but their
rows stay so that the folder or file coming back is restored without being
converted again. ``cleanup`` is the step that lets them go for good
(GNO: "orphaned content, chunks, and vectors not referenced by active
documents"):

* inactive documents, with their tags, links, typed edges and memory rows;
* text mirrors no active document uses any more, with their chunks and the
  chunks' full-text entries;
* vectors of those chunks (the in-memory copies of their models reload).

The change journal keeps its entries (they are history, pruned by their own
retention). With ``dry_run`` the counts are what would go and nothing is
written.
"""

from __future__ import annotations

from typing import Any

from gno_trio.engine.ingest.upkeep import collect_garbage
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, write_transaction


def orphan_counts(conn: Connection) -> dict[str, int]:
    """How many inactive documents, unused mirrors, their chunks and vectors there are now."""
    documents, mirrors, chunks, vectors = SQLITE_STORES.counts(conn).orphans()
    return {"documents": documents, "contents": mirrors, "chunks": chunks, "vectors": vectors}


def cleanup(conn: Connection, *, dry_run: bool = False) -> dict[str, Any]:
    """Delete (or with ``dry_run`` count) what no active document needs; one transaction."""
    if dry_run:
        return {"dryRun": True, "removed": orphan_counts(conn)}
    with write_transaction(conn):
        removed = orphan_counts(conn)
        SQLITE_STORES.documents(conn).delete_inactive()
        collect_garbage(conn)
        SQLITE_STORES.vectors(conn).delete_orphans()
    if removed["chunks"]:
        with write_transaction(conn):
            fulltext.optimize(conn, "chunks_fts")
    return {"dryRun": False, "removed": removed}


__all__ = ["cleanup", "orphan_counts"]
