"""Small helpers every tool adapter uses: optional arguments and error mapping."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from gno_trio.errors import GnoError
from gno_trio.server.context import ToolCallContext
from gno_trio.server.tooltypes import ToolHandler, ToolResult, tool_error

if TYPE_CHECKING:
    from gno_trio.runtime import Runtime

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


WRITE_DISABLED_MESSAGE = (
    "Write tools are disabled; start the server with --enable-write or GNO_MCP_ENABLE_WRITE=1"
)


def engine_tool(
    runtime: Runtime,
    call: Callable[[Any, ToolCallContext, sqlite3.Connection], Mapping[str, Any]],
    render: Callable[[Any], str],
    *,
    write: bool = False,
) -> ToolHandler:
    """A handler that runs ``call(args, ctx, conn)`` off the event loop and renders its text.

    Every tool is this shape: one engine call in a worker thread (where a
    cancelled request interrupts its SQLite statement), a human summary for
    ``content[0].text``, and the engine's object as ``structuredContent``.
    Write tools re-check the write gate here, so a mis-wired registry
    answers ``WRITE_DISABLED`` instead of writing.
    """

    async def handler(args: Any, ctx: ToolCallContext) -> ToolResult:
        if write and not runtime.write_enabled:
            return tool_error("WRITE_DISABLED", WRITE_DISABLED_MESSAGE)

        async def produce() -> tuple[str, Mapping[str, Any]]:
            result = await runtime.run(lambda conn: call(args, ctx, conn))
            return render(result), result

        return await guarded(produce)

    return handler
