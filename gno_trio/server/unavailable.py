"""Why a known tool is not callable here, and which start-up switch would make it so.

A tool outside the active set (a write tool while writes are off, a ``full``
tool under the ``core`` profile) is not listed and cannot be called; calling
it still answers ``-32602`` like an unknown tool, but the message and
``data`` name what is missing, in the words of the transport that refused it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from gno_trio.server.registry import WRITE_TOOL_NAMES, select_tool_names


@dataclass(frozen=True, slots=True)
class Switches:
    """The command-line switches that widen the active tool set, as one command spells them."""

    enable_write: str
    full_profile: str


STDIO_SWITCHES: Final = Switches(enable_write="--enable-write", full_profile="--tool-profile full")
HTTP_SWITCHES: Final = Switches(
    enable_write="--mcp-enable-write", full_profile="--mcp-tool-profile full"
)


@dataclass(frozen=True, slots=True)
class Unavailable:
    """One inactive tool: the refusal message and its ``data``."""

    message: str
    data: Mapping[str, Any]


def inactive_tools(
    profile: str, write_enabled: bool, implemented: Collection[str], switches: Switches | None
) -> Mapping[str, Unavailable]:
    """Every implemented tool the active set leaves out, with what would let it in.

    ``switches`` names the flags of the serving command; without it the
    refusal says what is off but names no flag.
    """
    active = set(select_tool_names(profile, write_enabled, implemented))
    in_profile = set(select_tool_names(profile, True, implemented))
    refusals: dict[str, Unavailable] = {}
    for name in implemented:
        if name in active:
            continue
        reasons: list[str] = []
        flags: list[str] = []
        if name in WRITE_TOOL_NAMES and not write_enabled:
            reasons.append("it is a write tool and writes are disabled")
            if switches is not None:
                flags.append(switches.enable_write)
        if name not in in_profile:
            reasons.append(f"it is not in the {profile} tool profile")
            if switches is not None:
                flags.append(switches.full_profile)
        remedy = f"; start the server with {' '.join(flags)}" if flags else ""
        refusals[name] = Unavailable(
            message=f"Tool {name} is not enabled: {' and '.join(reasons)}{remedy}",
            data={
                "name": name,
                "writeTool": name in WRITE_TOOL_NAMES,
                "profile": profile,
                "enabledBy": flags,
            },
        )
    return MappingProxyType(refusals)


__all__ = ["HTTP_SWITCHES", "STDIO_SWITCHES", "Switches", "Unavailable", "inactive_tools"]
