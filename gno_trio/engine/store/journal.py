"""The metadata-only change journal and the ``changes`` feed read from it.

Entries never contain document bodies: a snapshot is the path, ids, hashes
and active flag of a document before and after the change, and the
structure delta lists headings, links, typed edges and dates that appeared
or disappeared (at most 16 per side, each at most 256 bytes), so an agent
learns *what* changed and reads the text with ``get`` when it needs it.
Cursors are opaque: ``gno-change-v1.`` plus the base64 of the sequence.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from gno_trio.engine.docmeta import DocumentMeta
from gno_trio.errors import GnoError

CURSOR_PREFIX = "gno-change-v1."
MAX_DELTA_ITEMS = 16
MAX_DELTA_ITEM_BYTES = 256
RETENTION_DAYS = 30
RETENTION_ENTRIES = 10_000

Structure = dict[str, list[str]]


def snapshot(row: sqlite3.Row | Mapping[str, Any]) -> dict[str, Any]:
    return {
        "relPath": row["rel_path"],
        "docid": row["docid"],
        "uri": row["uri"],
        "sourceHash": row["source_hash"],
        "mirrorHash": row["mirror_hash"],
        "active": bool(row["active"]),
    }


def snapshot_values(values: Mapping[str, Any]) -> dict[str, Any]:
    return snapshot(values)


def structure_of(meta: DocumentMeta) -> Structure:
    return {
        "headings": list(meta.headings),
        "links": sorted({link.target for link in meta.links}),
        "typedEdges": sorted({f"{kind}:{target}" for kind, target in meta.relations}),
        "dates": [meta.date] if meta.date else [],
    }


def stored_structure(conn: sqlite3.Connection, row: sqlite3.Row) -> Structure:
    doc_id = row["id"]
    links = sorted(
        {r[0] for r in conn.execute("SELECT target FROM doc_links WHERE doc_id = ?", (doc_id,))}
    )
    edges = sorted(
        {
            f"{r[0]}:{r[1]}"
            for r in conn.execute(
                "SELECT edge_type, target FROM doc_edges WHERE src_doc_id = ?", (doc_id,)
            )
        }
    )
    return {
        "headings": json.loads(row["headings_json"] or "[]"),
        "links": links,
        "typedEdges": edges,
        "dates": [row["frontmatter_date"]] if row["frontmatter_date"] else [],
    }


def _clip(items: list[str]) -> tuple[list[str], bool]:
    clipped = []
    truncated = len(items) > MAX_DELTA_ITEMS
    for item in items[:MAX_DELTA_ITEMS]:
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
        added, t1 = _clip([x for x in after if x not in before])
        removed, t2 = _clip([x for x in before if x not in after])
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


def record(
    conn: sqlite3.Connection,
    kind: str,
    collection: str,
    observed_at: str,
    previous: Mapping[str, Any] | None,
    current: Mapping[str, Any] | None,
    delta: Mapping[str, Any],
) -> None:
    conn.execute(
        """INSERT INTO document_changes(kind, collection, observed_at, previous_json,
               current_json, delta_json) VALUES (?, ?, ?, ?, ?, ?)""",
        (
            kind,
            collection,
            observed_at,
            json.dumps(previous) if previous is not None else None,
            json.dumps(current) if current is not None else None,
            json.dumps(delta),
        ),
    )


def prune(conn: sqlite3.Connection, *, now: datetime | None = None) -> int:
    """Apply retention (age and count); returns how many entries were dropped."""
    now = now or datetime.now(UTC)
    cutoff = (now - timedelta(days=RETENTION_DAYS)).isoformat(timespec="milliseconds")
    cutoff = cutoff.replace("+00:00", "Z")
    dropped = conn.execute("DELETE FROM document_changes WHERE observed_at < ?", (cutoff,)).rowcount
    dropped += conn.execute(
        "DELETE FROM document_changes WHERE id <= (SELECT MAX(id) FROM document_changes) - ?",
        (RETENTION_ENTRIES,),
    ).rowcount
    return int(dropped)


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


def _bounds(conn: sqlite3.Connection) -> tuple[int, int]:
    """(first retained id, last id ever issued) of the journal.

    The last id comes from ``sqlite_sequence`` (the table is AUTOINCREMENT),
    so it survives retention: a cursor issued before everything was pruned
    is then recognised as expired, not as "ahead of this index". With an
    empty journal the first retained id is the next one to be issued.
    """
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'document_changes'").fetchone()
    latest = int(row[0]) if row is not None and row[0] is not None else 0
    first = conn.execute("SELECT MIN(id) FROM document_changes").fetchone()[0]
    earliest = int(first) if first is not None else latest + 1
    return earliest, latest


def feed(
    conn: sqlite3.Connection,
    *,
    since: str | None = None,
    collection: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """The ``changes@1.0`` page after ``since`` (a cursor or an ISO time)."""
    if not 1 <= limit <= 1000:
        raise GnoError("VALIDATION", "limit must be between 1 and 1000")
    earliest_id, latest_id = _bounds(conn)
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
    clauses = ["id > ?"]
    params: list[Any] = [after_id]
    if time_floor is not None:
        clauses.append("observed_at > ?")
        params.append(time_floor)
    if collection:
        clauses.append("collection = ?")
        params.append(collection.lower())
    # An expired cursor returns no entries: some changes after it are gone,
    # and handing out the rest would let a client believe it caught up. It
    # must start over from earliestCursor (changes@1.0 requires this shape).
    rows = (
        []
        if cursor_expired
        else conn.execute(
            f"SELECT * FROM document_changes WHERE {' AND '.join(clauses)} ORDER BY id LIMIT ?",
            (*params, limit + 1),
        ).fetchall()
    )
    truncated = len(rows) > limit
    rows = rows[:limit]
    changes = [
        {
            "id": encode_cursor(int(row["id"])),
            "kind": row["kind"],
            "collection": row["collection"],
            "observedAt": row["observed_at"],
            "previous": json.loads(row["previous_json"]) if row["previous_json"] else None,
            "current": json.loads(row["current_json"]) if row["current_json"] else None,
            "structureDelta": _full_delta(json.loads(row["delta_json"] or "{}")),
        }
        for row in rows
    ]
    last_id = int(rows[-1]["id"]) if rows else after_id
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


def _full_delta(delta: Mapping[str, Any]) -> dict[str, Any]:
    empty: dict[str, list[str]] = {"added": [], "removed": []}
    return {
        "headings": delta.get("headings", empty),
        "links": delta.get("links", empty),
        "typedEdges": delta.get("typedEdges", empty),
        "dates": delta.get("dates", {"added": [], "removed": [], "changed": []}),
        "truncated": bool(delta.get("truncated", False)),
    }
