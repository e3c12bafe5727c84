"""The egress policy as surfaces need it (part of the engine's public face).

The policies in their order, the zones, actions and content classes, the
HTTP methods the gateway's judge knows, and the judge itself
(``evaluate_egress`` over a collection's ``CollectionPolicy``, the scope a
request names, the zone a peer is in): what the HTTP gateway and the egress
tools decide with, the rules staying in :mod:`gno_trio.engine.egress`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gno_trio.engine.lazy import Homes, lazy_exports

if TYPE_CHECKING:
    from gno_trio.engine.egress.decision import EGRESS_METHODS as EGRESS_METHODS
    from gno_trio.engine.egress.decision import CollectionPolicy as CollectionPolicy
    from gno_trio.engine.egress.decision import evaluate as evaluate_egress
    from gno_trio.engine.egress.decision import scope_of as egress_scope_of
    from gno_trio.engine.egress.explain import PartialMode as EgressPartialMode
    from gno_trio.engine.egress.policy import ACTIONS as EGRESS_ACTIONS
    from gno_trio.engine.egress.policy import CONTENT_CLASSES as EGRESS_CONTENT_CLASSES
    from gno_trio.engine.egress.policy import EGRESS_DENIED_MESSAGE as EGRESS_DENIED_MESSAGE
    from gno_trio.engine.egress.policy import POLICY_ORDER as POLICY_ORDER
    from gno_trio.engine.egress.policy import ZONES as EGRESS_ZONES
    from gno_trio.engine.egress.policy import Action as EgressAction
    from gno_trio.engine.egress.policy import ContentClass as EgressContentClass
    from gno_trio.engine.egress.policy import Policy as Policy
    from gno_trio.engine.egress.policy import Zone as Zone
    from gno_trio.engine.egress.policy import classify_peer as classify_peer

_HOMES: Final[Homes] = {
    "EGRESS_METHODS": ("gno_trio.engine.egress.decision", "EGRESS_METHODS"),
    "CollectionPolicy": ("gno_trio.engine.egress.decision", "CollectionPolicy"),
    "evaluate_egress": ("gno_trio.engine.egress.decision", "evaluate"),
    "egress_scope_of": ("gno_trio.engine.egress.decision", "scope_of"),
    "EgressPartialMode": ("gno_trio.engine.egress.explain", "PartialMode"),
    "EGRESS_ACTIONS": ("gno_trio.engine.egress.policy", "ACTIONS"),
    "EGRESS_CONTENT_CLASSES": ("gno_trio.engine.egress.policy", "CONTENT_CLASSES"),
    "EGRESS_DENIED_MESSAGE": ("gno_trio.engine.egress.policy", "EGRESS_DENIED_MESSAGE"),
    "POLICY_ORDER": ("gno_trio.engine.egress.policy", "POLICY_ORDER"),
    "EGRESS_ZONES": ("gno_trio.engine.egress.policy", "ZONES"),
    "EgressAction": ("gno_trio.engine.egress.policy", "Action"),
    "EgressContentClass": ("gno_trio.engine.egress.policy", "ContentClass"),
    "Policy": ("gno_trio.engine.egress.policy", "Policy"),
    "Zone": ("gno_trio.engine.egress.policy", "Zone"),
    "classify_peer": ("gno_trio.engine.egress.policy", "classify_peer"),
}
"""Each name: the module that defines it, and its name there (loaded on first use, as in
:mod:`gno_trio.engine`)."""

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

__all__ = [
    "EGRESS_ACTIONS",
    "EGRESS_CONTENT_CLASSES",
    "EGRESS_DENIED_MESSAGE",
    "EGRESS_METHODS",
    "EGRESS_ZONES",
    "POLICY_ORDER",
    "CollectionPolicy",
    "EgressAction",
    "EgressContentClass",
    "EgressPartialMode",
    "Policy",
    "Zone",
    "classify_peer",
    "egress_scope_of",
    "evaluate_egress",
]
