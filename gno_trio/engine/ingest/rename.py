"""Renaming a collection: its config entry, its contexts and every row that names it.

A collection's name is part of each of its documents' identity
(``gno://<name>/<path>``), so a rename touches the config (the collection
entry and every context scoped to it) and the database (the collection row,
the documents' collection and URI, the records of files it could not index,
the change journal). It is one operation: the rows change in one
transaction, the config is written before that transaction commits, and a
failure of either leaves both as they were (see
:meth:`gno_trio.engine.ingest.face.IngestFace.rename_collection`).

What does not change, on purpose:

* Docids (they are hashes of the source bytes), texts, chunks and vectors
  (keyed by the text's hash), tags and typed edges.
* The full-text rows: ``documents_fts`` indexes the relative path, not the
  collection. The tantivy document index learns the new collection and URIs
  from its queue, which the triggers of migration 012 fill in the same
  transaction as the rows.
* Links as their documents write them. A link inside the collection
  resolves against the linking document's collection, so it follows the
  rename; a link whose text names the old collection (``[[old:Note]]``,
  ``gno://old/...``) keeps saying what its document says, and stops
  resolving until the text is edited. The result counts those links, so the
  user knows which texts to fix.
* Journal snapshots already recorded: they say what the URI was then. Each
  entry's collection column moves to the new name (so ``changes
  --collection NEW`` and ``diff`` keep a document's history), and every
  active document gets one ``rename`` entry from its old URI to its new one,
  so an agent following the changes feed learns the new URIs.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from gno_trio.config import URI_PREFIX, Collection, Config, Context
from gno_trio.engine import journal
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.uris import make_uri
from gno_trio.errors import GnoError

_BATCH: Final = 1000


def renamed_config(config: Config, old: str, new: str) -> Config:
    """``config`` with collection ``old`` called ``new``, and its contexts re-scoped.

    ``NOT_FOUND`` when ``old`` is not configured, ``DUPLICATE`` when ``new``
    already is (a rename to the same name included). The collection keeps its
    place in the file and every other setting.
    """
    found = config.collection(old)
    if found is None:
        raise GnoError("NOT_FOUND", f"Collection not found: {old}")
    if config.collection(new) is not None:
        raise GnoError("DUPLICATE", f"Collection already exists: {new}")
    collections: tuple[Collection, ...] = tuple(
        attrs.evolve(c, name=new) if c is found else c for c in config.collections
    )
    contexts = tuple(_rescoped(c, found.name, new) for c in config.contexts)
    return attrs.evolve(config, collections=collections, contexts=contexts)


def _rescoped(context: Context, old: str, new: str) -> Context:
    if context.collection_name != old:
        return context
    if context.scope_type == "collection":
        return attrs.evolve(context, scope_key=f"{new}:")
    rest = context.scope_key[len(URI_PREFIX) + len(old) :]  # "" or "/..."
    return attrs.evolve(context, scope_key=f"{URI_PREFIX}{new}{rest}")


def rename_collection_rows(
    conn: Connection, old: str, new: str, observed_at: str
) -> dict[str, int]:
    """Move every row of collection ``old`` to ``new``, inside the caller's transaction.

    Rows left under ``new`` by a collection of that name removed earlier
    (inactive documents waiting for ``cleanup``) are deleted first: they
    belong to no configured collection, and would clash with the documents
    moving in. Returns how many documents moved (and how many were active),
    and how many links elsewhere name ``old`` in their text.
    """
    documents = SQLITE_STORES.document_rows(conn)
    if documents.has_active(new):
        raise GnoError(
            "CONFLICT",
            f"The index still holds active documents of a collection named {new}; "
            "run `gno-trio update` first",
        )
    documents.delete_collection(new)
    collections = SQLITE_STORES.collections(conn)
    collections.delete(new)
    collections.rename(old, new)
    changes = SQLITE_STORES.journal(conn)
    changes.rename_collection(old, new)
    moved = active = 0
    for batch in documents.of_collection(old, _BATCH):
        updates = []
        for row in batch:
            uri = make_uri(new, str(row["rel_path"]))
            updates.append((new, uri, int(row["id"])))
            moved += 1
            if row["active"]:
                active += 1
                previous = journal.snapshot(row)
                changes.append("rename", new, observed_at, previous, dict(previous, uri=uri), {})
        documents.move(updates)
    return {"documents": moved, "activeDocuments": active, **_links_naming(conn, old)}


def _links_naming(conn: Connection, old: str) -> dict[str, Any]:
    """Links of active documents whose text names collection ``old`` (they stop resolving)."""
    links, documents = SQLITE_STORES.links(conn).naming_collection(old, f"{URI_PREFIX}{old}/")
    return {"linksNamingOldName": links, "documentsWithSuchLinks": documents}


__all__ = ["rename_collection_rows", "renamed_config"]
