"""Changing one collection's egress policy, with a bound confirmation for relaxing it.

Policies order ``local_only`` < ``lan`` < ``remote`` by how far content may
travel. Tightening (or restating) a policy is always allowed. Relaxing it
needs a confirmation naming the policy and revision the caller last read:
the revision grows with every change, so a confirmation is good for one
change only, and a stale or replayed one is refused without touching the
configuration. The new policy is written to ``index.yml`` atomically; the
HTTP gateway re-reads that file before judging the next request.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

import attrs

from gno_trio.config import EgressPolicy, load_config
from gno_trio.engine.egress import explain as egress_explain
from gno_trio.engine.egress.policy import reach
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store.lease import HeldLease
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
EPOCH_PREFIX: Final = "egress-epoch-v1:"


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What the caller saw before asking to relax: the policy and revision it read."""

    current_policy: str
    current_revision: int
    acknowledged: bool
    collection: str | None = None
    target_policy: str | None = None


def _check_confirmation(
    name: str,
    policy: str,
    revision: int,
    target: str,
    confirmation: Confirmation | None,
) -> None:
    if confirmation is None or not confirmation.acknowledged:
        raise GnoError(
            "INVALID_INPUT",
            f"Relaxing collection {name} from {policy} to {target} needs confirmation "
            f"{{currentPolicy: {policy}, currentRevision: {revision}, acknowledged: true}}",
        )
    if confirmation.collection is not None and confirmation.collection.strip().lower() != name:
        raise GnoError(
            "CONFLICT", f"The confirmation names collection {confirmation.collection}, not {name}"
        )
    if confirmation.target_policy is not None and confirmation.target_policy != target:
        raise GnoError(
            "CONFLICT",
            f"The confirmation is for target {confirmation.target_policy}, not {target}",
        )
    if confirmation.current_policy != policy or confirmation.current_revision != revision:
        raise GnoError(
            "CONFLICT",
            f"Stale confirmation: collection {name} is now {policy} at revision {revision} "
            f"(confirmed {confirmation.current_policy} at revision "
            f"{confirmation.current_revision}); read the policy again and confirm that",
        )


def _change_kind(before: dict[str, Any], target: str) -> str:
    old = str(before["effectivePolicy"])
    if reach(target) < reach(old):
        return "tightened"
    if reach(target) > reach(old):
        return "relaxed"
    return "unchanged" if before["source"] == "explicit" else "source_changed"


def _epoch(state: dict[str, Any]) -> str:
    seed = f"{state['collection']}\n{state['effectivePolicy']}\n{state['revision']}"
    return EPOCH_PREFIX + hashlib.sha256(seed.encode("utf-8")).hexdigest()


def set_policy(
    engine: EngineKernel,
    collection: str,
    target: EgressPolicy,
    confirmation: Confirmation | None = None,
    *,
    lease: HeldLease,
) -> dict[str, Any]:
    """Apply ``target`` to ``collection``; the caller holds the write lease (``lease``).

    Returns ``collection-egress-policy-set@1.0``. ``NOT_FOUND`` for an
    unknown collection; for a relaxation, ``INVALID_INPUT`` without an
    acknowledged confirmation and ``CONFLICT`` for one that does not match
    the current collection, target, policy or revision. Restating the
    current explicit policy writes nothing and keeps the revision.
    """
    # Judge against the file as it is now (another process may have changed it
    # since this engine loaded it), so a stale confirmation cannot slip through.
    config = load_config(engine.location.config_path)
    found = config.collection(collection)
    if found is None:
        raise GnoError("NOT_FOUND", f"Collection not found: {collection}")
    before = egress_explain.policy_state(config.collections, found.name)
    kind = _change_kind(before, target)
    if kind == "relaxed":
        _check_confirmation(
            found.name, before["effectivePolicy"], before["revision"], target, confirmation
        )
    if kind == "unchanged":
        return {
            "schemaVersion": SCHEMA_VERSION,
            "previous": before,
            "current": before,
            "change": kind,
            "invalidation": None,
        }
    updated = attrs.evolve(
        found, egress_policy=target, egress_policy_revision=int(before["revision"]) + 1
    )
    written = engine.update_config(lambda current: current.with_collection(updated), lease=lease)
    after = egress_explain.policy_state(written.collections, found.name)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "previous": before,
        "current": after,
        "change": kind,
        "invalidation": {
            "policyEpoch": _epoch(after),
            "queuedJobsInvalidated": 0,
            "sessionsInvalidated": 0,
            "staleWorkMustRetry": True,
        },
    }
