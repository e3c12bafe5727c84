"""Content-free receipts of egress decisions, kept locally and bounded.

When the engine lets content leave, or refuses to (a trace export, an Ask
generation call to a configured endpoint), it writes one receipt: the
verdict, the action, the destination zone, the content class, the binding
policy, the reason code and a digest of the collection policies judged. No
query, path, host, model or content is stored, so the log itself may be
read by anyone who may read the policies. Receipts expire after
``MAX_AGE_DAYS`` and the log keeps at most ``MAX_RECEIPTS`` receipts and
``MAX_BYTES`` bytes, oldest dropped first, in the same transaction as the
write that would exceed them.

The read views (list, show, status) and the deletions (one receipt, or
all) are what ``gno_egress_audit_*`` serve: ``egress-audit-management@1.0``.
The rows themselves are kept by a
:class:`~gno_trio.engine.store.egress_receipts.ReceiptStore`, which the
kernel opens on the call's connection (``EngineKernel.stores``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

from gno_trio.config import Collection
from gno_trio.engine.egress.decision import CollectionPolicy, Decision, Scope, evaluate
from gno_trio.engine.egress.explain import lineage as egress_lineage
from gno_trio.engine.egress.policy import Action, ContentClass, Zone
from gno_trio.engine.store import pages
from gno_trio.engine.store.database import RowView
from gno_trio.engine.store.egress_receipts import ReceiptStore
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
MAX_AGE_DAYS: Final = 30
MAX_RECEIPTS: Final = 10_000
MAX_BYTES: Final = 16 * 1024 * 1024
DEFAULT_LIMIT: Final = 100
MAX_LIMIT: Final = 1000
CURSOR_PREFIX: Final = "gno-egress-audit-v1."
DAY_MS: Final = 86_400_000
_FIELDS: Final = (
    ("auditId", "audit_id"),
    ("decision", "decision"),
    ("action", "action"),
    ("destinationZone", "destination_zone"),
    ("contentClass", "content_class"),
    ("effectivePolicy", "effective_policy"),
    ("reasonCode", "reason_code"),
    ("lineageDigest", "lineage_digest"),
    ("createdAtMs", "created_at_ms"),
    ("expiresAtMs", "expires_at_ms"),
    ("byteSize", "byte_size"),
)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def retention() -> dict[str, int]:
    return {"maxAgeDays": MAX_AGE_DAYS, "maxReceipts": MAX_RECEIPTS, "maxBytes": MAX_BYTES}


def _receipt(row: RowView) -> dict[str, Any]:
    return {name: row[column] for name, column in _FIELDS}


def _size(values: Mapping[str, Any]) -> int:
    """Bytes a receipt occupies, counted the same way for every receipt."""
    text = sum(len(str(values[name]).encode("utf-8")) for name, _ in _FIELDS[:8])
    return text + 16


def record(
    receipts: ReceiptStore, decision: Decision, lineage_digest: str, *, moment: int | None = None
) -> dict[str, Any]:
    """Store the receipt of one decision (retention applied in the same transaction)."""
    audit = decision.audit
    made: list[dict[str, Any]] = []

    def make(newest: int | None) -> dict[str, Any]:
        # Strictly later than every stored receipt, so newest-first is one order.
        created = max(now_ms() if moment is None else moment, (newest or -1) + 1)
        values = _values(decision, audit, lineage_digest, created)
        made.append(values)
        return {column: values[name] for name, column in _FIELDS}

    receipts.append(
        make,
        max_age_ms=MAX_AGE_DAYS * DAY_MS,
        max_receipts=MAX_RECEIPTS,
        max_bytes=MAX_BYTES,
    )
    return made[0]


def _values(
    decision: Decision, audit: Mapping[str, Any], lineage_digest: str, created: int
) -> dict[str, Any]:
    values: dict[str, Any] = {
        "auditId": str(uuid.uuid4()),
        "decision": "allow" if decision.allowed else "deny",
        "action": audit["action"],
        "destinationZone": audit["destinationZone"],
        "contentClass": audit["contentClass"],
        "effectivePolicy": audit["effectivePolicy"],
        "reasonCode": decision.reason,
        "lineageDigest": lineage_digest,
        "createdAtMs": created,
        "expiresAtMs": created + MAX_AGE_DAYS * DAY_MS,
    }
    values["byteSize"] = _size(values)
    return values


def judge(
    receipts: ReceiptStore,
    configured: Sequence[Collection],
    *,
    collections: Sequence[str],
    action: Action,
    zone: Zone,
    content_class: ContentClass,
    authenticated: bool,
    operation_authorized: bool = True,
) -> Decision:
    """Decide one egress the engine is about to perform under today's policies; keep its receipt."""
    known = {c.name: c for c in configured}
    names = sorted({name for name in collections if name in known})
    policies = {
        name: CollectionPolicy(
            name, known[name].effective_egress_policy, known[name].egress_policy_source
        )
        for name in names
    }
    decision = evaluate(
        zone=zone,
        scope=Scope(content_class, tuple(names)),
        policies=policies,
        authenticated=authenticated,
        action=action,
        operation_authorized=operation_authorized,
    )
    record(receipts, decision, egress_lineage(configured, names)["digest"])
    return decision


def list_receipts(
    receipts: ReceiptStore, *, limit: int = DEFAULT_LIMIT, cursor: str | None = None
) -> dict[str, Any]:
    """One page of receipts, newest first, and the cursor of the next page (or null)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise GnoError("INVALID_INPUT", f"limit must be between 1 and {MAX_LIMIT}")
    after = pages.decode_cursor(CURSOR_PREFIX, cursor, what="egress audit") if cursor else None
    rows, following = receipts.page(limit=limit, after=after)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "receipts": [_receipt(row) for row in rows],
        "nextCursor": pages.encode_cursor(CURSOR_PREFIX, following) if following else None,
    }


def show(receipts: ReceiptStore, audit_id: str) -> dict[str, Any]:
    row = receipts.get(audit_id)
    if row is None:
        raise GnoError("NOT_FOUND", f"Egress audit receipt not found: {audit_id}")
    return {"schemaVersion": SCHEMA_VERSION, "receipt": _receipt(row)}


def status(receipts: ReceiptStore) -> dict[str, Any]:
    count, size, oldest, newest = receipts.totals()
    return {
        "schemaVersion": SCHEMA_VERSION,
        "retention": retention(),
        "receipts": count,
        "bytes": size,
        "oldestCreatedAtMs": oldest,
        "newestCreatedAtMs": newest,
    }


def delete(receipts: ReceiptStore, audit_id: str) -> dict[str, Any]:
    """Delete one receipt (``NOT_FOUND`` if there is none) and clean its pages up."""
    cleanup = receipts.delete(audit_id)
    if cleanup is None:
        raise GnoError("NOT_FOUND", f"Egress audit receipt not found: {audit_id}")
    return {"schemaVersion": SCHEMA_VERSION, "auditId": audit_id, "deleted": 1, **cleanup}


def purge(receipts: ReceiptStore) -> dict[str, Any]:
    """Delete every receipt (and nothing else) and clean their pages up."""
    deleted, cleanup = receipts.delete_all()
    return {"schemaVersion": SCHEMA_VERSION, "deleted": deleted, **cleanup}


__all__ = [
    "CURSOR_PREFIX",
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "SCHEMA_VERSION",
    "delete",
    "judge",
    "list_receipts",
    "purge",
    "record",
    "retention",
    "show",
    "status",
]
