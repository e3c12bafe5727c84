"""MCP over HTTP, sans-IO: which era a POST claims, what its routing headers must
say, and the HTTP status each JSON-RPC error rides on.

A 2026-07-28 request repeats its routing facts in headers so intermediaries
can route without reading the body; the server holds the two to agree:

* ``MCP-Protocol-Version`` equals the envelope's protocol version;
* ``Mcp-Method`` equals the method;
* for the name-bearing methods (:data:`NAME_FIELDS`), ``Mcp-Name`` equals
  ``params.name`` / ``params.uri``, after base64-sentinel decoding.

A disagreement is ``-32020`` (HeaderMismatch) with ``data.mismatch`` naming the
header and the problem (``missing``, ``repeated``, ``malformed`` or ``different
from the body``). Header names are case-insensitive and values are compared
after trimming optional whitespace; a header sent twice is a mismatch.

Nothing here reads a socket: the transport hands over its headers through
:class:`HeaderView`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final, Protocol

from gno_trio.protocol.envelope import claims_modern
from gno_trio.protocol.errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from gno_trio.protocol.names import (
    METHOD_HEADER,
    NAME_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
)
from gno_trio.protocol.versions import MODERN_VERSIONS, Era


class HeaderView(Protocol):
    """A request's headers by lower-case name, as a transport holds them."""

    def get(self, name: str) -> str | None:
        """The value of ``name``; the last one if it was sent more than once."""
        ...

    def repeated(self, name: str) -> bool:
        """Whether ``name`` was sent more than once."""
        ...


NAME_FIELDS: Final[dict[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
"""Which body field each name-bearing method mirrors into ``Mcp-Name``."""

_DISPLAY_NAMES: Final[dict[str, str]] = {
    PROTOCOL_VERSION_HEADER: "MCP-Protocol-Version",
    METHOD_HEADER: "Mcp-Method",
    NAME_HEADER: "Mcp-Name",
}
_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
_OWS: Final = " \t"

_MODERN_STATUS: Final[dict[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    INTERNAL_ERROR: 500,
}


def http_status(code: int, era: Era) -> int:
    """The HTTP status of a JSON-RPC error answering a request of ``era``.

    2026-07-28 maps protocol errors to statuses (codes not listed, such as a
    tool's own failure, ride on 200); the 2025 era answers every JSON-RPC
    error inside a 200.
    """
    if era is Era.LEGACY:
        return 200
    return _MODERN_STATUS.get(code, 200)


def claimed_era(params: Mapping[str, Any] | None, version_header: str | None = None) -> Era:
    """The era a message claims: 2026-07-28 by its version header or by its envelope.

    ``version_header`` is HTTP's ``MCP-Protocol-Version`` (stdio has none).
    Anything else is the 2025 era, which has no envelope to claim it with.
    """
    if version_header is not None and version_header.strip() in MODERN_VERSIONS:
        return Era.MODERN
    return Era.MODERN if claims_modern(params) else Era.LEGACY


def session_header_refusal(headers: HeaderView) -> ProtocolError | None:
    """A 2026-07-28 message naming a session (``Mcp-Session-Id``) is refused, ``-32600``.

    Sessions exist only in the 2025 era; the refusal comes before any lookup.
    """
    if headers.get(SESSION_HEADER) is None:
        return None
    return ProtocolError(
        INVALID_REQUEST,
        "Mcp-Session-Id is not accepted on 2026-07-28 requests; "
        "sessions exist only in the 2025 era",
    )


def is_header_text(text: str) -> bool:
    """Only characters 0x20-0x7E: what a plain (non-encoded) header value may hold."""
    return text.isascii() and text.isprintable()


def decode_header_value(raw: str) -> str | None:
    """A routing header value as the client meant it, or ``None`` when malformed.

    Surrounding spaces/tabs are trimmed. ``=?base64?...?=`` is strict base64 of
    UTF-8 (bad padding or alphabet is malformed); a value with only one of the
    two markers is taken literally. A plain value must be visible ASCII
    (inner spaces allowed).
    """
    value = raw.strip(_OWS)
    if (
        value.startswith(_SENTINEL_PREFIX)
        and value.endswith(_SENTINEL_SUFFIX)
        and len(value) >= len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
    ):
        encoded = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
        try:
            return base64.b64decode(encoded.encode("ascii"), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeError, ValueError):
            return None
    return value if is_header_text(value) else None


def _mismatch(header: str, problem: str) -> ProtocolError:
    display = _DISPLAY_NAMES[header]
    return ProtocolError(
        HEADER_MISMATCH,
        f"Header mismatch: {display} header is {problem}",
        {"mismatch": {"header": display, "problem": problem}},
    )


def _header(headers: HeaderView, name: str) -> str:
    """The decoded value of a required routing header (raises ``-32020`` otherwise)."""
    if headers.repeated(name):
        raise _mismatch(name, "repeated")
    raw = headers.get(name)
    if raw is None:
        raise _mismatch(name, "missing")
    decoded = decode_header_value(raw)
    if decoded is None:
        raise _mismatch(name, "malformed")
    return decoded


def check_routing_headers(
    headers: HeaderView, method: str, params: Mapping[str, Any] | None, body_version: str
) -> None:
    """Hold the routing headers to the body (module docstring); raises ``-32020``."""
    version = headers.get(PROTOCOL_VERSION_HEADER)
    if headers.repeated(PROTOCOL_VERSION_HEADER):
        raise _mismatch(PROTOCOL_VERSION_HEADER, "repeated")
    if version is None:
        raise _mismatch(PROTOCOL_VERSION_HEADER, "missing")
    if version.strip(_OWS) != body_version:
        raise _mismatch(PROTOCOL_VERSION_HEADER, "different from the body")
    if _header(headers, METHOD_HEADER) != method:
        raise _mismatch(METHOD_HEADER, "different from the body")
    field = NAME_FIELDS.get(method)
    if field is None or params is None:
        return
    body_value = params.get(field)
    if isinstance(body_value, str) and _header(headers, NAME_HEADER) != body_value:
        raise _mismatch(NAME_HEADER, "different from the body")


__all__ = [
    "NAME_FIELDS",
    "HeaderView",
    "check_routing_headers",
    "claimed_era",
    "decode_header_value",
    "http_status",
    "is_header_text",
    "session_header_refusal",
]
