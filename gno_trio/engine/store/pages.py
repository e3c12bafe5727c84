"""Newest-first keyset pages over receipt tables, and truthful physical cleanup.

The egress audit and the retrieval traces both list receipts newest first,
one page at a time, and both delete receipts on request. Two things are the
same for both and live here once:

* a cursor names the last row of a page by ``(created_at_ms, id)``; it is
  opaque to the caller (a prefix naming its table, then base64url JSON) and
  decoded strictly: only the exact text :func:`encode_cursor` produced is
  accepted, so a mistyped cursor fails instead of resuming somewhere else;
* a deletion overwrites the freed pages (``secure_delete``) and then asks
  SQLite to fold the write-ahead log back into the file, and reports what
  really happened: ``completed``, ``wal_busy`` while a reader still holds
  old frames, or ``failed``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.errors import GnoError

MAX_CURSOR_CHARS: Final = 512
MAX_ID_CHARS: Final = 128
_SECURE_DELETE_MODES: Final = {0: "OFF", 1: "ON", 2: "FAST"}


@dataclass(frozen=True, slots=True)
class PageKey:
    """Where a newest-first page stopped: the last row's creation time and id."""

    created_at_ms: int
    row_id: str


def encode_cursor(prefix: str, key: PageKey) -> str:
    body = json.dumps([key.created_at_ms, key.row_id], separators=(",", ":"))
    return prefix + base64.urlsafe_b64encode(body.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(prefix: str, cursor: str, *, what: str) -> PageKey:
    """The key in a cursor :func:`encode_cursor` issued under ``prefix``; else ``INVALID_INPUT``."""
    key: PageKey | None = None
    body = cursor[len(prefix) :] if cursor.startswith(prefix) else ""
    if body and len(cursor) <= MAX_CURSOR_CHARS:
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")
            value = json.loads(raw)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            value = None
        if (
            isinstance(value, list)
            and len(value) == 2
            and type(value[0]) is int
            and value[0] >= 0
            and isinstance(value[1], str)
            and 0 < len(value[1]) <= MAX_ID_CHARS
        ):
            key = PageKey(value[0], value[1])
    if key is None or encode_cursor(prefix, key) != cursor:
        raise GnoError("INVALID_INPUT", f"Invalid {what} cursor: {cursor}")
    return key


def newest_first(
    conn: sqlite3.Connection,
    *,
    table: str,
    id_column: str,
    limit: int,
    after: PageKey | None,
) -> tuple[list[sqlite3.Row], PageKey | None]:
    """One page of ``table`` newest first, and the key of the next page (``None`` at the end).

    ``table`` and ``id_column`` are this package's own identifiers, never
    caller text.
    """
    order = f"ORDER BY created_at_ms DESC, {id_column} DESC LIMIT ?"
    if after is None:
        rows = conn.execute(f"SELECT * FROM {table} {order}", (limit + 1,)).fetchall()
    else:
        rows = conn.execute(
            f"SELECT * FROM {table} WHERE created_at_ms < ? "
            f"OR (created_at_ms = ? AND {id_column} < ?) {order}",
            (after.created_at_ms, after.created_at_ms, after.row_id, limit + 1),
        ).fetchall()
    page = rows[:limit]
    more = len(rows) > limit and page
    last = page[-1] if more else None
    return page, (PageKey(int(last["created_at_ms"]), str(last[id_column])) if last else None)


@contextlib.contextmanager
def secure_deletion(conn: sqlite3.Connection) -> Iterator[None]:
    """Deleted rows are overwritten on disk while the block runs (the setting is restored)."""
    row = conn.execute("PRAGMA secure_delete").fetchone()
    prior = int(row[0]) if row is not None else 0
    conn.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute(f"PRAGMA secure_delete = {_SECURE_DELETE_MODES.get(prior, 'OFF')}")


def physical_cleanup(conn: sqlite3.Connection) -> dict[str, Any]:
    """Fold the write-ahead log into the database file and say how far that got."""
    try:
        row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error:
        return {"physicalCleanup": "failed", "checkpointedFrames": 0, "remainingWalFrames": 0}
    busy, log, checkpointed = (int(row[0]), int(row[1]), int(row[2])) if row else (1, -1, 0)
    done = busy == 0 and log in (0, -1)
    return {
        "physicalCleanup": "completed" if done else "wal_busy",
        "checkpointedFrames": max(0, checkpointed),
        "remainingWalFrames": max(0, log - max(0, checkpointed)) if not done else 0,
    }


__all__ = [
    "PageKey",
    "decode_cursor",
    "encode_cursor",
    "newest_first",
    "physical_cleanup",
    "secure_deletion",
]
