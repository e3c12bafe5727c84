"""Why a known tool is not callable here, and which start-up switch would make it so.

A tool outside the active set (a write tool while writes are off, a ``full``
tool under the ``core`` profile) is not listed and cannot be called; calling
it still answers ``-32602`` like an unknown tool, but the message and
``data`` name what is missing, in the words of the transport that refused it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from gno_trio.server.registry import PROFILE_FULL, Catalogue


@dataclass(frozen=True, slots=True)
class Switches:
    """The command-line flags that widen the active tool set, as one command spells them."""

    enable_write: str
    tool_profile: str

    @property
    def full_profile(self) -> str:
        """The flag and value that select every tool."""
        return f"{self.tool_profile} {PROFILE_FULL}"


STDIO_SWITCHES: Final = Switches(enable_write="--enable-write", tool_profile="--tool-profile")
HTTP_SWITCHES: Final = Switches(
    enable_write="--mcp-enable-write", tool_profile="--mcp-tool-profile"
)


@dataclass(frozen=True, slots=True)
class Unavailable:
    """One inactive tool: the refusal message and its ``data``."""

    message: str
    data: Mapping[str, Any]


def inactive_tools(
    catalogue: Catalogue, profile: str, write_enabled: bool, switches: Switches | None
) -> Mapping[str, Unavailable]:
    """Every implemented tool the active set leaves out, with what would let it in.

    ``switches`` names the flags of the serving command; without it the
    refusal says what is off but names no flag.
    """
    active = set(catalogue.select(profile, write_enabled))
    in_profile = set(catalogue.select(profile, True))
    refusals: dict[str, Unavailable] = {}
    for name in catalogue.definitions:
        if name in active:
            continue
        write_tool = name in catalogue.write_names
        reasons: list[str] = []
        flags: list[str] = []
        if write_tool and not write_enabled:
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
            data={"name": name, "writeTool": write_tool, "profile": profile, "enabledBy": flags},
        )
    return MappingProxyType(refusals)


__all__ = ["HTTP_SWITCHES", "STDIO_SWITCHES", "Switches", "Unavailable", "inactive_tools"]
