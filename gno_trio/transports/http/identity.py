"""Who is calling: opaque per-caller labels and the owner check of 2025-era sessions."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Final

from gno_trio.errors import GnoError
from gno_trio.transports.http.boundary import Caller
from gno_trio.transports.http.tokens import create_secret_file, read_token_file

CALLER_LABEL_PREFIX: Final = "http:"
CALLER_KEY_NAME: Final = "gateway-caller-key"
"""The file in the data directory holding the key every gateway process labels callers with."""


def ensure_caller_key(path: Path) -> bytes:
    """The labelling key of the gateways serving one data directory; created once if missing.

    Every worker of ``serve --workers N`` (and every later run on the same
    data directory) reads the same key, so one caller has one label, and a
    memory receipt issued by one worker verifies on another. The file is
    created like a token file (256 random bits, mode 0600, linked into place
    whole) and must stay a regular owner-only file; ``GnoError`` otherwise.
    """
    create_secret_file(path, "caller key file")
    state = read_token_file(path)
    if state.digest is None:
        raise GnoError(
            "RUNTIME",
            f"caller key file {path}: {state.problem} (it must be a regular file with mode "
            "0600 or stricter; delete it to have a new one made)",
        )
    return state.digest


class CallerLabels:
    """``http:<16 hex>`` per security identity: an HMAC of the identity under the gateway's key.

    Two callers with different tokens never share a memory session,
    unauthenticated loopback callers all share one, and the bearer digest
    itself never reaches a stored record. Processes given the same key (the
    workers of one gateway, :func:`ensure_caller_key`) give a caller the same
    label.
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._labels: dict[str, str] = {}

    def label(self, identity: str) -> str:
        """The memory session label of ``identity`` (cached; the cache is bounded)."""
        label = self._labels.get(identity)
        if label is None:
            digest = hmac.new(self._key, identity.encode(), hashlib.sha256).hexdigest()
            label = CALLER_LABEL_PREFIX + digest[:16]
            if len(self._labels) < 4096:
                self._labels[identity] = label
        return label


def session_belongs_to(session_identity: str, caller: Caller) -> bool:
    """A 2025-era session may only be used by the identity that created it."""
    return session_identity == caller.identity


__all__ = [
    "CALLER_KEY_NAME",
    "CALLER_LABEL_PREFIX",
    "CallerLabels",
    "ensure_caller_key",
    "session_belongs_to",
]
