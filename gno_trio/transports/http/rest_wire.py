"""The REST API's answers: JSON bodies, the error shape, and what a tool result becomes.

A refusal is ``{"error": {"code", "message"}}``. The status of a code is its
kind's (:data:`gno_trio.errors.CODE_KINDS`): the one code -> status table
every surface reads.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

import msgspec

from gno_trio.errors import kind_of
from gno_trio.protocol.versions import MODERN_VERSIONS, Era
from gno_trio.server.context import RequestContext
from gno_trio.server.tooltypes import ToolResult
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Header, Reply

REST_CLIENT_NAME: Final = "rest"
"""The memory ``caller`` of a REST request (MCP clients name themselves)."""

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()
NO_STORE: Final[tuple[Header, ...]] = ((b"cache-control", b"no-store"),)
_INVALID: Final = "INVALID_INPUT"


def api_error(
    status: int,
    code: str,
    message: str,
    *,
    reason: str | None = None,
    headers: tuple[Header, ...] = (),
) -> Reply:
    """A refusal as the REST API answers it: ``{"error": {"code", "message"}}``."""
    return Reply(
        status=status,
        body=_encoder.encode({"error": {"code": code, "message": message}}),
        headers=(*NO_STORE, *headers),
        reason=reason if reason is not None else f"api-{code}",
    )


def error_for_code(code: str, message: str) -> Reply:
    """A refusal whose status is its code's kind's (the one code -> status table)."""
    return api_error(kind_of(code).http_status, code, message)


def json_reply(document: Any, status: int = 200) -> Reply:
    """A JSON answer that no cache keeps."""
    return Reply(status=status, body=_encoder.encode(document), headers=NO_STORE)


def translated(reply: Reply) -> Reply:
    """A guard's JSON-RPC refusal in the REST shape: its ``data.code`` (or status) and message."""
    try:
        error = _decoder.decode(reply.body)["error"]
        data = error.get("data") or {}
        code = str(data.get("code") or kind_code(reply.status))
        message = str(error.get("message", ""))
    except (msgspec.DecodeError, KeyError, TypeError, AttributeError):
        code, message = kind_code(reply.status), "Refused"
    shaped = api_error(reply.status, code, message, reason=reply.reason, headers=reply.headers)
    return replace(shaped, close=reply.close)


_STATUS_CODES: Final[dict[int, str]] = {
    400: "INVALID_INPUT",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    408: "REQUEST_TIMEOUT",
    409: "CONFLICT",
    413: "BODY_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
    503: "UNAVAILABLE",
}
"""The code of a transport refusal (boundary, admission) that names none of its own."""


def kind_code(status: int) -> str:
    """A code for a refusal that carried none."""
    return _STATUS_CODES.get(status, "RUNTIME")


def api_shaped(reply: Reply) -> Reply:
    """``reply`` in the REST error shape (a JSON-RPC refusal translated; others as they are)."""
    if reply.status < 400 or not reply.body.startswith(b'{"jsonrpc"'):
        return reply
    return translated(reply)


def request_context(call: HttpCall) -> RequestContext:
    """What the tool sees of a REST caller: the modern era, its memory session label."""
    return RequestContext(
        era=Era.MODERN,
        protocol_version=MODERN_VERSIONS[0],
        session_id=call.state.labels.label(call.exchange.caller.identity),
        client_name=REST_CLIENT_NAME,
    )


def result_reply(result: ToolResult) -> Reply:
    """A tool result as the REST API answers it: the structured content, or the error."""
    if result.is_error:
        code = result.code or "RUNTIME"
        prefix = f"Error: {code}: "
        text = result.text[len(prefix) :] if result.text.startswith(prefix) else result.text
        return error_for_code(code, text)
    return json_reply(result.structured if result.structured is not None else {})


__all__ = [
    "NO_STORE",
    "REST_CLIENT_NAME",
    "api_error",
    "error_for_code",
    "json_reply",
    "kind_code",
    "request_context",
    "result_reply",
    "translated",
]
