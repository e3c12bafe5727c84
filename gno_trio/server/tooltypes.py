"""The contract between the tool registry and the MCP dispatcher.

The registry (names, profiles, descriptions, schemas) produces :class:`BoundTool`
values; the dispatcher only reads them. Keeping the contract in its own module
lets both sides be written and tested independently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from gno_trio.server.context import ToolCallContext


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything ``tools/list`` says about one tool, already resolved for the active profile."""

    name: str
    description: str
    input_type: type[msgspec.Struct]
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    title: str | None = None
    execution: Mapping[str, Any] | None = None
    """How the tool may be run (``taskSupport``); ``None`` leaves the field out."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a handler returns: a human summary plus the schema-shaped object."""

    text: str
    structured: Mapping[str, Any] | None
    is_error: bool = False
    meta: Mapping[str, Any] | None = None
    """Transport-only result metadata (``_meta``), never shown to the model."""
    code: str | None = None
    """The stable error code of a failed call (what surfaces other than MCP branch on)."""


def tool_error(code: str, message: str) -> ToolResult:
    """A failed call as the client sees it: ``isError`` and the text ``Error: CODE: message``.

    It carries no structured object: every tool declares an ``outputSchema``
    for its answer, and an error body would not match it (clients that check
    ``structuredContent`` against the schema even on errors would then show a
    schema failure instead of this message). The code leads the text, as on
    the command line, so a caller can branch on it without parsing prose.
    """
    return ToolResult(text=f"Error: {code}: {message}", structured=None, is_error=True, code=code)


ToolHandler = Callable[[Any, "ToolCallContext"], Awaitable[ToolResult]]
"""Receives the decoded input Struct and the call's context."""


@dataclass(frozen=True, slots=True)
class BoundTool:
    """A tool description paired with the coroutine that serves it."""

    spec: ToolSpec
    handler: ToolHandler
