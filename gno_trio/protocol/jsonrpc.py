"""JSON-RPC 2.0 messages for MCP: decoding one untrusted line, encoding replies.

Decoding never raises: every input yields either a message or a
:class:`DecodeFailure` that already carries the JSON-RPC error code to answer with
(and the request id when it could be read), so a transport can reply and keep
serving whatever arrives.

Encoded messages end with ``\\n`` and contain no other newline (JSON escapes
newlines inside strings), which is exactly the stdio framing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from itertools import accumulate
from typing import Any, Final

import msgspec

from gno_trio.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ProtocolError,
    internal_error,
)

logger = logging.getLogger("gno_trio.protocol")

RequestId = int | str
ProgressToken = int | str

JSONRPC_VERSION: Final = "2.0"

MAX_RESPONSE_BYTES: Final = 16 * 1024 * 1024
"""The largest answer line any transport sends (larger results become ``-32603``)."""

MAX_NESTING_DEPTH: Final = 64
"""Arrays and objects nested deeper than this are refused before msgspec sees them.

No MCP message needs more than a handful of levels; msgspec itself would
recurse once per level and give up only at Python's recursion limit.
"""


class Request(msgspec.Struct, frozen=True, gc=False):
    """A call that expects exactly one response carrying the same ``id``."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None


class Notification(msgspec.Struct, frozen=True, gc=False):
    """A one-way message; it never gets a reply."""

    method: str
    params: dict[str, Any] | None = None


class Response(msgspec.Struct, frozen=True, gc=False):
    """A client's reply to a server request (this server sends none, so these are dropped)."""

    id: RequestId | None
    result: Any = None
    error: Any = None


class DecodeFailure(msgspec.Struct, frozen=True, gc=False):
    """A line that is not a usable message, with the error reply it deserves."""

    code: int
    message: str
    id: RequestId | None = None


Incoming = Request | Notification | Response


def _readable_id(value: object) -> RequestId | None:
    """The id to echo in an error reply: only a string or a (non-boolean) integer qualifies."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _params_or_failure(
    raw: dict[str, Any], echo_id: RequestId | None
) -> dict[str, Any] | DecodeFailure | None:
    params = raw.get("params")
    if params is None or isinstance(params, dict):
        return params
    if isinstance(params, list):
        # Positional params are valid JSON-RPC, but every MCP method takes named ones.
        return DecodeFailure(INVALID_PARAMS, "params must be an object", echo_id)
    return DecodeFailure(INVALID_REQUEST, "params must be an object", echo_id)


def _classify_object(raw: dict[str, Any]) -> Incoming | DecodeFailure:
    has_id = "id" in raw
    raw_id = raw.get("id")
    echo_id = _readable_id(raw_id)
    if raw.get("jsonrpc") != JSONRPC_VERSION:
        return DecodeFailure(INVALID_REQUEST, 'jsonrpc must be "2.0"', echo_id)

    method = raw.get("method")
    if method is None:
        if "result" in raw or "error" in raw:
            if "result" in raw and "error" in raw:
                return DecodeFailure(
                    INVALID_REQUEST, "a response has result or error, not both", echo_id
                )
            if echo_id is None and raw_id is not None:
                return DecodeFailure(INVALID_REQUEST, "id must be a string or an integer")
            return Response(id=echo_id, result=raw.get("result"), error=raw.get("error"))
        return DecodeFailure(INVALID_REQUEST, "missing method", echo_id)
    if not isinstance(method, str):
        return DecodeFailure(INVALID_REQUEST, "method must be a string", echo_id)
    if "result" in raw or "error" in raw:
        return DecodeFailure(INVALID_REQUEST, "a request carries no result or error", echo_id)

    params = _params_or_failure(raw, echo_id)
    if isinstance(params, DecodeFailure):
        return params
    if not has_id:
        return Notification(method=method, params=params)
    if echo_id is None:
        return DecodeFailure(INVALID_REQUEST, "id must be a string or an integer")
    return Request(id=echo_id, method=method, params=params)


_BRACKETS: Final = b"[]{}"
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in _BRACKETS)
_DEPTH_STEP: Final = tuple(1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256))


def _openers(data: bytes) -> int:
    return data.count(b"[") + data.count(b"{")


def nesting_exceeds(data: bytes, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether JSON text nests arrays/objects deeper than ``limit`` (string contents ignored).

    Every step is a C-level pass over the bytes, so a megabyte costs
    milliseconds: escaped backslashes and quotes are dropped (JSON escapes
    come in pairs, read left to right), the text inside quotes is dropped,
    and only the brackets that remain are counted. For text that is not JSON
    the answer is exact up to the first invalid byte, which is as far as any
    parser would recurse.
    """
    if _openers(data) <= limit:
        return False
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(unescaped.split(b'"')[::2]).translate(None, _NOT_BRACKETS)
    if _openers(brackets) <= limit:
        return False
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) > limit


