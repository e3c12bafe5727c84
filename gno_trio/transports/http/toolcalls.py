"""One tool call from a surface other than MCP (the REST API, the pages), guards included.

The call is judged as ``tools/call`` over ``/mcp`` is: egress against the
caller's zone before it runs, and the authorization epoch again before its
answer leaves. Each surface words what comes back its own way.
"""

from __future__ import annotations

from typing import Any

from gno_trio.protocol.jsonrpc import Request
from gno_trio.server.tooltypes import ToolResult
from gno_trio.transports.http.guards import egress_guard, epoch_guard
from gno_trio.transports.http.rest_wire import request_context
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Reply


async def guarded_tool_call(
    call: HttpCall, name: str, arguments: dict[str, Any], *, from_strings: bool = False
) -> ToolResult | Reply:
    """The tool's result, or the JSON-RPC-shaped refusal of a guard.

    Raises ``ProtocolError`` for an unknown or switched-off tool and
    ``GnoError`` where the tool's own handling lets one through.
    """
    state = call.state
    app = state.app
    request = Request(id=0, method="tools/call", params={"name": name, "arguments": arguments})
    verdict = egress_guard(request, call.exchange.caller, state.policies, app.content_classes)
    if isinstance(verdict, Reply):
        return verdict
    context = request_context(call)
    try:
        result = await app.run_tool(name, arguments, context, from_strings=from_strings)
    finally:
        context.finish()
    changed = await epoch_guard(request, verdict, state.policies)
    return changed if changed is not None else result


__all__ = ["guarded_tool_call"]
