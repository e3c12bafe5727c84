"""The engine's egress policy views, the confirmed policy change, and the decision receipts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gno_trio.config import EgressPolicy
from gno_trio.engine.egress import audit, change, explain
from gno_trio.engine.egress.decision import Decision
from gno_trio.engine.egress.policy import Action, ContentClass, Zone
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store.lease import HeldLease


class EgressFace(EngineKernel):
    def egress_policy(self, collection: str) -> dict[str, Any]:
        """``collection-egress-policy@1.0``: configured and effective policy of one collection."""
        return explain.policy_state(self.config.collections, collection)

    def egress_check(
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
            self.config.collections,
            requested=requested,
            zone=zone,
            authenticated=authenticated,
            content_class=content_class,
            action=action,
            operation_authorized=operation_authorized,
            partial_results=partial_results,
        )

    def set_egress_policy(
        self,
        collection: str,
        target: EgressPolicy,
        confirmation: change.Confirmation | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
        lease: HeldLease | None = None,
    ) -> dict[str, Any]:
        """Apply ``target`` under the write lease; relaxing needs a bound confirmation."""
        with self.writing(lease, should_stop=should_stop) as held:
            return change.set_policy(self, collection, target, confirmation, lease=held)

    # -- decisions the engine itself enforces, and their receipts ---------------------------

    def judge_egress(
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
        with self.connection() as c:
            return audit.judge(
                self.stores.egress_receipts(c),
                self.config.collections,
                collections=collections,
                action=action,
                zone=zone,
                content_class=content_class,
                authenticated=authenticated,
                operation_authorized=operation_authorized,
            )

    def egress_audit_list(
        self,
        *,
        limit: int = audit.DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``egress-audit-management@1.0``: one newest-first page of decision receipts."""
        with self.connection() as c:
            return audit.list_receipts(self.stores.egress_receipts(c), limit=limit, cursor=cursor)

    def egress_audit_show(self, audit_id: str) -> dict[str, Any]:
        with self.connection() as c:
            return audit.show(self.stores.egress_receipts(c), audit_id)

    def egress_audit_status(self) -> dict[str, Any]:
        with self.connection() as c:
            return audit.status(self.stores.egress_receipts(c))

    def egress_audit_delete(
        self,
        audit_id: str,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Delete one receipt under the write lease."""
        with self.writing(should_stop=should_stop), self.connection() as c:
            return audit.delete(self.stores.egress_receipts(c), audit_id)

    def egress_audit_purge(
        self,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Delete every receipt (and nothing else) under the write lease."""
        with self.writing(should_stop=should_stop), self.connection() as c:
            return audit.purge(self.stores.egress_receipts(c))


__all__ = ["EgressFace"]
