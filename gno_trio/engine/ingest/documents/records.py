"""What the index remembers about conversions: files not indexed, and each document's caveats.

Every file the walker sees ends up either indexed or recorded here, in
``ingest_errors``, with its reason code and whether its *type* was the
reason (``unsupported``). A record also keeps the file's size and mtime and
the conversion *policy* it was judged under (a fingerprint of the limits and
of every converter's version), so a re-sync skips an unchanged file with a
``stat``, as it does for indexed ones, while a new converter or a raised
limit judges it again.

``status`` lists the records in two groups: ``errors`` (files of a type we
index that could not be: damaged, encrypted, too large, timed out) and
``skipped`` (files of a type we do not index). Only errors make an index
unhealthy: a folder of photos next to the notes is not a fault.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any, Final

from gno_trio.engine.ingest.documents.limits import ConversionLimits
from gno_trio.engine.ingest.documents.reasons import LISTED_WARNINGS, parse_warning
from gno_trio.engine.store.database import RowView
from gno_trio.errors import GnoError

LISTED: Final = 50
"""Records listed per collection and group in ``status`` (the counts are complete)."""


def policy_fingerprint(limits: ConversionLimits) -> str:
    """Changes whenever a record made under the old policy might now come out otherwise."""
    # Every converter module: loaded by a sync that converts, not by a search showing a record.
    from gno_trio.engine.ingest.documents.registry import converter_versions

    converters = sorted(converter_versions().items())
    payload = json.dumps([list(limits.as_tuple()), converters])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def load(conn: sqlite3.Connection, collection: str) -> dict[str, sqlite3.Row]:
    rows = conn.execute("SELECT * FROM ingest_errors WHERE collection = ?", (collection,))
    return {row["rel_path"]: row for row in rows}


def still_valid(record: RowView | None, size: int, mtime_ns: int, policy: str) -> bool:
    """Whether a file's record still holds: same size, mtime and policy as when judged."""
    return (
        record is not None
        and record["policy"] == policy
        and record["source_size"] == size
        and record["source_mtime_ns"] == mtime_ns
    )


def save(
    conn: sqlite3.Connection,
    collection: str,
    rel_path: str,
    error: GnoError,
    *,
    at: str,
    unsupported: bool = False,
    size: int | None = None,
    mtime_ns: int | None = None,
    policy: str | None = None,
) -> None:
    """Record (or refresh) why a file is not indexed.

    Without ``size``/``mtime_ns``/``policy`` the record is retried on every
    sync (a read error, a listing error).
    """
    conn.execute(
        """INSERT INTO ingest_errors(collection, rel_path, code, message, at, unsupported,
               source_size, source_mtime_ns, policy) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(collection, rel_path) DO UPDATE SET code = excluded.code,
               message = excluded.message, at = excluded.at, unsupported = excluded.unsupported,
               source_size = excluded.source_size, source_mtime_ns = excluded.source_mtime_ns,
               policy = excluded.policy""",
        (
            collection,
            rel_path,
            error.code,
            error.message,
            at,
            int(unsupported),
            size,
            mtime_ns,
            policy,
        ),
    )


def _items(rows: list[sqlite3.Row]) -> list[dict[str, Any]]:
    return [
        {"relPath": r["rel_path"], "code": r["code"], "message": r["message"], "at": r["at"]}
        for r in rows
    ]


def listing(conn: sqlite3.Connection, collection: str) -> dict[str, Any]:
    """``errors``/``skipped`` lists (at most :data:`LISTED` each) and their full counts."""
    out: dict[str, Any] = {}
    for key, count_key, flag in (("errors", "errorCount", 0), ("skipped", "skippedCount", 1)):
        rows = conn.execute(
            "SELECT * FROM ingest_errors WHERE collection = ? AND unsupported = ? "
            "ORDER BY rel_path LIMIT ?",
            (collection, flag, LISTED),
        ).fetchall()
        out[key] = _items(rows)
        out[count_key] = int(
            conn.execute(
                "SELECT COUNT(*) FROM ingest_errors WHERE collection = ? AND unsupported = ?",
                (collection, flag),
            ).fetchone()[0]
        )
    return out


def listed_warnings(conn: sqlite3.Connection, collection: str) -> list[dict[str, str]]:
    """Active documents' converter warnings of a listed code (at most :data:`LISTED`)."""
    found: list[dict[str, str]] = []
    rows = conn.execute(
        "SELECT rel_path, conversion_warnings_json AS w FROM documents WHERE collection = ? "
        "AND active = 1 AND conversion_warnings_json != '[]' ORDER BY rel_path",
        (collection,),
    )
    for row in rows:
        for item in json.loads(row["w"]):
            if item.get("code") in LISTED_WARNINGS:
                found.append({"relPath": row["rel_path"], **item})
        if len(found) >= LISTED:
            break
    return found[:LISTED]


def warnings_json(warnings: tuple[str, ...]) -> str:
    """A document's converter warnings as stored (GNO's ``{code, message}`` items)."""
    return json.dumps([parse_warning(w) for w in warnings])


def conversion_block(row: RowView) -> dict[str, Any]:
    """GNO's ``conversion`` object of a search or get result."""
    block: dict[str, Any] = {
        "converterId": row["converter_id"],
        "converterVersion": row["converter_version"],
        "mirrorHash": row["mirror_hash"],
    }
    stored = row["conversion_warnings_json"]
    warnings = json.loads(stored) if stored and stored != "[]" else []
    if warnings:
        block["warnings"] = warnings
    return block
