"""Collection egress policy: may this content leave the machine for this peer?

Sans-IO. The HTTP gateway asks one question per request that can return
collection content (``tools/call``, ``resources/*``): given the socket peer's
network zone, whether the caller authenticated, and the policy of every
collection the request touches, is serving it allowed? The answer carries a
redacted audit (names and classes only, never paths, queries or content) that
goes back to the client verbatim when the answer is no.

Policies order from strictest to loosest: ``local_only`` < ``lan`` < ``remote``.
The effective policy of a request is the strictest one in its scope; a request
that names nothing is scoped to every collection, and an index without
collections is judged as if it held one ``local_only`` collection.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args
from urllib.parse import urlsplit

Zone = Literal["local_process", "loopback", "lan", "remote"]
"""Where content would go: this process, a loopback peer, the local network, or beyond."""
PeerZone = Literal["loopback", "lan", "remote"]
"""The zones a socket peer can be in (a peer is never this process)."""
Policy = Literal["local_only", "lan", "remote"]
PolicySource = Literal["explicit", "config_default"]
Action = Literal["retrieve", "serve", "publish", "remote_inference", "export", "clip_write"]

ContentClass = Literal[
    "source",
    "snippet",
    "metadata",
    "attachment",
    "embedding",
    "capsule",
    "audit_log",
    "retrieval_trace",
]

ACTIONS: Final[tuple[Action, ...]] = get_args(Action)
ZONES: Final[tuple[Zone, ...]] = get_args(Zone)
CONTENT_CLASSES: Final[tuple[ContentClass, ...]] = get_args(ContentClass)
"""Every kind of content a decision can be about; derived content keeps its collection's policy."""

# Destinations each action can have at all: publishing is always to the
# outside world, serving and remote inference always cross a socket, and an
# export is written by this process or sent beyond this host, never handed to
# a loopback peer. Anything else is refused before any policy is read.
_ACTION_DESTINATIONS: Final[dict[str, frozenset[str]]] = {
    "retrieve": frozenset(ZONES),
    "clip_write": frozenset(ZONES),
    "publish": frozenset({"remote"}),
    "serve": frozenset({"loopback", "lan", "remote"}),
    "remote_inference": frozenset({"loopback", "lan", "remote"}),
    "export": frozenset({"local_process", "lan", "remote"}),
}
_LOCAL_ZONES: Final = frozenset({"local_process", "loopback"})

EGRESS_DENIED_CODE: Final = "EGRESS_DENIED"
EGRESS_DENIED_MESSAGE: Final = "Operation blocked by collection egress policy"
MAX_AUDIT_COLLECTIONS: Final = 64

POLICY_ORDER: Final[tuple[Policy, ...]] = ("local_only", "lan", "remote")
"""Every egress policy, strictest first: the one definition of how far content may travel."""
DEFAULT_POLICY: Final[Policy] = "local_only"
_REACH: Final[dict[str, int]] = {policy: rank for rank, policy in enumerate(POLICY_ORDER)}


def reach(policy: str) -> int:
    """How far ``policy`` lets content travel (0 = never off the machine).

    An unknown value counts as the strictest policy: unknown is kept close.
    """
    return _REACH.get(policy, 0)


# How far off the machine each destination zone is, on the scale of reach().
_ZONE_DISTANCE: Final[dict[str, int]] = {"local_process": 0, "loopback": 0, "lan": 1, "remote": 2}


def policy_allows_zone(policy: str, zone: str) -> bool:
    """May content under ``policy`` travel to a destination in ``zone``?

    A destination on this machine always may; ``lan`` content stays on the
    local network; an unknown policy or zone is kept as close as possible.
    """
    return _ZONE_DISTANCE.get(zone, len(POLICY_ORDER)) <= reach(policy)


def strictest(policies: Iterable[str]) -> Policy:
    """The strictest of ``policies`` (the default policy when there are none)."""
    return POLICY_ORDER[min((reach(policy) for policy in policies), default=0)]


_URI_PREFIX: Final = "gno://"

# Argument names whose string values point at documents ("collection/path",
# "gno://collection/path" or "#docid"); the collection is the first segment.
_REFERENCE_KEYS: Final = ("ref", "target", "from", "to", "root", "uri", "pattern")
_REFERENCE_LIST_KEYS: Final = ("refs",)

