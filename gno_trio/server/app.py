"""Assembling the MCP surface a process serves from the registry and the runtime.

The registry decides which tools a profile and the write gate expose; this
module pairs each exposed tool with its handler. A tool outside the active
set is absent, so calling it answers -32602 like an unknown tool, with a
message saying which switch would enable it.
"""

from __future__ import annotations

from gno_trio import SERVER_NAME, __version__
from gno_trio.runtime import Runtime
from gno_trio.server.dispatch import McpApp
from gno_trio.server.registry import definitions, select_tool_names
from gno_trio.server.tooltypes import BoundTool
from gno_trio.server.unavailable import Switches, inactive_tools
from gno_trio.tools import HANDLERS
from gno_trio.tools.resources import DocumentResources


def bound_tools(runtime: Runtime) -> list[BoundTool]:
    defs = definitions()
    names = select_tool_names(runtime.tool_profile, runtime.write_enabled, HANDLERS.keys())
    return [
        BoundTool(spec=defs[name].spec(runtime.tool_profile), handler=HANDLERS[name](runtime))
        for name in names
    ]


def build_app(runtime: Runtime, switches: Switches | None = None) -> McpApp:
    """The MCP surface of ``runtime``; ``switches`` names the serving command's flags in hints."""
    return McpApp(
        name=SERVER_NAME,
        version=__version__,
        tools=bound_tools(runtime),
        resources=DocumentResources(runtime),
        instance_id=runtime.instance_id,
        inactive=inactive_tools(
            runtime.tool_profile, runtime.write_enabled, HANDLERS.keys(), switches
        ),
    )
