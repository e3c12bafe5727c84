"""Small helpers every tool adapter uses: optional arguments and error mapping."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import msgspec

from gno_trio.errors import GnoError
from gno_trio.server.tooltypes import ToolResult, tool_error

T = TypeVar("T")


def opt(value: T | msgspec.UnsetType) -> T | None:
    """An optional tool argument as ``None`` when the caller left it out."""
    return None if value is msgspec.UNSET else value


def seq(value: list[str] | msgspec.UnsetType) -> tuple[str, ...]:
    return () if value is msgspec.UNSET else tuple(value)


async def guarded(
    produce: Callable[[], Awaitable[tuple[str, Mapping[str, Any]]]],
) -> ToolResult:
    """Turn an engine result into a tool result and a ``GnoError`` into a tool error."""
    try:
        text, structured = await produce()
    except GnoError as error:
        return tool_error(error.code, error.message)
    return ToolResult(text=text, structured=structured)
