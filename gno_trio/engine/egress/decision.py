"""One request's egress decision: what it touches, and whether it may be served.

Sans-IO. The HTTP gateway asks one question per request that can return
collection content (``tools/call``, ``resources/*``): given the socket peer's
network zone, whether the caller authenticated, and the policy of every
collection the request touches, is serving it allowed? The answer carries a
redacted audit (names and classes only, never paths, queries or content) that
goes back to the client verbatim when the answer is no. The effective policy
of a request is the strictest one in its scope; a request that names
nothing is scoped to every collection, and an index without collections is
judged as if it held one ``local_only`` collection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.engine.egress.policy import (
    ACTION_DESTINATIONS,
    DEFAULT_POLICY,
    EGRESS_DENIED_CODE,
    EGRESS_DENIED_MESSAGE,
    LOCAL_ZONES,
    MAX_AUDIT_COLLECTIONS,
    Action,
    Policy,
    PolicySource,
    Zone,
    policy_allows_zone,
    strictest,
)

_URI_PREFIX: Final = "gno://"

# Argument names whose string values point at documents ("collection/path",
# "gno://collection/path" or "#docid"); the collection is the first segment.
_REFERENCE_KEYS: Final = ("ref", "target", "from", "to", "root", "uri", "pattern")
_REFERENCE_LIST_KEYS: Final = ("refs",)

# The methods whose answers can carry collection content or names.
EGRESS_METHODS: Final = frozenset(
    {"tools/call", "resources/list", "resources/read", "resources/templates/list"}
)


@dataclass(frozen=True, slots=True)
class CollectionPolicy:
    """One collection's configured policy and where the value came from."""

    name: str
    policy: Policy
    source: PolicySource


@dataclass(frozen=True, slots=True)
class Scope:
    """What one request touches: a content class and the collections it may read."""

    content_class: str
    collections: tuple[str, ...] | None
    """Lower-cased names, or ``None`` for "every collection"."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict and the redacted audit that explains it."""

    allowed: bool
    reason: str
    audit: Mapping[str, Any]

    def denial_data(self) -> dict[str, Any]:
        """The ``error.data`` of an ``EGRESS_DENIED`` reply."""
        return {
            "code": EGRESS_DENIED_CODE,
            "message": EGRESS_DENIED_MESSAGE,
            "reason": self.reason,
            "audit": dict(self.audit),
        }


def content_class_of(method: str, tool_name: str | None, tool_classes: Mapping[str, str]) -> str:
    """The kind of content a request returns (``source``, ``snippet`` ... ``metadata``).

    A tool's class is the one its module declares (``tool_classes``, handed
    in from the tool catalogue); a name no tool has returns nothing but an
    error, ``metadata``.
    """
    if method == "resources/read":
        return "source"
    if method == "tools/call" and tool_name is not None:
        return tool_classes.get(tool_name, "metadata")
    return "metadata"


def _collection_of_reference(value: str, known: frozenset[str]) -> str | None:
    """The collection a document reference names, or ``None`` when it cannot be told."""
    if value.startswith(_URI_PREFIX):
        head = value[len(_URI_PREFIX) :].split("/", 1)[0].split("?", 1)[0]
        return head.lower() if head and head != "tags" else None
    if value.startswith("#") or value.startswith("/"):
        return None
    head = value.split("/", 1)[0].lower()
    return head if head in known else None


