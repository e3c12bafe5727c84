"""The 2026-07-28 per-request ``params._meta`` envelope, and ``_meta`` splitting for both eras.

A modern request names its protocol version and client capabilities in every
``params._meta``. This module validates that envelope with msgspec, lifts the
reserved keys into an :class:`Envelope`, and leaves every other ``_meta`` key
(custom, tracing, vendor) untouched so tool handlers see them exactly as sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from gno_trio.protocol.errors import invalid_envelope, invalid_params, unsupported_version
from gno_trio.protocol.jsonrpc import ProgressToken
from gno_trio.protocol.versions import MODERN_VERSIONS

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
PROGRESS_TOKEN_KEY: Final = "progressToken"

LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

_LIFTED_KEYS: Final = frozenset(
    {
        PROTOCOL_VERSION_KEY,
        CLIENT_CAPABILITIES_KEY,
        CLIENT_INFO_KEY,
        LOG_LEVEL_KEY,
        PROGRESS_TOKEN_KEY,
    }
)


class Implementation(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """A client's self-description (display only; never used for decisions)."""

    name: str
    version: str
    title: str | None = None


class _EnvelopeWire(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    protocol_version: str = msgspec.field(name=PROTOCOL_VERSION_KEY)
    client_capabilities: dict[str, Any] = msgspec.field(name=CLIENT_CAPABILITIES_KEY)
    client_info: Implementation | None = msgspec.field(name=CLIENT_INFO_KEY, default=None)
    log_level: LoggingLevel | None = msgspec.field(name=LOG_LEVEL_KEY, default=None)
    progress_token: ProgressToken | None = msgspec.field(name=PROGRESS_TOKEN_KEY, default=None)


class _ProgressOnly(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    progress_token: ProgressToken | None = msgspec.field(name=PROGRESS_TOKEN_KEY, default=None)


class Envelope(msgspec.Struct, frozen=True):
    """The reserved keys of a modern request's ``_meta``, plus everything else it carried."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: Implementation | None = None
    log_level: LoggingLevel | None = None
    progress_token: ProgressToken | None = None
    custom_meta: dict[str, Any] = msgspec.field(default_factory=dict)


def meta_of(params: Mapping[str, Any] | None) -> Any:
    """``params._meta`` as sent (``None`` when absent)."""
    if params is None:
        return None
    return params.get("_meta")


def claims_modern(params: Mapping[str, Any] | None) -> bool:
    """Whether a request claims the modern era.

    The protocol-version key alone is the claim: legacy clients never send a key
    under the reserved ``io.modelcontextprotocol/`` prefix, and a half-built
    envelope must still be routed modern so it gets a precise ``-32602``.
    """
    meta = meta_of(params)
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def _custom_keys(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in meta.items() if key not in _LIFTED_KEYS}


def parse_envelope(params: Mapping[str, Any] | None) -> Envelope:
    """Validate the shape of a modern envelope; the version itself is checked separately.

    Raises ``ProtocolError(-32602, "Invalid _meta envelope")`` with ``data.detail``
    naming the problem (msgspec's path, e.g. ``at `$.io.modelcontextprotocol/clientInfo.name```).
    """
    meta = meta_of(params)
    if meta is None:
        raise invalid_envelope("params._meta is required on 2026-07-28 requests")
    if not isinstance(meta, dict):
        raise invalid_envelope("params._meta must be an object")
    try:
        wire = msgspec.convert(meta, _EnvelopeWire)
    except msgspec.ValidationError as exc:
        raise invalid_envelope(str(exc)) from None
    return Envelope(
        protocol_version=wire.protocol_version,
        client_capabilities=wire.client_capabilities,
        client_info=wire.client_info,
        log_level=wire.log_level,
        progress_token=wire.progress_token,
        custom_meta=_custom_keys(meta),
    )


def require_supported_version(
    envelope: Envelope, supported: tuple[str, ...] = MODERN_VERSIONS
) -> None:
    """Raise ``-32022`` (``data.supported``/``data.requested``) unless the version is served."""
    if envelope.protocol_version not in supported:
        raise unsupported_version(envelope.protocol_version, supported)


def split_legacy_meta(
    params: Mapping[str, Any] | None,
) -> tuple[ProgressToken | None, dict[str, Any]]:
    """A legacy request's progress token and its remaining ``_meta`` keys.

    Raises ``-32602`` when ``_meta`` is not an object or the token is neither a
    string nor an integer.
    """
    meta = meta_of(params)
    if meta is None:
        return None, {}
    if not isinstance(meta, dict):
        raise invalid_params("params._meta must be an object")
    try:
        token = msgspec.convert(meta, _ProgressOnly).progress_token
    except msgspec.ValidationError as exc:
        raise invalid_params(f"Invalid _meta: {exc}") from None
    return token, _custom_keys(meta)


__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "PROGRESS_TOKEN_KEY",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "Envelope",
    "Implementation",
    "LoggingLevel",
    "claims_modern",
    "meta_of",
    "parse_envelope",
    "require_supported_version",
    "split_legacy_meta",
]
