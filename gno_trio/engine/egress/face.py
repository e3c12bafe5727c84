"""``engine.egress``: the policy views, the confirmed policy change, and the decision receipts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gno_trio.config import EgressPolicy
from gno_trio.engine.egress import audit, change, explain
from gno_trio.engine.egress.decision import Decision
from gno_trio.engine.egress.policy import Action, ContentClass, Zone
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store.lease import HeldLease


class EgressFace:
    """Egress policies of an opened index and the receipts of the decisions taken under them."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel

    def policy(self, collection: str) -> dict[str, Any]:
        """``collection-egress-policy@1.0``: configured and effective policy of one collection."""
        return explain.policy_state(self._kernel.config.collections, collection)

    def check(
        self,
        *,
        requested: Sequence[str] | None,
        zone: Zone,
        authenticated: bool,
        content_class: str,
        action: Action = "serve",
        operation_authorized: bool = True,
        partial_results: explain.PartialMode = "deny",
    ) -> dict[str, Any]:
        """``collection-egress-check@1.0``: would this egress be allowed, and why (a dry run)."""
        return explain.check(
            self._kernel.config.collections,
            requested=requested,
            zone=zone,
            authenticated=authenticated,
            content_class=content_class,
            action=action,
            operation_authorized=operation_authorized,
            partial_results=partial_results,
        )

    def set_policy(
        self,
        collection: str,
        target: EgressPolicy,
        confirmation: change.Confirmation | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
        lease: HeldLease | None = None,
    ) -> dict[str, Any]:
        """Apply ``target`` under the write lease; relaxing needs a bound confirmation."""
        with self._kernel.writing(lease, should_stop=should_stop) as held:
            return change.set_policy(self._kernel, collection, target, confirmation, lease=held)

    # -- decisions the engine itself enforces, and their receipts ---------------------------

    def judge(
        self,
        *,
        collections: Sequence[str],
        action: Action,
        zone: Zone,
        content_class: ContentClass,
        authenticated: bool,
        operation_authorized: bool = True,
    ) -> Decision:
        """Decide one egress the engine is about to perform, and keep its receipt.

        The decision uses the policies configured now; the receipt (content
        free) is written whether the answer is yes or no.
        """
        with self._kernel.connection() as c:
            return audit.judge(
                self._kernel.stores.egress_receipts(c),
                self._kernel.config.collections,
                collections=collections,
                action=action,
                zone=zone,
                content_class=content_class,
                authenticated=authenticated,
                operation_authorized=operation_authorized,
            )

    def audit_list(
        self,
        *,
        limit: int = audit.DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``egress-audit-management@1.0``: one newest-first page of decision receipts."""
        with self._kernel.connection() as c:
            return audit.list_receipts(
                self._kernel.stores.egress_receipts(c), limit=limit, cursor=cursor
            )

    def audit_show(self, audit_id: str) -> dict[str, Any]:
        with self._kernel.connection() as c:
            return audit.show(self._kernel.stores.egress_receipts(c), audit_id)

    def audit_status(self) -> dict[str, Any]:
        with self._kernel.connection() as c:
            return audit.status(self._kernel.stores.egress_receipts(c))

    def audit_delete(
        self,
        audit_id: str,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Delete one receipt under the write lease."""
        with self._kernel.writing(should_stop=should_stop), self._kernel.connection() as c:
            return audit.delete(self._kernel.stores.egress_receipts(c), audit_id)

    def audit_purge(
        self,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Delete every receipt (and nothing else) under the write lease."""
        with self._kernel.writing(should_stop=should_stop), self._kernel.connection() as c:
            return audit.purge(self._kernel.stores.egress_receipts(c))


__all__ = ["EgressFace"]
