"""How a page asks the server for something: the same tool call an MCP client makes.

Every page reads and writes through the tools the gateway serves (``tools/call``
with the same arguments and the same structured answer), behind the same
write gate and egress judgement as ``/mcp``; no page touches the engine or
holds a rule of its own. A failed call comes back as its stable code and
message, which the page shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.engine import EGRESS_DENIED_CODE, EGRESS_DENIED_MESSAGE
from gno_trio.protocol.errors import ProtocolError
from gno_trio.protocol.jsonrpc import Request
from gno_trio.protocol.versions import MODERN_VERSIONS, Era
from gno_trio.server.context import RequestContext
from gno_trio.server.unavailable import HTTP_SWITCHES
from gno_trio.transports.http.guards import (
    POLICY_CHANGED_CODE,
    POLICY_CHANGED_MESSAGE,
    egress_guard,
    epoch_guard,
)
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Reply

WEB_CLIENT_NAME: Final = "gno-web"
"""The client name tools see for the workspace (memory facts record it as the caller)."""
_ERROR_PREFIX: Final = "Error: "


@dataclass(frozen=True, slots=True)
class Outcome:
    """One tool call's answer: its structured content, or the code and message of its failure."""

    data: Mapping[str, Any] = field(default_factory=dict)
    code: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.code is None


def served(call: HttpCall, tool: str) -> bool:
    """Whether the gateway serves ``tool`` (its profile may leave it out)."""
    return tool in call.state.app.tools


def writes_enabled(call: HttpCall) -> bool:
    """Whether this gateway accepts write tools (``--mcp-enable-write``)."""
    return call.state.settings.enable_write


def write_refusal(call: HttpCall, tool: str) -> Outcome | None:
    """The write gate, as a page shows it: a write tool while writes are off."""
    if writes_enabled(call) or tool not in call.state.app.write_tools:
        return None
    return Outcome(
        code="WRITE_DISABLED",
        message=f"Writes are disabled on this server; start it with {HTTP_SWITCHES.enable_write}",
    )


def _context(call: HttpCall) -> RequestContext:
    return RequestContext(
        era=Era.MODERN,
        protocol_version=MODERN_VERSIONS[0],
        session_id=call.state.labels.label(call.exchange.caller.identity),
        client_name=WEB_CLIENT_NAME,
    )


def _failure(text: str) -> Outcome:
    """``Error: CODE: message`` (the one form every failed tool call takes) split in two."""
    body = text[len(_ERROR_PREFIX) :] if text.startswith(_ERROR_PREFIX) else text
    code, sep, message = body.partition(": ")
    if not sep or not code.replace("_", "").isalnum():
        return Outcome(code="RUNTIME", message=text)
    return Outcome(code=code, message=message)


async def run_tool(call: HttpCall, tool: str, arguments: Mapping[str, Any]) -> Outcome:
    """Call ``tool`` with ``arguments`` exactly as ``tools/call`` over ``/mcp`` would."""
    refused = write_refusal(call, tool)
    if refused is not None:
        return refused
    state = call.state
    app = state.app
    params = {"name": tool, "arguments": dict(arguments)}
    request = Request(id=0, method="tools/call", params=params)
    verdict = egress_guard(request, call.exchange.caller, state.policies, app.content_classes)
    if isinstance(verdict, Reply):
        return Outcome(code=EGRESS_DENIED_CODE, message=EGRESS_DENIED_MESSAGE)
    context = _context(call)
    try:
        result = await app.handle_request("tools/call", params, context)
    except ProtocolError as exc:
        return Outcome(code="UNAVAILABLE", message=exc.message)
    finally:
        context.finish()
    if epoch_guard(request, verdict, state.policies) is not None:
        return Outcome(code=POLICY_CHANGED_CODE, message=POLICY_CHANGED_MESSAGE)
    if result.get("isError"):
        blocks = result.get("content") or [{}]
        return _failure(str(blocks[0].get("text", "")))
    structured = result.get("structuredContent")
    return Outcome(data=structured if isinstance(structured, Mapping) else {})


__all__ = ["WEB_CLIENT_NAME", "Outcome", "run_tool", "served", "write_refusal", "writes_enabled"]
