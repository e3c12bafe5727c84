"""Who is calling: opaque per-caller labels and the owner check of 2025-era sessions."""

from __future__ import annotations

import hashlib
from typing import Final

from gno_trio.transports.http.boundary import Caller

CALLER_LABEL_PREFIX: Final = "http:"


class CallerLabels:
    """``http:<16 hex>`` per security identity, unique to this server instance.

    The label is a hash of the instance id and the identity, so two callers
    with different tokens never share a memory session, unauthenticated
    loopback callers all share one, and the bearer digest itself never
    reaches a stored record.
    """

    def __init__(self, instance_id: str) -> None:
        self._instance_id = instance_id
        self._labels: dict[str, str] = {}

    def label(self, identity: str) -> str:
        """The memory session label of ``identity`` (cached; the cache is bounded)."""
        label = self._labels.get(identity)
        if label is None:
            digest = hashlib.sha256(f"{self._instance_id}\x00{identity}".encode()).hexdigest()
            label = CALLER_LABEL_PREFIX + digest[:16]
            if len(self._labels) < 4096:
                self._labels[identity] = label
        return label


def session_belongs_to(session_identity: str, caller: Caller) -> bool:
    """A 2025-era session may only be used by the identity that created it."""
    return session_identity == caller.identity


__all__ = ["CALLER_LABEL_PREFIX", "CallerLabels", "session_belongs_to"]