_CONTENT_CLASS_BY_TOOL: Final[dict[str, str]] = {
    "gno_get": "source",
    "gno_multi_get": "source",
    "gno_recall": "source",
    "gno_remember": "source",
    "gno_search": "snippet",
    "gno_vsearch": "snippet",
    "gno_query": "snippet",
    "gno_similar": "snippet",
    "gno_context": "capsule",
    "gno_context_verify": "capsule",
    "gno_ask": "capsule",
    "gno_egress_audit_list": "audit_log",
    "gno_egress_audit_show": "audit_log",
    "gno_egress_audit_status": "audit_log",
    "gno_egress_audit_delete": "audit_log",
    "gno_egress_audit_purge": "audit_log",
    "gno_trace_list": "retrieval_trace",
    "gno_trace_show": "retrieval_trace",
    "gno_trace_label": "retrieval_trace",
    "gno_trace_export": "retrieval_trace",
    "gno_trace_delete": "retrieval_trace",
    "gno_trace_purge": "retrieval_trace",
}

# The methods whose answers can carry collection content or names.
EGRESS_METHODS: Final = frozenset(
    {"tools/call", "resources/list", "resources/read", "resources/templates/list"}
)

_LAN_V4: Final = tuple(
    ipaddress.IPv4Network(block) for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_LAN_V6: Final = tuple(
    ipaddress.IPv6Network(block) for block in ("fc00::/7", "fe80::/10", "fd7a:115c:a1e0::/48")
)


def classify_peer(address: str | None) -> PeerZone:
    """The network zone of a socket peer address.

    Loopback is ``127.0.0.0/8`` and ``::1``; the private IPv4 ranges, unique-local
    and link-local IPv6 (Tailscale's range included) are ``lan``. Everything
    else, including addresses that do not parse and the other special-purpose
    blocks, is ``remote``: unknown is treated as far away.
    """
    if not address:
        return "remote"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "remote"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv4Address):
        return "lan" if any(ip in block for block in _LAN_V4) else "remote"
    return "lan" if any(ip in block for block in _LAN_V6) else "remote"


def endpoint_zone(url: str) -> PeerZone:
    """The zone of the host an outbound URL names: loopback, lan or remote.

    A literal address is classified like a socket peer; ``localhost`` is
    loopback; any other host name counts as remote, since resolving it could
    not prove that it stays closer.
    """
    host = (urlsplit(url).hostname or "").strip("[]")
    if host.lower() == "localhost":
        return "loopback"
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return "remote"
    return classify_peer(host)


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


def content_class_of(method: str, tool_name: str | None) -> str:
    """The kind of content a request returns (``source``, ``snippet`` ... ``metadata``)."""
    if method == "resources/read":
        return "source"
    if method == "tools/call" and tool_name is not None:
        return _CONTENT_CLASS_BY_TOOL.get(tool_name, "metadata")
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


def scope_of(method: str, params: Mapping[str, Any] | None, known: Iterable[str]) -> Scope:
    """The content class and collection scope of one request.

    Collections come from explicit ``collection``/``collections`` arguments and
    from the first segment of document references. A reference whose
    collection cannot be told (a ``#docid``, an absolute path, an unknown first
    segment), a cross-collection similarity search, or a request that names no
    collection at all is scoped to every collection.
    """
    known_names = frozenset(name.lower() for name in known)
    params = params or {}
    tool_name = params.get("name") if method == "tools/call" else None
    tool = tool_name if isinstance(tool_name, str) else None
    content_class = content_class_of(method, tool)
    if method == "resources/read":
        uri = params.get("uri")
        named = _collection_of_reference(uri, known_names) if isinstance(uri, str) else None
        return Scope(content_class, (named,) if named is not None else None)
    if method != "tools/call":
        return Scope(content_class, None)
    arguments = params.get("arguments")
    if not isinstance(arguments, Mapping):
        return Scope(content_class, None)
    if tool == "gno_similar" and arguments.get("crossCollection") is True:
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
    if zone not in _ACTION_DESTINATIONS.get(action, frozenset()):
        return "ACTION_DESTINATION_MISMATCH"
    if not operation_authorized:
        return "CALLER_NOT_AUTHORIZED"
    if zone in _LOCAL_ZONES:
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


__all__ = [
    "ACTIONS",
    "ALLOWING_REASONS",
    "CONTENT_CLASSES",
    "EGRESS_DENIED_CODE",
    "EGRESS_DENIED_MESSAGE",
    "EGRESS_METHODS",
    "ZONES",
    "Action",
    "CollectionPolicy",
    "ContentClass",
    "Decision",
    "PeerZone",
    "Policy",
    "PolicySource",
    "Scope",
    "Zone",
    "classify_peer",
    "content_class_of",
    "endpoint_zone",
    "evaluate",
    "policy_allows_zone",
    "scope_of",
]
