"""Collection egress policy: the vocabulary, the one policy order, and where a peer stands.

Policies order from strictest to loosest: ``local_only`` < ``lan`` < ``remote``;
each reaches a set of zones (this process, loopback, the local network,
beyond), and a socket peer or a configured endpoint is placed in one of
them. Every egress question in the engine (a gateway request, a remote
embedding endpoint, an ask answer, an audit) is answered against these
definitions, so the order is defined once. Judging one request lives in
:mod:`~gno_trio.engine.egress.decision`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Final, Literal, get_args
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
ACTION_DESTINATIONS: Final[dict[str, frozenset[str]]] = {
    "retrieve": frozenset(ZONES),
    "clip_write": frozenset(ZONES),
    "publish": frozenset({"remote"}),
    "serve": frozenset({"loopback", "lan", "remote"}),
    "remote_inference": frozenset({"loopback", "lan", "remote"}),
    "export": frozenset({"local_process", "lan", "remote"}),
}
LOCAL_ZONES: Final = frozenset({"local_process", "loopback"})

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


_HELPER: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCP_LIKE: Final = re.compile(r"^(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+):(?!//)")


def repository_zone(remote: str) -> Zone:
    """The zone of a git remote: this machine for a path or ``file://``, else its host's zone.

    URLs (``https://``, ``ssh://``, ``git://``) are placed by their host as
    :func:`endpoint_zone` does; scp-like ``[user@]host:path`` by its host;
    anything else (a local path) is read in place by this process. A remote
    helper's ``transport::address`` has no host to judge and counts as remote.
    """
    text = remote.strip()
    scheme = urlsplit(text).scheme.lower()
    if scheme == "file":
        return "local_process"
    if _HELPER.match(text):
        return "remote"
    if "://" in text:
        return endpoint_zone(text)
    scp = _SCP_LIKE.match(text)
    if scp is not None and len(scp.group(1)) > 1:  # "C:" is a Windows drive, not a host
        return endpoint_zone(f"ssh://{scp.group(1)}/")
    return "local_process"


__all__ = [
    "ACTIONS",
    "CONTENT_CLASSES",
    "EGRESS_DENIED_CODE",
    "EGRESS_DENIED_MESSAGE",
    "ZONES",
    "Action",
    "ContentClass",
    "PeerZone",
    "Policy",
    "PolicySource",
    "Zone",
    "classify_peer",
    "endpoint_zone",
    "policy_allows_zone",
    "repository_zone",
]
