"""JSON-RPC error codes MCP uses, and the error value every protocol check produces.

The protocol layer reports refusals as :class:`ProtocolError` values carrying the
spec's numeric code, so transports can turn them into a JSON-RPC error object
(and, on HTTP, a status) without ever parsing message text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from gno_trio.protocol.versions import Era

# JSON-RPC 2.0 codes.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
SERVER_ERROR: Final = -32000
"""The first of JSON-RPC's implementation-defined server errors."""

# MCP codes. -32002 exists only up to 2025-11-25; 2026-07-28 answers a missing
# resource with -32602 instead and reserves -32020..-32099 for spec codes.
RESOURCE_NOT_FOUND_LEGACY: Final = -32002
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

INVALID_ENVELOPE_MESSAGE: Final = "Invalid _meta envelope"


class ProtocolError(Exception):
    """A request refused at the protocol level: becomes a JSON-RPC error object.

    ``data`` is omitted from the wire when it is ``None``.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    def to_error_object(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this refusal."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"ProtocolError({self.code}, {self.message!r}, {self.data!r})"


def method_not_found(method: str) -> ProtocolError:
    """-32601 naming the method, so a client can tell which call was refused."""
    return ProtocolError(METHOD_NOT_FOUND, "Method not found", {"method": method})


def invalid_params(message: str, data: Any = None) -> ProtocolError:
    """-32602 with a message that says what was wrong with the params."""
    return ProtocolError(INVALID_PARAMS, message, data)


def invalid_envelope(detail: str) -> ProtocolError:
    """-32602 for a modern request whose ``params._meta`` envelope is missing or malformed."""
    return ProtocolError(INVALID_PARAMS, INVALID_ENVELOPE_MESSAGE, {"detail": detail})


def unsupported_version(requested: str, supported: Sequence[str]) -> ProtocolError:
    """-32022 naming what was asked for and what this server serves."""
    return ProtocolError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version: {requested}",
        {"supported": list(supported), "requested": requested},
    )


def internal_error(message: str = "Internal error") -> ProtocolError:
    """-32603: the server failed in a way the client cannot fix."""
    return ProtocolError(INTERNAL_ERROR, message)


def deadline_passed(seconds: float) -> ProtocolError:
    """-32000: a request the server stopped working on when its own deadline passed."""
    return ProtocolError(
        SERVER_ERROR,
        f"Request not answered within its {seconds:g} s deadline; the server is shutting down",
    )


def resource_not_found(uri: str, era: Era) -> ProtocolError:
    """A missing resource, in the code each era defines (legacy ``-32002``, modern ``-32602``).

    2026-07-28 forbids emitting ``-32002``; both eras name the URI in ``data.uri``.
    """
    code = RESOURCE_NOT_FOUND_LEGACY if era is Era.LEGACY else INVALID_PARAMS
    return ProtocolError(code, f"Resource not found: {uri}", {"uri": uri})
