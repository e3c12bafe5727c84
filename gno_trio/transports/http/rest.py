"""The REST API under ``/api/``: each route is one call of the tool MCP's ``tools/call`` runs.

Per request, after the gateway's boundary (peer, Host/Origin, bearer, rate,
declared length):

1. routing (:mod:`.rest_routes`): an unknown path is 404, a known path asked
   with another method is 405 with ``Allow``;
2. the write gate: a write tool's route is 403 ``WRITE_DISABLED`` unless the
   gateway allows writes, before any body byte is read;
3. the arguments: the query string (GET, DELETE; a name given twice is a
   list for an array argument and 400 otherwise) or a JSON object body
   (POST: ``Content-Type: application/json``, else 415), plus the path's
   ``{name}`` segments;
4. egress, judged exactly as for the same ``tools/call`` over MCP;
5. the call itself, holding a capacity and a runtime slot, through
   :meth:`McpApp.run_tool`: the answer is the tool's ``structuredContent``.

Every refusal is ``{"error": {"code", "message"}}``; a tool error's status
comes from its code's kind (:data:`gno_trio.errors.CODE_KINDS`), the one
table every surface reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from gno_trio.errors import GnoError
from gno_trio.protocol.errors import ProtocolError
from gno_trio.server.tooltypes import BoundTool
from gno_trio.transports.http import rest_events, rest_openapi
from gno_trio.transports.http.rest_routes import EVENTS, HEALTH, OPENAPI, Route, match
from gno_trio.transports.http.rest_wire import (
    NO_STORE,
    api_error,
    error_for_code,
    json_reply,
    result_reply,
    translated,
)
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.toolcalls import guarded_tool_call
from gno_trio.transports.http.wire import Refused, Reply, is_json_content_type

_decoder = msgspec.json.Decoder()
_INVALID: Final = "INVALID_INPUT"


def _refuse_method(call: HttpCall, routes: list[Route]) -> Reply:
    allowed = ", ".join(dict.fromkeys(route.method for route in routes))
    return api_error(
        405,
        "METHOD_NOT_ALLOWED",
        f"{call.path} answers {allowed}",
        reason="method",
        headers=((b"allow", allowed.encode("ascii")),),
    )


def _array_arguments(bound: BoundTool) -> frozenset[str]:
    properties: Mapping[str, Any] = bound.spec.input_schema.get("properties", {})
    return frozenset(
        name
        for name, schema in properties.items()
        if schema.get("type") == "array"
        or any(option.get("type") == "array" for option in schema.get("anyOf", ()))
    )


def query_arguments(call: HttpCall, route: Route, bound: BoundTool) -> dict[str, Any]:
    """The tool arguments a query string names (raises :class:`Refused` on a repeated scalar)."""
    arrays = _array_arguments(bound)
    arguments: dict[str, Any] = {}
    for raw_name, value in call.query():
        name = route.aliases.get(raw_name, raw_name)
        if name in arrays:
            arguments.setdefault(name, []).append(value)
        elif name in arguments:
            raise Refused(api_error(400, _INVALID, f"Query parameter {raw_name} given twice"))
        else:
            arguments[name] = value
    return arguments


async def body_arguments(call: HttpCall) -> dict[str, Any] | None:
    """The JSON object body (``None``: the client hung up); 415 or 400 when it is not one."""
    if not is_json_content_type(call.exchange.headers.get("content-type")):
        raise Refused(
            api_error(415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json")
        )
    body = await call.read_body()
    if body is None:
        return None
    try:
        document = _decoder.decode(body) if body.strip() else {}
    except msgspec.DecodeError as exc:
        raise Refused(api_error(400, _INVALID, f"Body is not JSON: {exc}")) from None
    if not isinstance(document, dict):
        raise Refused(api_error(400, _INVALID, "Body must be a JSON object"))
    return document


async def call_operation(
    call: HttpCall, operation: str, arguments: dict[str, Any], *, from_strings: bool
) -> Reply:
    """Run ``operation`` as ``tools/call`` would, guards included; the reply to send."""
    try:
        answer = await guarded_tool_call(call, operation, arguments, from_strings=from_strings)
    except ProtocolError as exc:
        return api_error(400, _INVALID, exc.message)
    except GnoError as exc:
        return error_for_code(exc.code, exc.message)
    return translated(answer) if isinstance(answer, Reply) else result_reply(answer)


def _operation(call: HttpCall, name: str) -> BoundTool:
    app = call.state.app
    bound = app.tools.get(name) or app.operations.get(name)
    if bound is None:
        inactive = f"{name} is not served by this gateway (its tool profile leaves it out)"
        raise Refused(api_error(404, "NOT_FOUND", inactive))
    return bound


def _write_refusal(call: HttpCall, operation: str) -> Reply | None:
    if call.state.settings.enable_write or operation not in call.state.app.write_tools:
        return None
    return api_error(
        403,
        "WRITE_DISABLED",
        f"{operation} writes, and writes are disabled on this gateway; start it with "
        "--enable-write to allow it",
        reason="write-disabled",
    )


async def _serve_tool(call: HttpCall, route: Route, path_arguments: dict[str, str]) -> None:
    assert route.operation is not None
    refusal = _write_refusal(call, route.operation)
    if refusal is not None:
        raise Refused(refusal)
    bound = _operation(call, route.operation)
    if route.from_body:
        arguments = await body_arguments(call)
        if arguments is None:
            return
    else:
        arguments = query_arguments(call, route, bound)
    arguments.update(path_arguments)

    async def work() -> None:
        answer = await call_operation(
            call, bound.spec.name, arguments, from_strings=not route.from_body
        )
        await call.send_reply(answer)

    await call.admitted(work)


async def serve(call: HttpCall) -> None:
    """Answer one request under ``/api/``."""
    routes, path_arguments = match(call.raw_path)
    if not routes:
        raise Refused(api_error(404, "NOT_FOUND", f"No API route {call.path}", reason="path"))
    route = next((r for r in routes if r.method == call.method), None)
    if route is None:
        raise Refused(_refuse_method(call, routes))
    call.state.metrics.requests["api"] += 1
    if route.local == HEALTH:
        await call.send_reply(json_reply({"ok": True}))
    elif route.local == OPENAPI:
        document = rest_openapi.encoded(call.state.app)
        await call.send_reply(Reply(status=200, body=document, headers=NO_STORE))
    elif route.local == EVENTS:
        await rest_events.serve(call)
    else:
        await _serve_tool(call, route, path_arguments)


__all__ = ["body_arguments", "call_operation", "query_arguments", "serve"]
