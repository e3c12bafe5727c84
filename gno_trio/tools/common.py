"""Small helpers every tool adapter uses: optional arguments and error mapping."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from gno_trio.engine import Traced
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
    *,
    meta: Callable[[], Mapping[str, Any] | None] = lambda: None,
) -> ToolResult:
    """Turn an engine result into a tool result and a ``GnoError`` into a tool error."""
    try:
        text, structured = await produce()
    except GnoError as error:
        return tool_error(error.code, error.message)
    return ToolResult(text=text, structured=structured, meta=meta())


def trace_meta(trace_id: str | None) -> dict[str, Any] | None:
    """The ``_meta`` that hands a retrieval trace id to the client (none when not traced)."""
    if trace_id is None:
        return None
    return {"gno": {"retrievalTrace": {"traceId": trace_id}}}


WRITE_DISABLED_MESSAGE = (
    "Write tools are disabled; start the server with --enable-write or GNO_MCP_ENABLE_WRITE=1"
)


def engine_tool(
    runtime: Runtime,
    call: Callable[[Any, ToolCallContext], Mapping[str, Any] | Traced],
    render: Callable[[Any], str],
    *,
    write: bool = False,
) -> ToolHandler:
    """A handler that runs ``call(args, ctx)`` off the event loop and renders its text.

    Every tool is this shape: one engine call in a worker thread (where a
    cancelled request interrupts its SQLite statement), a human summary for
    ``content[0].text`` (rendered in that thread too), and the engine's object
    as ``structuredContent``.
    Write tools re-check the write gate here, so a mis-wired registry
    answers ``WRITE_DISABLED`` instead of writing. A retrieval tool's call
    answers with the engine's :class:`~gno_trio.engine.Traced`: the trace id
    the engine recorded goes back in ``_meta``, outside what the model reads.
    """

    async def handler(args: Any, ctx: ToolCallContext) -> ToolResult:
        if write and not runtime.write_enabled:
            return tool_error("WRITE_DISABLED", WRITE_DISABLED_MESSAGE)

        def work() -> tuple[str, Mapping[str, Any], str | None]:
            answer = call(args, ctx)
            result, trace_id = (
                (answer.result, answer.trace_id) if isinstance(answer, Traced) else (answer, None)
            )
            # Rendered here, in the worker thread, while the result is fresh in
            # its caches and off the event loop's path to the response.
            return render(result), result, trace_id

        # guarded()'s mapping, inline: this runs on every tool call.
        try:
            text, result, trace_id = await runtime.run(work)
        except GnoError as error:
            return tool_error(error.code, error.message)
        return ToolResult(text=text, structured=result, meta=trace_meta(trace_id))

    return handler
