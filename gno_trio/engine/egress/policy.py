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
from typing import Any, Final, Literal

Zone = Literal["loopback", "lan", "remote"]
Policy = Literal["local_only", "lan", "remote"]
PolicySource = Literal["explicit", "config_default"]

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


def classify_peer(address: str | None) -> Zone:
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


def _summarise_source(policies: Sequence[CollectionPolicy]) -> str:
    sources = {policy.source for policy in policies}
    return sources.pop() if len(sources) == 1 else "mixed"


def evaluate(
    *,
    zone: Zone,
    scope: Scope,
    policies: Mapping[str, CollectionPolicy],
    authenticated: bool,
) -> Decision:
    """Decide whether serving ``scope`` to a peer in ``zone`` is allowed.

    Rules, in order: a loopback peer is always served; a ``local_only``
    collection in scope is never served off the machine; a ``lan`` collection
    is not served to a remote peer; a non-loopback peer must have
    authenticated. A collection missing from ``policies`` counts as
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
        source = _summarise_source(in_scope)
    else:
        effective, source = DEFAULT_POLICY, "config_default"
    if zone == "loopback":
        reason = "LOCAL_DESTINATION"
    elif effective == "local_only":
        reason = "POLICY_LOCAL_ONLY"
    elif effective == "lan" and zone == "remote":
        reason = "POLICY_LAN_ONLY"
    elif not authenticated:
        reason = "AUTHENTICATION_REQUIRED"
    else:
        reason = "LAN_POLICY_AUTHENTICATED" if effective == "lan" else "REMOTE_POLICY_AUTHENTICATED"
    allowed = reason in (
        "LOCAL_DESTINATION",
        "LAN_POLICY_AUTHENTICATED",
        "REMOTE_POLICY_AUTHENTICATED",
    )
    names = sorted(policy.name for policy in in_scope)
    audit = {
        "action": "serve",
        "destinationZone": zone,
        "contentClass": scope.content_class,
        "collectionCount": len(names),
        "collections": names[:MAX_AUDIT_COLLECTIONS],
        "effectivePolicy": effective,
        "effectivePolicySource": source,
        "callerAuthenticated": authenticated,
        "callerOperationAuthorized": allowed,
    }
    return Decision(allowed=allowed, reason=reason, audit=audit)


__all__ = [
    "EGRESS_DENIED_CODE",
    "EGRESS_DENIED_MESSAGE",
    "EGRESS_METHODS",
    "CollectionPolicy",
    "Decision",
    "Policy",
    "PolicySource",
    "Scope",
    "Zone",
    "classify_peer",
    "content_class_of",
    "evaluate",
    "scope_of",
]
