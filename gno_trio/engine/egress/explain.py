"""Read-only views of the egress policy: one collection's state, and dry-run checks.

Both answers are built from the configuration and the decision rules of
:mod:`gno_trio.engine.egress.policy`, so a dry run predicts exactly what the HTTP gateway
would do for the same peer zone, caller and scope. Nothing here sends,
stores or changes anything, and nothing in an answer is content: only
collection names, policies, reason codes and fingerprints.

Partial mode answers "what could I get if the refused collections were left
out?": each collection is judged on its own, the ones allowed alone form the
served subset, and the rest are listed as omitted with their own reason.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final, Literal

from gno_trio.config import Collection
from gno_trio.engine.egress.decision import CollectionPolicy, Decision, Scope, evaluate
from gno_trio.engine.egress.policy import (
    ACTIONS,
    CONTENT_CLASSES,
    ZONES,
    Action,
    Policy,
    Zone,
    strictest,
)
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
PARTIAL_MODES: Final = ("deny", "explicit")
"""``partialResults``: refuse the whole scope, or serve the allowed part and say so."""
PartialMode = Literal["deny", "explicit"]
MAX_CHECK_COLLECTIONS: Final = 64
VERSION_PREFIX: Final = "egress-policy-v1:"
SYSTEM_SCOPE: Final = "system"
"""The stand-in scope an index without collections is judged as (``local_only``)."""

PARTIAL_NOT_REQUESTED: Final = "PARTIAL_NOT_REQUESTED"

Mode = Literal["complete", "partial", "denied"]

_REMEDIES: Final[dict[str, tuple[str, str]]] = {
    "POLICY_LOCAL_ONLY": (
        "RELAX_COLLECTION_POLICY",
        "Set the collection's egress policy to lan (or remote) to serve it off this machine.",
    ),
    "POLICY_LAN_ONLY": (
        "RELAX_COLLECTION_POLICY",
        "Set the collection's egress policy to remote to serve it beyond the local network.",
    ),
    "AUTHENTICATION_REQUIRED": (
        "AUTHENTICATE_CALLER",
        "Call with a bearer token: peers off this machine must authenticate.",
    ),
    "CALLER_NOT_AUTHORIZED": (
        "AUTHORIZE_OPERATION",
        "The operation itself is not authorised for this caller; no policy change helps.",
    ),
    "ACTION_DESTINATION_MISMATCH": (
        "CHOOSE_MATCHING_DESTINATION",
        "This action cannot go to that destination zone; ask about a zone it can reach.",
    ),
    PARTIAL_NOT_REQUESTED: (
        "REQUEST_PARTIAL",
        "Ask again with partialResults=explicit to be served the collections that are allowed.",
    ),
}


def _digest(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _revision(collection: Collection) -> int:
    return collection.egress_policy_revision or 0


def policy_state(collections: Sequence[Collection], name: str) -> dict[str, Any]:
    """``gno_egress_policy_get``: configured and effective policy of one collection.

    ``configuredPolicy`` is ``null`` when the configuration does not set one;
    ``version`` fingerprints the whole state, so two reads compare cheaply.
    Raises ``NOT_FOUND`` for an unknown collection.
    """
    wanted = name.strip().lower()
    found = next((c for c in collections if c.name == wanted), None)
    if found is None:
        raise GnoError("NOT_FOUND", f"Collection not found: {name}")
    state: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "collection": found.name,
        "configuredPolicy": found.egress_policy,
        "effectivePolicy": found.effective_egress_policy,
        "source": found.egress_policy_source,
        "revision": _revision(found),
    }
    state["version"] = VERSION_PREFIX + _digest(state)
    return state


def _scope_names(collections: Sequence[Collection], requested: Sequence[str] | None) -> list[str]:
    """The checked scope: the requested names (validated) or every configured one."""
    known = [c.name for c in collections]
    if requested is None:
        return sorted(known)
    names = [name.strip().lower() for name in requested]
    if not names or len(names) > MAX_CHECK_COLLECTIONS:
        raise GnoError(
            "INVALID_INPUT", f"collections must name 1 to {MAX_CHECK_COLLECTIONS} collections"
        )
    if len(set(names)) != len(names):
        raise GnoError("INVALID_INPUT", "collections must not name a collection twice")
    unknown = [name for name in names if name not in known]
    if unknown:
        raise GnoError("NOT_FOUND", f"Collection not found: {', '.join(unknown)}")
    return names


def lineage(collections: Sequence[Collection], names: Sequence[str]) -> dict[str, Any]:
    """The policies a scope is judged under, their digest, and the strictest of them."""
    by_name = {c.name: c for c in collections}
    sources: list[dict[str, Any]] = [
        {
            "collection": name,
            "policy": by_name[name].effective_egress_policy,
            "source": by_name[name].egress_policy_source,
            "revision": _revision(by_name[name]),
        }
        for name in names
    ]
    if not sources:
        sources = [
            {
                "collection": SYSTEM_SCOPE,
                "policy": "local_only",
                "source": "config_default",
                "revision": 0,
            }
        ]
    effective: Policy = strictest(s["policy"] for s in sources)
    return {"effectivePolicy": effective, "digest": _digest(sources), "sources": sources}


def _decision_entry(decision: Decision) -> dict[str, Any]:
    return {
        "allowed": decision.allowed,
        "code": "EGRESS_ALLOWED" if decision.allowed else "EGRESS_DENIED",
        "reason": decision.reason,
        "audit": dict(decision.audit),
    }


def check(
    collections: Sequence[Collection],
    *,
    requested: Sequence[str] | None,
    zone: Zone,
    authenticated: bool,
    content_class: str,
    action: Action = "serve",
    operation_authorized: bool = True,
    partial_results: PartialMode = "deny",
) -> dict[str, Any]:
    """``gno_egress_check``: would this action on this scope to this zone be allowed, and why?

    ``requested`` ``None`` means every configured collection. With
    ``partial_results="explicit"`` a refused scope is narrowed to the
    collections allowed on their own, and the answer discloses what was left
    out. Raises ``INVALID_INPUT`` for an unknown action, zone, content class
    or partial mode, an empty, oversized or repeating scope, and
    ``NOT_FOUND`` for an unknown collection.
    """
    if action not in ACTIONS:
        raise GnoError(
            "INVALID_INPUT", f"Unknown egress action: {action} (expected {', '.join(ACTIONS)})"
        )
    if zone not in ZONES:
        raise GnoError("INVALID_INPUT", f"Unknown destination zone: {zone}")
    if content_class not in CONTENT_CLASSES:
        raise GnoError("INVALID_INPUT", f"Unknown content class: {content_class}")
    if partial_results not in PARTIAL_MODES:
        raise GnoError(
            "INVALID_INPUT", f"partialResults must be deny or explicit (got {partial_results})"
        )
    names = _scope_names(collections, requested)
    policies = {
        c.name: CollectionPolicy(c.name, c.effective_egress_policy, c.egress_policy_source)
        for c in collections
        if c.name in names
    }

    def judge(scope: Sequence[str]) -> Decision:
        return evaluate(
            zone=zone,
            scope=Scope(content_class, tuple(scope)),
            policies={name: policies[name] for name in scope},
            authenticated=authenticated,
            action=action,
            operation_authorized=operation_authorized,
        )

    whole = judge(names)
    alone = {name: judge([name]) for name in names}
    allowed = [name for name in names if alone[name].allowed]
    mode: Mode
    if whole.allowed:
        mode, served, decision = "complete", list(names), whole
    elif partial_results == "explicit" and allowed:
        mode, served, decision = "partial", allowed, judge(allowed)
    else:
        mode, served, decision = "denied", [], whole
    omitted = [
        {
            "collection": name,
            "reason": alone[name].reason if not alone[name].allowed else PARTIAL_NOT_REQUESTED,
        }
        for name in names
        if name not in served
    ]
    disclosure = (
        {
            "code": "EGRESS_PARTIAL_RESULT",
            "omittedCount": len(omitted),
            "omittedCollections": [entry["collection"] for entry in omitted],
        }
        if mode == "partial"
        else None
    )
    blocking = decision.reason if not decision.allowed else None
    if blocking is None and omitted:
        blocking = omitted[0]["reason"]
    remedy = _REMEDIES.get(blocking) if blocking is not None else None
    return {
        "schemaVersion": SCHEMA_VERSION,
        "mode": mode,
        "allowedCollections": served,
        "omittedCollections": omitted,
        "disclosure": disclosure,
        "lineage": lineage(collections, names),
        "decision": _decision_entry(decision),
        "remediation": {"code": remedy[0], "message": remedy[1]} if remedy else None,
    }


__all__ = [
    "MAX_CHECK_COLLECTIONS",
    "PARTIAL_MODES",
    "PARTIAL_NOT_REQUESTED",
    "SCHEMA_VERSION",
    "SYSTEM_SCOPE",
    "check",
    "lineage",
    "policy_state",
]
