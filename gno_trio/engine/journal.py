"""The change journal's rules: what an entry says, its bounds, retention and the ``changes`` feed.

Entries never contain document bodies: a snapshot is the path, ids, hashes
and active flag of a document before and after the change, and the
structure delta lists headings, links, typed edges and dates that appeared
or disappeared (at most 16 per side, each at most 256 bytes), so an agent
learns *what* changed and reads the text with ``get`` when it needs it.
Cursors are opaque: ``gno-change-v1.`` plus the base64 of the sequence.
Entries are kept by a :class:`~gno_trio.engine.store.journal.JournalStore`;
nothing here speaks to the database.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from gno_trio.engine.docmeta import DocumentMeta
from gno_trio.engine.store.database import RowView
from gno_trio.engine.store.journal import JournalEntry, JournalStore
from gno_trio.errors import GnoError

CURSOR_PREFIX = "gno-change-v1."
MAX_DELTA_ITEMS = 16
MAX_DELTA_ITEM_BYTES = 256
RETENTION_DAYS = 30
RETENTION_ENTRIES = 10_000
_SURELY_SHORT = MAX_DELTA_ITEM_BYTES // 4

Structure = dict[str, list[str]]


def snapshot(row: RowView) -> dict[str, Any]:
    """What an entry keeps of one side of a change (a document row, or the values written)."""
    return {
        "relPath": row["rel_path"],
        "docid": row["docid"],
        "uri": row["uri"],
        "sourceHash": row["source_hash"],
        "mirrorHash": row["mirror_hash"],
        "active": bool(row["active"]),
    }


def structure_of(meta: DocumentMeta) -> Structure:
    return {
        "headings": list(meta.headings),
        "links": sorted({link.target for link in meta.links}),
        "typedEdges": sorted({f"{kind}:{target}" for kind, target in meta.relations}),
        "dates": [meta.date] if meta.date else [],
    }


def stored_structure(store: JournalStore, row: RowView) -> Structure:
    """The structure of a document as the index holds it (``row`` is its document row)."""
    links, edges = store.links_and_edges(int(row["id"]))
    return {
        "headings": json.loads(row["headings_json"] or "[]"),
        "links": sorted(set(links)),
        "typedEdges": sorted({f"{kind}:{target}" for kind, target in edges}),
        "dates": [row["frontmatter_date"]] if row["frontmatter_date"] else [],
    }


def _clip(items: list[str]) -> tuple[list[str], bool]:
    clipped = []
    truncated = len(items) > MAX_DELTA_ITEMS
    for item in items[:MAX_DELTA_ITEMS]:
        # A character is at most 4 UTF-8 bytes: a short item needs no encoding to be measured.
        if len(item) > _SURELY_SHORT:
            raw = item.encode("utf-8")
            if len(raw) > MAX_DELTA_ITEM_BYTES:
                item = raw[:MAX_DELTA_ITEM_BYTES].decode("utf-8", "ignore")
                truncated = True
        clipped.append(item)
    return clipped, truncated


def structure_delta(old: Structure | None, new: Structure) -> dict[str, Any]:
    old = old or {"headings": [], "links": [], "typedEdges": [], "dates": []}
    delta: dict[str, Any] = {}
    truncated = False
    for key in ("headings", "links", "typedEdges"):
        # Deltas are sets (a document can repeat a heading); order of first
        # appearance is kept so the output is stable.
        before = dict.fromkeys(old.get(key, []))
        after = dict.fromkeys(new.get(key, []))
        added, t1 = _clip([x for x in after if x not in before] if before else list(after))
        removed, t2 = _clip([x for x in before if x not in after]) if before else ([], False)
        truncated = truncated or t1 or t2
        delta[key] = {"added": added, "removed": removed}
    old_date = old["dates"][0] if old.get("dates") else None
    new_date = new["dates"][0] if new.get("dates") else None
    delta["dates"] = {
        "added": [new_date] if new_date and not old_date else [],
        "removed": [old_date] if old_date and not new_date else [],
        # Items are strings in changes@1.0, so a moved date reads "old -> new".
        "changed": (
            [f"{old_date} -> {new_date}"] if old_date and new_date and old_date != new_date else []
        ),
    }
    delta["truncated"] = truncated
    return delta


def prune(store: JournalStore, *, now: datetime | None = None) -> int:
    """Apply retention (age and count); returns how many entries were dropped."""
    now = now or datetime.now(UTC)
    cutoff = (now - timedelta(days=RETENTION_DAYS)).isoformat(timespec="milliseconds")
    return store.prune(observed_before=cutoff.replace("+00:00", "Z"), keep=RETENTION_ENTRIES)


def encode_cursor(sequence: int) -> str:
    raw = base64.urlsafe_b64encode(str(sequence).encode("ascii")).decode("ascii").rstrip("=")
    return CURSOR_PREFIX + raw


def decode_cursor(cursor: str) -> int:
    """The sequence inside a cursor this module issued; anything else is ``VALIDATION``.

    Only the exact text ``encode_cursor`` produces is accepted: base64 decoding
    skips stray characters and ``int`` takes signs, spaces and underscores, so
    without the round-trip check many different strings would name one
    position and a mistyped cursor could silently resume somewhere else.
    """
    body = cursor[len(CURSOR_PREFIX) :] if cursor.startswith(CURSOR_PREFIX) else None
    value = -1
    if body and len(body) <= 32:
        try:
            text = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("ascii")
            value = int(text) if text.isdigit() else -1
        except (binascii.Error, UnicodeDecodeError, ValueError):
            value = -1
    if value < 0 or encode_cursor(value) != cursor:
        raise GnoError("VALIDATION", f"Invalid changes cursor: {cursor}")
    return value


def _parse_instant(value: str) -> str:
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise GnoError(
            "VALIDATION", f"since must be an ISO-8601 time or a changes cursor: {value}"
        ) from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def feed(
    store: JournalStore,
    *,
    since: str | None = None,
    collection: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """The ``changes@1.0`` page after ``since`` (a cursor or an ISO time)."""
    if not 1 <= limit <= 1000:
        raise GnoError("VALIDATION", "limit must be between 1 and 1000")
    earliest_id, latest_id = store.bounds()
    warnings: list[str] = []
    cursor_expired = False
    after_id = 0
    time_floor: str | None = None
    if since:
        if len(since) > 512:
            raise GnoError("VALIDATION", "since is longer than 512 characters")
        if since.startswith(CURSOR_PREFIX):
            after_id = decode_cursor(since)
            if after_id > latest_id:
                raise GnoError("VALIDATION", f"Changes cursor is ahead of this index: {since}")
            if after_id + 1 < earliest_id:
                cursor_expired = True
                warnings.append("The cursor predates retained history; some changes were pruned.")
        else:
            time_floor = _parse_instant(since)
    # An expired cursor returns no entries: some changes after it are gone,
    # and handing out the rest would let a client believe it caught up. It
    # must start over from earliestCursor (changes@1.0 requires this shape).
    entries = (
        []
        if cursor_expired
        else store.page(
            after=after_id,
            observed_after=time_floor,
            collection=collection.lower() if collection else None,
            limit=limit + 1,
        )
    )
    truncated = len(entries) > limit
    entries = entries[:limit]
    changes = [change(entry) for entry in entries]
    last_id = entries[-1].id if entries else after_id
    return {
        "schemaVersion": "1.0",
        "changes": changes,
        "page": {
            "nextCursor": encode_cursor(last_id) if truncated else None,
            "latestCursor": encode_cursor(latest_id),
            "earliestCursor": encode_cursor(earliest_id - 1),
            "cursorExpired": cursor_expired,
            "truncated": truncated,
            "retentionTruncated": earliest_id > 1,
        },
        "warnings": warnings,
    }


def change(entry: JournalEntry) -> dict[str, Any]:
    """One entry as ``changes@1.0`` shows it."""
    return {
        "id": encode_cursor(entry.id),
        "kind": entry.kind,
        "collection": entry.collection,
        "observedAt": entry.observed_at,
        "previous": entry.previous,
        "current": entry.current,
        "structureDelta": _full_delta(entry.delta),
    }


def _full_delta(delta: Mapping[str, Any]) -> dict[str, Any]:
    """The stored delta with every key ``changes@1.0`` requires (old entries may lack some)."""
    empty: dict[str, list[str]] = {"added": [], "removed": []}
    return {
        "headings": delta.get("headings", empty),
        "links": delta.get("links", empty),
        "typedEdges": delta.get("typedEdges", empty),
        "dates": delta.get("dates", {"added": [], "removed": [], "changed": []}),
        "truncated": bool(delta.get("truncated", False)),
    }
