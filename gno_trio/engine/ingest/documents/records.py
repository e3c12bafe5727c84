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
from typing import Any, Final

from gno_trio.engine.ingest.documents.limits import ConversionLimits
from gno_trio.engine.ingest.documents.reasons import LISTED_WARNINGS, parse_warning
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
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


def load(conn: Connection, collection: str) -> dict[str, RowView]:
    return SQLITE_STORES.ingest_records(conn).of_collection(collection)


def still_valid(record: RowView | None, size: int, mtime_ns: int, policy: str) -> bool:
    """Whether a file's record still holds: same size, mtime and policy as when judged."""
    return (
        record is not None
        and record["policy"] == policy
        and record["source_size"] == size
        and record["source_mtime_ns"] == mtime_ns
    )


def save(
    conn: Connection,
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
    SQLITE_STORES.ingest_records(conn).save(
        collection,
        rel_path,
        error.code,
        error.message,
        at=at,
        unsupported=unsupported,
        size=size,
        mtime_ns=mtime_ns,
        policy=policy,
    )


def _items(rows: list[RowView]) -> list[dict[str, Any]]:
    return [
        {"relPath": r["rel_path"], "code": r["code"], "message": r["message"], "at": r["at"]}
        for r in rows
    ]


def listing(conn: Connection, collection: str) -> dict[str, Any]:
    """``errors``/``skipped`` lists (at most :data:`LISTED` each) and their full counts."""
    out: dict[str, Any] = {}
    records = SQLITE_STORES.ingest_records(conn)
    for key, count_key, flag in (
        ("errors", "errorCount", False),
        ("skipped", "skippedCount", True),
    ):
        out[key] = _items(records.listed(collection, unsupported=flag, limit=LISTED))
        out[count_key] = records.count(collection, unsupported=flag)
    return out


def listed_warnings(conn: Connection, collection: str) -> list[dict[str, str]]:
    """Active documents' converter warnings of a listed code (at most :data:`LISTED`)."""
    found: list[dict[str, str]] = []
    for rel_path, warnings in SQLITE_STORES.documents(conn).conversion_warnings(collection):
        for item in json.loads(warnings):
            if item.get("code") in LISTED_WARNINGS:
                found.append({"relPath": rel_path, **item})
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