def scope_of(
    method: str,
    params: Mapping[str, Any] | None,
    known: Iterable[str],
    tool_classes: Mapping[str, str],
) -> Scope:
    """The content class and collection scope of one request.

    Collections come from explicit ``collection``/``collections`` arguments and
    from the first segment of document references. A reference whose
    collection cannot be told (a ``#docid``, an absolute path, an unknown first
    segment), a cross-collection similarity search, or a request that names no
    collection at all is scoped to every collection, and so is a call that
    asks to reach across collections (``crossCollection: true``).
    """
    known_names = frozenset(name.lower() for name in known)
    params = params or {}
    tool_name = params.get("name") if method == "tools/call" else None
    tool = tool_name if isinstance(tool_name, str) else None
    content_class = content_class_of(method, tool, tool_classes)
    if method == "resources/read":
        uri = params.get("uri")
        named = _collection_of_reference(uri, known_names) if isinstance(uri, str) else None
        return Scope(content_class, (named,) if named is not None else None)
    if method != "tools/call":
        return Scope(content_class, None)
    arguments = params.get("arguments")
    if not isinstance(arguments, Mapping):
        return Scope(content_class, None)
    if arguments.get("crossCollection") is True:
        return Scope(content_class, None)
    names: list[str] = []
    unresolved = False
    collection = arguments.get("collection")
    if isinstance(collection, str) and collection.strip():
        names.append(collection.strip().lower())
    collections = arguments.get("collections")
    if isinstance(collections, list):
        names.extend(c.strip().lower() for c in collections if isinstance(c, str) and c.strip())
    references: list[str] = [
        value for key in _REFERENCE_KEYS if isinstance(value := arguments.get(key), str)
    ]
    for key in _REFERENCE_LIST_KEYS:
        listed = arguments.get(key)
        if isinstance(listed, list):
            references.extend(item for item in listed if isinstance(item, str))
    for reference in references:
        named = _collection_of_reference(reference, known_names)
        if named is None:
            unresolved = True
        else:
            names.append(named)
    if unresolved or not names:
        return Scope(content_class, None)
    return Scope(content_class, tuple(dict.fromkeys(names)))


def _strictest_source(policies: Sequence[CollectionPolicy], effective: Policy) -> str:
    """Where the binding policy comes from: the source of the strictest collections."""
    sources = {policy.source for policy in policies if policy.policy == effective}
    return sources.pop() if len(sources) == 1 else "mixed"


def _reason(
    *,
    action: str,
    zone: str,
    effective: Policy,
    authenticated: bool,
    operation_authorized: bool,
) -> str:
    """The one reason code a decision rests on; the rules apply in this order."""
    if zone not in ACTION_DESTINATIONS.get(action, frozenset()):
        return "ACTION_DESTINATION_MISMATCH"
    if not operation_authorized:
        return "CALLER_NOT_AUTHORIZED"
    if zone in LOCAL_ZONES:
        return "LOCAL_DESTINATION"
    if not policy_allows_zone(effective, zone):
        return "POLICY_LOCAL_ONLY" if effective == "local_only" else "POLICY_LAN_ONLY"
    if not authenticated:
        return "AUTHENTICATION_REQUIRED"
    return "LAN_POLICY_AUTHENTICATED" if zone == "lan" else "REMOTE_POLICY_AUTHENTICATED"


ALLOWING_REASONS: Final = frozenset(
    {"LOCAL_DESTINATION", "LAN_POLICY_AUTHENTICATED", "REMOTE_POLICY_AUTHENTICATED"}
)


def evaluate(
    *,
    zone: Zone,
    scope: Scope,
    policies: Mapping[str, CollectionPolicy],
    authenticated: bool,
    action: Action = "serve",
    operation_authorized: bool = True,
) -> Decision:
    """Decide whether ``action`` may move ``scope`` to a destination in ``zone``.

    Rules, in order: the action must be able to reach that kind of
    destination at all (publishing goes only to the outside world; serving
    and remote inference always cross a socket; an export is never handed to
    a loopback peer); the surrounding layer must authorise the operation; a
    destination on this machine is always allowed; a ``local_only``
    collection in scope never leaves the machine; a ``lan`` collection never
    goes beyond the local network; a destination off the machine needs an
    authenticated caller. A collection missing from ``policies`` counts as
    ``local_only`` (the default).
    """
    if scope.collections is None:
        in_scope = list(policies.values())
    else:
        in_scope = [
            policies.get(name) or CollectionPolicy(name, DEFAULT_POLICY, "config_default")
            for name in scope.collections
        ]
    if in_scope:
        effective: Policy = strictest(policy.policy for policy in in_scope)
        source = _strictest_source(in_scope, effective)
    else:
        effective, source = DEFAULT_POLICY, "config_default"
    reason = _reason(
        action=action,
        zone=zone,
        effective=effective,
        authenticated=authenticated,
        operation_authorized=operation_authorized,
    )
    names = sorted(policy.name for policy in in_scope)
    audit = {
        "action": action,
        "destinationZone": zone,
        "contentClass": scope.content_class,
        "collectionCount": len(names),
        "collections": names[:MAX_AUDIT_COLLECTIONS],
        "effectivePolicy": effective,
        "effectivePolicySource": source,
        "callerAuthenticated": authenticated,
        "callerOperationAuthorized": operation_authorized,
    }
    return Decision(allowed=reason in ALLOWING_REASONS, reason=reason, audit=audit)
