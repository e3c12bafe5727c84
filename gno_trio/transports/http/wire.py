"""HTTP plumbing shared by the gateway modules: ASGI types, headers, replies, SSE frames.

A refusal anywhere in the pipeline is a :class:`Reply` value (status, body,
headers); code deep in a leg raises :class:`Refused` to hand one back to the
ASGI app, which is the only place that talks to the ASGI ``send`` callable
for plain replies.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.protocol.errors import INVALID_REQUEST
from gno_trio.protocol.jsonrpc import RequestId, encode_error

Scope = MutableMapping[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Header = tuple[bytes, bytes]

JSON: Final = b"application/json"
EVENT_STREAM: Final = b"text/event-stream"
BOUNDARY_ERROR_CODE: Final = -32000

# The closed ``mcp-http-error@1.0`` messages, one per boundary status.
BOUNDARY_MESSAGES: Final[dict[int, str]] = {
    401: "Unauthorized",
    403: "Forbidden",
    413: "Request body too large",
    429: "Too many requests",
    503: "Resident runtime unavailable",
}

SSE_HEADERS: Final[tuple[Header, ...]] = (
    (b"content-type", EVENT_STREAM),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
)
ALLOW_HEADER: Final[Header] = (b"allow", b"GET, POST, DELETE")


class RequestHeaders:
    """Request headers by lower-cased name, remembering names that were sent twice.

    Values are decoded lazily, as Latin-1 (the HTTP default) so no byte is lost;
    callers that need ASCII check for it themselves. Most requests carry each
    name once, so the repeated-name scan only runs when the counts disagree.
    """

    __slots__ = ("_repeated", "_values")

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        values = {name.lower(): value for name, value in raw}
        self._values = values
        self._repeated: frozenset[bytes] = (
            _repeated_names(raw) if len(values) != len(raw) else frozenset()
        )

    def get(self, name: str) -> str | None:
        """The value of ``name`` (lower-case); the last one if it was repeated."""
        value = self._values.get(name.encode("latin-1"))
        return value.decode("latin-1") if value is not None else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.encode("latin-1") in self._values

    def repeated(self, name: str) -> bool:
        """Whether ``name`` was sent more than once (routing and auth headers must not be)."""
        return name.encode("latin-1") in self._repeated


def _repeated_names(raw: Sequence[tuple[bytes, bytes]]) -> frozenset[bytes]:
    seen: set[bytes] = set()
    repeated: set[bytes] = set()
    for name, _ in raw:
        lowered = name.lower()
        (repeated if lowered in seen else seen).add(lowered)
    return frozenset(repeated)


def is_visible_ascii(text: str) -> bool:
    """Only characters 0x21-0x7E (no space, no control, nothing beyond ASCII)."""
    return text.isascii() and text.isprintable() and " " not in text


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete, non-streaming HTTP answer."""

    status: int
    body: bytes = b""
    headers: tuple[Header, ...] = ()
    content_type: bytes | None = JSON
    close: bool = False
    reason: str = ""
    """A short label for transport metrics (never sent to the client)."""


class Refused(Exception):
    """Carries a :class:`Reply` out of a leg to the ASGI app."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(f"{reply.status} {reply.reason}")
        self.reply = reply


def _boundary_body(status: int) -> bytes:
    return encode_error(None, {"code": BOUNDARY_ERROR_CODE, "message": BOUNDARY_MESSAGES[status]})


_BOUNDARY_BODIES: Final[dict[int, bytes]] = {
    status: _boundary_body(status) for status in BOUNDARY_MESSAGES
}


def boundary_reply(
    status: int, reason: str, *, headers: tuple[Header, ...] = (), close: bool = False
) -> Reply:
    """A refusal with the closed ``mcp-http-error`` body for ``status``."""
    return Reply(
        status=status, body=_BOUNDARY_BODIES[status], headers=headers, close=close, reason=reason
    )


def jsonrpc_reply(
    status: int,
    request_id: RequestId | None,
    error: dict[str, Any],
    *,
    reason: str,
    headers: tuple[Header, ...] = (),
    close: bool = False,
) -> Reply:
    """A JSON-RPC error object as the whole body."""
    return Reply(
        status=status,
        body=encode_error(request_id, error),
        headers=headers,
        close=close,
        reason=reason,
    )


def invalid_request_reply(
    status: int, message: str, *, reason: str, headers: tuple[Header, ...] = ()
) -> Reply:
    """A transport-level refusal (400/405/406/409/415 ...): ``-32600`` body, ``id: null``."""
    return jsonrpc_reply(
        status, None, {"code": INVALID_REQUEST, "message": message}, reason=reason, headers=headers
    )


def empty_reply(status: int, *, reason: str, headers: tuple[Header, ...] = ()) -> Reply:
    """A reply without a body (202 for notifications, 204 for DELETE)."""
    return Reply(status=status, headers=headers, content_type=None, reason=reason)


async def send_reply(send: Send, reply: Reply) -> None:
    """Write ``reply`` in one ``http.response.start`` + one body message."""
    headers: list[Header] = []
    if reply.content_type is not None:
        headers.append((b"content-type", reply.content_type))
    headers.append((b"content-length", str(len(reply.body)).encode("ascii")))
    headers.extend(reply.headers)
    if reply.close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body, "more_body": False})


def sse_event(line: bytes) -> bytes:
    """One SSE ``message`` event carrying one encoded JSON-RPC message."""
    return b"event: message\ndata: " + line.rstrip(b"\n") + b"\n\n"


SSE_KEEPALIVE: Final = b": keep-alive\n\n"


_COMMON_ACCEPT: Final = "application/json, text/event-stream"


def accepts(header: str | None, *types: str) -> bool:
    """Whether an ``Accept`` header lists every media type in ``types`` (``*/*`` lists all)."""
    if header is None:
        return False
    if header == _COMMON_ACCEPT:
        return all(t in ("application/json", "text/event-stream") for t in types)
    listed = set()
    for part in header.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media:
            listed.add(media)
    if "*/*" in listed:
        return True
    return all(t in listed or f"{t.split('/', 1)[0]}/*" in listed for t in types)


def is_json_content_type(header: str | None) -> bool:
    """Whether ``Content-Type`` names ``application/json`` (parameters such as charset allowed)."""
    if header is None:
        return False
    return header.split(";", 1)[0].strip().lower() == "application/json"


__all__ = [
    "ALLOW_HEADER",
    "BOUNDARY_MESSAGES",
    "EVENT_STREAM",
    "JSON",
    "SSE_HEADERS",
    "SSE_KEEPALIVE",
    "Header",
    "Message",
    "Receive",
    "Refused",
    "Reply",
    "RequestHeaders",
    "Scope",
    "Send",
    "accepts",
    "boundary_reply",
    "empty_reply",
    "invalid_request_reply",
    "is_json_content_type",
    "is_visible_ascii",
    "jsonrpc_reply",
    "send_reply",
    "sse_event",
]
