"""``diff``: the structural diff one journal entry retained for one document.

The change journal keeps metadata only (paths, hashes, the active flag and a
bounded structure delta), never document bodies. A diff is therefore the
retained record itself, presented against the document it concerns, with
the missing body stated as ``content.status: not_retained`` instead of left
for the caller to guess. When no entry is named, the latest entry of the
document is used.
"""

from __future__ import annotations

from typing import Any, Final

from gno_trio.engine import journal
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.store.journal import JournalEntry, JournalStore
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
NOT_RETAINED: Final = {"status": "not_retained", "reason": "journal_metadata_only"}
BODY_WARNING: Final = (
    "The journal retains metadata only: snapshots, hashes and the structure delta. "
    "Read the current text with gno_get."
)


def _concerns(entry: JournalEntry, document: RowView) -> bool:
    """Whether a journal entry is about ``document`` (either side of it names the doc)."""
    if entry.collection != document["collection"]:
        return False
    return any(
        side.get("docid") == document["docid"] or side.get("relPath") == document["rel_path"]
        for side in (entry.previous, entry.current)
        if side
    )


def _document_block(row: RowView) -> dict[str, Any]:
    return {
        "id": row["docid"],
        "uri": row["uri"],
        "title": row["title"],
        "collection": row["collection"],
        "relPath": row["rel_path"],
        "active": bool(row["active"]),
    }


def document_diff(
    conn: Connection, changes: JournalStore, ref: str, change: str | None = None
) -> dict[str, Any]:
    """``document-diff@1.0`` for ``ref`` and one change id (a ``gno-change-v1.`` cursor).

    An unknown document or change id is ``NOT_FOUND``; a malformed id is
    ``VALIDATION``; a change of another document is ``INVALID_INPUT``.
    Without ``change`` the document's latest retained entry is used, and a
    document with none answers ``status: unavailable``.
    """
    document = resolve(conn, parse_ref(ref), inactive=True)
    warnings = [BODY_WARNING]
    if change is None:
        entry = next(
            (e for e in changes.of_collection(document["collection"]) if _concerns(e, document)),
            None,
        )
    else:
        sequence = journal.decode_cursor(change)
        entry = changes.entry(sequence)
        if entry is None:
            raise GnoError(
                "NOT_FOUND", f"Change not found (never issued or pruned by retention): {change}"
            )
        if not _concerns(entry, document):
            raise GnoError(
                "INVALID_INPUT", f"Change {change} belongs to another document than {ref}"
            )
    if entry is None:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "status": "unavailable",
            "document": _document_block(document),
            "change": None,
            "content": dict(NOT_RETAINED),
            "history": {"status": "unavailable", "reason": "no_retained_change"},
            "warnings": warnings,
        }
    record = journal.change(entry)
    truncated = bool(record["structureDelta"]["truncated"])
    if truncated:
        warnings.append("The structure delta hit its size bound; some items were left out.")
    return {
        "schemaVersion": SCHEMA_VERSION,
        "status": "available",
        "document": _document_block(document),
        "change": record,
        "content": dict(NOT_RETAINED),
        "history": (
            {"status": "partial", "reason": "structure_delta_truncated"}
            if truncated
            else {"status": "available", "reason": None}
        ),
        "warnings": warnings,
    }
