"""The engine's egress policy views and the confirmed policy change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gno_trio.config import EgressPolicy
from gno_trio.engine.egress import change, explain
from gno_trio.engine.egress.policy import Zone
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
        action: str = "serve",
        partial: bool = False,
    ) -> dict[str, Any]:
        """``collection-egress-check@1.0``: would serving this scope be allowed, and why."""
        return explain.check(
            self.config.collections,
            requested=requested,
            zone=zone,
            authenticated=authenticated,
            content_class=content_class,
            action=action,
            partial=partial,
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


__all__ = ["EgressFace"]
