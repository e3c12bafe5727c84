"""How a page asks the server for something: the same tool call an MCP client makes.

Every page reads and writes through the tools the gateway serves (``tools/call``
with the same arguments and the same structured answer; the listings the REST
API adds, such as the browse tree, the same way), behind the same write gate
and egress judgement as ``/mcp``; no page touches the engine or holds a rule
of its own. A failed call comes back as its stable code and
message, which the page shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from gno_trio.errors import GnoError
from gno_trio.protocol.errors import ProtocolError
from gno_trio.server.tooltypes import ToolResult
from gno_trio.server.unavailable import HTTP_SWITCHES
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.toolcalls import guarded_tool_call
from gno_trio.transports.http.wire import Reply


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


def _failure(result: ToolResult) -> Outcome:
    """A failed call's code and message (its text is ``Error: CODE: message``)."""
    code = result.code or "RUNTIME"
    prefix = f"Error: {code}: "
    text = result.text
    return Outcome(code=code, message=text[len(prefix) :] if text.startswith(prefix) else text)


def _refusal(reply: Reply) -> Outcome:
    """A guard's JSON-RPC refusal (egress, policy epoch) as its code and message."""
    error = msgspec.json.decode(reply.body).get("error", {})
    data = error.get("data") or {}
    code = str(data.get("code", "EGRESS_DENIED"))
    return Outcome(code=code, message=str(error.get("message", "")))


async def run_tool(call: HttpCall, tool: str, arguments: Mapping[str, Any]) -> Outcome:
    """Call ``tool`` (or a listing the REST API serves) as ``tools/call`` over ``/mcp`` would."""
    refused = write_refusal(call, tool)
    if refused is not None:
        return refused
    try:
        answer = await guarded_tool_call(call, tool, dict(arguments))
    except ProtocolError as exc:
        return Outcome(code="INVALID_INPUT", message=exc.message)  # not served here
    except GnoError as exc:
        return Outcome(code=exc.code, message=exc.message)
    if isinstance(answer, Reply):
        return _refusal(answer)
    if answer.is_error:
        return _failure(answer)
    structured = answer.structured
    return Outcome(data=structured if structured is not None else {})


__all__ = ["Outcome", "run_tool", "served", "write_refusal", "writes_enabled"]