def decode_line(line: bytes) -> Incoming | DecodeFailure:
    """Decode one newline-delimited message (surrounding whitespace is ignored).

    Malformed JSON (including invalid UTF-8, and nesting deeper than
    :data:`MAX_NESTING_DEPTH`) is ``-32700``; JSON that is not a single
    JSON-RPC object is ``-32600``, with the request id echoed when it is
    readable; a top-level array is refused because batches left MCP in 2025-06-18.
    """
    if nesting_exceeds(line):
        return DecodeFailure(
            PARSE_ERROR, f"Parse error: nesting deeper than {MAX_NESTING_DEPTH} levels"
        )
    try:
        raw = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError, ValueError) as exc:
        # DecodeError also covers out-of-range numbers; the others are a safety
        # net: no input may escape as an exception.
        return DecodeFailure(PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(raw, dict):
        return _classify_object(raw)
    if isinstance(raw, list):
        return DecodeFailure(INVALID_REQUEST, "batches are not supported")
    return DecodeFailure(INVALID_REQUEST, "a message must be a JSON object")


# -- encoding ---------------------------------------------------------------------------


class _ResultMessage(msgspec.Struct, kw_only=True, gc=False):
    jsonrpc: str = JSONRPC_VERSION
    id: RequestId
    result: Any


class _ErrorMessage(msgspec.Struct, kw_only=True, gc=False):
    jsonrpc: str = JSONRPC_VERSION
    id: RequestId | None
    error: dict[str, Any]


class _NotificationMessage(msgspec.Struct, kw_only=True, gc=False):
    jsonrpc: str = JSONRPC_VERSION
    method: str
    params: Any = msgspec.UNSET  # UNSET fields are left out of the JSON


def _encode_other(value: Any) -> Any:
    # Read-only mappings (e.g. MappingProxyType schemas) are JSON objects too.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


_encoder = msgspec.json.Encoder(enc_hook=_encode_other)
_NEWLINE: Final = b"\n"


def _framed(message: msgspec.Struct) -> bytes:
    buffer = bytearray()
    _encoder.encode_into(message, buffer)
    buffer += _NEWLINE
    return bytes(buffer)


def encode_result(request_id: RequestId, result: Any) -> bytes:
    """A success response line.

    Raises ``TypeError``/``UnicodeEncodeError`` when ``result`` is not JSON
    (e.g. a string holding a lone surrogate); callers answer ``-32603`` instead.
    """
    return _framed(_ResultMessage(id=request_id, result=result))


def encode_answer(
    request_id: RequestId, result: Any, *, max_bytes: int = MAX_RESPONSE_BYTES
) -> bytes:
    """A success response line, or ``ProtocolError(-32603)`` raised in its place.

    Refused when ``result`` is not JSON (see :func:`encode_result`) or when the
    line would exceed ``max_bytes``: no single answer may make a transport
    buffer without bound.
    """
    try:
        line = encode_result(request_id, result)
    except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        logger.error("a result is not encodable as JSON: %s", exc)
        raise internal_error("Result could not be encoded") from None
    if len(line) > max_bytes:
        logger.warning("refused a %d-byte answer (limit %d)", len(line), max_bytes)
        raise ProtocolError(
            INTERNAL_ERROR,
            f"The answer would be {len(line)} bytes, over the {max_bytes}-byte limit; "
            "ask for less (a line range, a lower maxBytes, fewer refs)",
            {"limitBytes": max_bytes, "answerBytes": len(line)},
        )
    return line


def encode_error(request_id: RequestId | None, error: dict[str, Any]) -> bytes:
    """An error response line; ``request_id`` is ``None`` (JSON ``null``) when unknown."""
    return _framed(_ErrorMessage(id=request_id, error=error))


def encode_notification(method: str, params: Any = msgspec.UNSET) -> bytes:
    """A notification line (no id, never answered); ``params`` is left out when not given."""
    return _framed(_NotificationMessage(method=method, params=params))
