"""The REST API under ``/api/``: routing by path and method, JSON in and out.

Every answer is JSON. A refusal is ``{"error": {"code", "message"}}`` with
the status its code maps to; an unknown path is 404 and a known path asked
with another method is 405 with ``Allow``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import msgspec

from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Header, Refused, Reply

_encoder = msgspec.json.Encoder()
_NO_STORE: Final[tuple[Header, ...]] = ((b"cache-control", b"no-store"),)

Handler = Callable[[HttpCall], Awaitable[None]]


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
        headers=(*_NO_STORE, *headers),
        reason=reason if reason is not None else f"api-{code}",
    )


def json_reply(document: Mapping[str, Any], status: int = 200) -> Reply:
    """A JSON answer that no cache keeps."""
    return Reply(status=status, body=_encoder.encode(document), headers=_NO_STORE)


async def _health(call: HttpCall) -> None:
    await call.send_reply(json_reply({"ok": True}))


ROUTES: Final[dict[str, dict[str, Handler]]] = {
    "/api/health": {"GET": _health},
}


async def serve(call: HttpCall) -> None:
    """Answer one request under ``/api/``."""
    methods = ROUTES.get(call.path)
    if methods is None:
        raise Refused(api_error(404, "NOT_FOUND", f"No API route {call.path}", reason="path"))
    handler = methods.get(call.method)
    if handler is None:
        allow = ", ".join(methods).encode("ascii")
        raise Refused(
            api_error(
                405,
                "METHOD_NOT_ALLOWED",
                f"{call.path} answers {', '.join(methods)}",
                reason="method",
                headers=((b"allow", allow),),
            )
        )
    call.state.metrics.requests["api"] += 1
    await handler(call)


__all__ = ["ROUTES", "api_error", "json_reply", "serve"]
