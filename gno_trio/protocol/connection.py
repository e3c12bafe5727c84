"""Per-connection protocol state: which era a request is served in, and whether it may be.

Nothing here performs I/O or runs a handler. A transport hands each decoded
request to :meth:`StdioConnection.admit` (or, on HTTP, to
:class:`LegacySession`/:func:`admit_modern` with the request's headers) and gets back either an
:class:`Admission` describing how to serve it or a raised
:class:`~gno_trio.protocol.errors.ProtocolError` to answer with.

stdio policy (deterministic, and the one the official SDK follows): the first
request pins the connection's era for its whole life. ``initialize`` pins legacy
even when it carries a modern-looking ``_meta``; any other request pins modern
when it claims the 2026-07-28 envelope and legacy otherwise. Notifications never
pin. After pinning, the other era's opening is refused: ``initialize`` on a
modern connection gets ``-32022`` naming the served versions, an enveloped request
on a legacy connection gets ``-32600``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from gno_trio.protocol.envelope import (
    Envelope,
    Implementation,
    claims_modern,
    parse_envelope,
    require_supported_version,
    split_legacy_meta,
)
from gno_trio.protocol.errors import (
    INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
    invalid_params,
    method_not_found,
    unsupported_version,
)
from gno_trio.protocol.jsonrpc import ProgressToken
from gno_trio.protocol.routing import HeaderView, check_routing_headers, claimed_era
from gno_trio.protocol.versions import (
    LATEST_LEGACY_VERSION,
    MODERN_VERSIONS,
    Era,
    negotiate_legacy_version,
)

INITIALIZE: Final = "initialize"
INITIALIZED_NOTIFICATION: Final = "notifications/initialized"
PING: Final = "ping"

LEGACY_REQUEST_METHODS: Final = frozenset(
    {
        INITIALIZE,
        PING,
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
MODERN_REQUEST_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)

# Legacy requests allowed before the handshake completes.
_PRE_INITIALIZE_METHODS: Final = frozenset({INITIALIZE, PING})


class InitializeParams(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """The fields of a legacy ``initialize`` this server relies on."""

    protocolVersion: str
    capabilities: dict[str, Any]
    clientInfo: Implementation


class Admission(msgspec.Struct, frozen=True, kw_only=True):
    """How one admitted request is to be served.

    A msgspec Struct rather than a dataclass: one is built for every request,
    and a Struct is built in C (a frozen dataclass pays a Python-level
    ``object.__setattr__`` per field).
    """

    era: Era
    method: str
    protocol_version: str
    client_name: str | None = None
    client_capabilities: Mapping[str, Any] = msgspec.field(default_factory=dict)
    log_level: str | None = None
    progress_token: ProgressToken | None = None
    custom_meta: Mapping[str, Any] = msgspec.field(default_factory=dict)

    @classmethod
    def modern(cls, method: str, envelope: Envelope) -> Admission:
        """A 2026-07-28 request, described by the reserved keys its envelope carried."""
        return cls(
            era=Era.MODERN,
            method=method,
            protocol_version=envelope.protocol_version,
            client_name=envelope.client_info.name if envelope.client_info is not None else None,
            client_capabilities=envelope.client_capabilities,
            log_level=envelope.log_level,
            progress_token=envelope.progress_token,
            custom_meta=envelope.custom_meta,
        )


def admit_modern(
    method: str,
    params: Mapping[str, Any] | None,
    *,
    supported: tuple[str, ...] = MODERN_VERSIONS,
    served: frozenset[str] = MODERN_REQUEST_METHODS,
    headers: HeaderView | None = None,
) -> Admission:
    """Check one stateless 2026-07-28 request: envelope shape, then version, then method.

    Over HTTP (``headers`` given) the routing headers are held to the body
    between the shape and the version. Raises ``-32602`` (envelope),
    ``-32020`` (headers), ``-32022`` (version) or ``-32601`` (method).
    """
    envelope = parse_envelope(params)
    if headers is not None:
        check_routing_headers(headers, method, params, envelope.protocol_version)
    require_supported_version(envelope, supported)
    if method not in served:
        raise method_not_found(method)
    return Admission.modern(method, envelope)


class LegacySession:
    """One 2025-era conversation: the handshake result and what the client declared.

    Scoped to a stdio process or to one HTTP session.
    """

    def __init__(self, served: frozenset[str] = LEGACY_REQUEST_METHODS) -> None:
        self._served = served
        self.protocol_version: str | None = None
        self.client_info: Implementation | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_ready = False

    @property
    def initialized(self) -> bool:
        """Whether ``initialize`` has been accepted (other requests are served from then on)."""
        return self.protocol_version is not None

    def admit(self, method: str, params: Mapping[str, Any] | None) -> Admission:
        """Admit a legacy request, recording the handshake when it is ``initialize``.

        Unknown methods are ``-32601`` whatever the state (clients probe with them);
        served methods other than ``ping`` before ``initialize`` are ``-32602``.
        """
        if method not in self._served:
            raise method_not_found(method)
        if method == INITIALIZE:
            self._accept_initialize(params)
        elif not self.initialized and method not in _PRE_INITIALIZE_METHODS:
            raise invalid_params("Received a request before initialize; send initialize first")
        progress_token, custom_meta = split_legacy_meta(params)
        return Admission(
            era=Era.LEGACY,
            method=method,
            protocol_version=self.protocol_version or LATEST_LEGACY_VERSION,
            client_name=self.client_info.name if self.client_info is not None else None,
            client_capabilities=self.client_capabilities,
            progress_token=progress_token,
            custom_meta=custom_meta,
        )

    def on_notification(self, method: str) -> None:
        """Track ``notifications/initialized`` (other client notifications carry no state)."""
        if method == INITIALIZED_NOTIFICATION and self.initialized:
            self.client_ready = True

    def _accept_initialize(self, params: Mapping[str, Any] | None) -> None:
        try:
            request = msgspec.convert(params if params is not None else {}, InitializeParams)
        except msgspec.ValidationError as exc:
            raise invalid_params(f"Invalid initialize params: {exc}") from None
        self.protocol_version = negotiate_legacy_version(request.protocolVersion)
        self.client_info = request.clientInfo
        self.client_capabilities = request.capabilities


def _initialize_on_modern(
    params: Mapping[str, Any] | None, supported: tuple[str, ...]
) -> ProtocolError:
    requested = params.get("protocolVersion") if params is not None else None
    if isinstance(requested, str):
        return unsupported_version(requested, supported)
    return ProtocolError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version: this connection serves 2026-07-28 without a handshake",
        {"supported": list(supported)},
    )


class StdioConnection:
    """Era pinning for one stdio connection (see the module docstring for the policy)."""

    def __init__(
        self,
        *,
        supported_modern: tuple[str, ...] = MODERN_VERSIONS,
        legacy_methods: frozenset[str] = LEGACY_REQUEST_METHODS,
        modern_methods: frozenset[str] = MODERN_REQUEST_METHODS,
    ) -> None:
        self.era: Era | None = None
        self.legacy = LegacySession(legacy_methods)
        self._supported_modern = supported_modern
        self._modern_methods = modern_methods

    def admit(self, method: str, params: Mapping[str, Any] | None) -> Admission:
        """Pin the era on the first request, then admit or refuse this one."""
        if self.era is None:
            self.era = Era.LEGACY if method == INITIALIZE else claimed_era(params)
        if self.era is Era.MODERN:
            if method == INITIALIZE:
                raise _initialize_on_modern(params, self._supported_modern)
            return admit_modern(
                method, params, supported=self._supported_modern, served=self._modern_methods
            )
        if method != INITIALIZE and claims_modern(params):
            raise ProtocolError(
                INVALID_REQUEST,
                "This connection was opened with initialize (2025 era); "
                "requests carrying the 2026-07-28 _meta envelope are not accepted on it",
            )
        return self.legacy.admit(method, params)

    def on_notification(self, method: str) -> None:
        """Feed a client notification into the state (never pins the era)."""
        if self.era is Era.LEGACY:
            self.legacy.on_notification(method)
