"""The sessionless 2026-07-28 leg: strict validation, then one dispatch per request.

Nothing here touches the session store. A request is validated in this order
(each failure is a JSON-RPC error echoing the request id):

1. no ``Mcp-Session-Id`` (``-32600``, 400): sessions are 2025-era only;
2. the ``params._meta`` envelope is present and well formed (``-32602``, 400);
3. routing headers agree with the body (``-32020`` HeaderMismatch, 400, with
   ``data.mismatch`` naming the header and the problem): ``MCP-Protocol-Version``
   equals the envelope version, ``Mcp-Method`` equals the method, and for
   ``tools/call`` / ``prompts/get`` / ``resources/read`` ``Mcp-Name`` equals
   ``params.name`` / ``params.uri`` (after base64-sentinel decoding);
4. the revision is served (``-32022``, 400, ``data.supported``/``data.requested``);
5. the method is served (``-32601``, 404); ``subscriptions/listen`` is served
   only with subscriptions switched on, as a stream (:mod:`.listen`).

Header names are case-insensitive and values are compared after trimming
optional whitespace; a header sent twice is a mismatch.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from gno_trio.protocol.connection import MODERN_REQUEST_METHODS, Admission
from gno_trio.protocol.envelope import Envelope, parse_envelope, require_supported_version
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
    method_not_found,
)
from gno_trio.protocol.jsonrpc import Incoming, Notification, Request
from gno_trio.protocol.names import (
    METHOD_HEADER,
    NAME_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
)
from gno_trio.protocol.versions import MODERN_VERSIONS
from gno_trio.server.context import RequestContext
from gno_trio.transports.http.guards import EgressTicket, epoch_guard
from gno_trio.transports.http.responder import Responder, dispatch
from gno_trio.transports.http.state import Exchange, GatewayState
from gno_trio.transports.http.wire import (
    Refused,
    Reply,
    RequestHeaders,
    empty_reply,
    invalid_request_reply,
    is_header_text,
    jsonrpc_reply,
    send_reply,
)

# Which body field each name-bearing method mirrors into ``Mcp-Name``.
NAME_FIELDS: Final[dict[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
_DISPLAY_NAMES: Final[dict[str, str]] = {
    PROTOCOL_VERSION_HEADER: "MCP-Protocol-Version",
    METHOD_HEADER: "Mcp-Method",
    NAME_HEADER: "Mcp-Name",
}
_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
_OWS: Final = " \t"

_STATUS_BY_CODE: Final[dict[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    INTERNAL_ERROR: 500,
}


def status_for(code: int) -> int:
    """HTTP status of a modern JSON-RPC error (unlisted codes ride on 200)."""
    return _STATUS_BY_CODE.get(code, 200)


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


def _header(headers: RequestHeaders, name: str) -> str:
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
    headers: RequestHeaders, method: str, params: Mapping[str, Any] | None, body_version: str
) -> None:
    """Step 3 of the module docstring; raises ``ProtocolError(-32020)``."""
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


def admit(
    request: Request, headers: RequestHeaders, served: frozenset[str] = MODERN_REQUEST_METHODS
) -> Admission:
    """Steps 2-5 for one request; raises the ``ProtocolError`` to answer with."""
    envelope: Envelope = parse_envelope(request.params)
    check_routing_headers(headers, request.method, request.params, envelope.protocol_version)
    require_supported_version(envelope, MODERN_VERSIONS)
    if request.method not in served:
        raise method_not_found(request.method)
    return Admission.modern(request.method, envelope)


def session_header_refusal(headers: RequestHeaders, request_id: Any) -> Reply | None:
    """Step 1: a modern message naming a session is refused before any lookup."""
    if SESSION_HEADER not in headers:
        return None
    return jsonrpc_reply(
        400,
        request_id,
        {
            "code": INVALID_REQUEST,
            "message": "Mcp-Session-Id is not accepted on 2026-07-28 requests; "
            "sessions exist only in the 2025 era",
        },
        reason="modern-session-id",
    )


def error_reply(request: Request, exc: ProtocolError) -> Reply:
    """The JSON-RPC error reply for a refused modern request, at the status its code maps to."""
    return jsonrpc_reply(
        status_for(exc.code), request.id, exc.to_error_object(), reason=f"modern-{exc.code}"
    )


async def post(
    state: GatewayState, exchange: Exchange, message: Incoming, ticket: EgressTicket | None
) -> None:
    """Serve one modern POST body: validate, dispatch once, answer."""
    request_id = message.id if isinstance(message, Request) else None
    refusal = session_header_refusal(exchange.headers, request_id)
    if refusal is not None:
        raise Refused(refusal)
    if isinstance(message, Notification):
        state.app.handle_notification(message.method, message.params)
        await send_reply(exchange.send, empty_reply(202, reason="accepted"))
        return
    if not isinstance(message, Request):
        raise Refused(
            invalid_request_reply(
                400, "A 2026-07-28 client sends requests and notifications only", reason="response"
            )
        )
    try:
        # subscriptions/listen never comes here (it is a stream: see .listen).
        admission = admit(message, exchange.headers)
    except ProtocolError as exc:
        raise Refused(error_reply(message, exc)) from None
    responder = Responder(exchange.send)
    context = RequestContext.from_admission(
        admission,
        session_id=state.labels.label(exchange.caller.identity),
        request_id=message.id,
        send_notification=responder.notify,
    )
    await dispatch(
        state.app,
        message,
        context,
        responder,
        status_for=status_for,
        final_check=lambda: epoch_guard(message, ticket, state.policies),
        deadlines=state.deadlines,
    )


__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_HEADER",
    "admit",
    "check_routing_headers",
    "decode_header_value",
    "error_reply",
    "post",
    "session_header_refusal",
    "status_for",
]
