"""In-process tests of McpApp routing, tool-call error mapping, resources and request context."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from gno_trio.errors import GnoError
from gno_trio.protocol.connection import LEGACY_REQUEST_METHODS, MODERN_REQUEST_METHODS
from gno_trio.protocol.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND_LEGACY,
    ProtocolError,
)
from gno_trio.protocol.versions import Era
from gno_trio.server.context import RequestContext, ToolCallContext
from gno_trio.server.dispatch import McpApp
from gno_trio.server.tooltypes import BoundTool, ToolResult, ToolSpec, tool_error
from tests.support.mcp_echo_app import EchoResources, build_app
from tests.support.tool_results import tool_error_code, tool_error_message


def context(era: Era = Era.LEGACY, **fields: Any) -> RequestContext:
    version = "2025-11-25" if era is Era.LEGACY else "2026-07-28"
    return RequestContext(era=era, protocol_version=version, session_id="sess-1", **fields)


async def refusal(app: McpApp, method: str, params: Any, ctx: RequestContext) -> ProtocolError:
    with pytest.raises(ProtocolError) as raised:
        await app.handle_request(method, params, ctx)
    return raised.value


class LimitInput(msgspec.Struct, forbid_unknown_fields=True):
    limit: int = 5


def bound(name: str, handler: Any, input_type: type[msgspec.Struct] = LimitInput) -> BoundTool:
    spec = ToolSpec(
        name=name,
        description=f"{name} tool",
        input_type=input_type,
        input_schema={"type": "object"},
        output_schema={"type": "object"},
        annotations={"readOnlyHint": True},
        title=name.title(),
    )
    return BoundTool(spec, handler)


async def test_routes_cover_both_era_method_sets() -> None:
    app = build_app()
    for era, methods in (
        (Era.LEGACY, LEGACY_REQUEST_METHODS),
        (Era.MODERN, MODERN_REQUEST_METHODS),
    ):
        for method in methods:
            params = {"name": "echo", "arguments": {"text": "x"}, "uri": "echo://greeting"}
            if method == "initialize":
                params = {}
            assert isinstance(await app.handle_request(method, params, context(era)), dict)


async def test_era_specific_methods_are_not_found_in_the_other_era() -> None:
    app = build_app()
    assert (await refusal(app, "initialize", {}, context(Era.MODERN))).code == METHOD_NOT_FOUND
    assert (await refusal(app, "ping", None, context(Era.MODERN))).code == METHOD_NOT_FOUND
    error = await refusal(app, "server/discover", None, context(Era.LEGACY))
    assert (error.code, error.data) == (METHOD_NOT_FOUND, {"method": "server/discover"})


async def test_initialize_and_discover_results() -> None:
    app = build_app()
    init = await app.handle_request("initialize", {}, context())
    assert init == {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "tools": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
        },
        "serverInfo": {"name": "gno-echo", "version": "0.0.1"},
    }
    discover = await app.handle_request("server/discover", {}, context(Era.MODERN))
    assert discover["supportedVersions"] == ["2026-07-28"]
    assert discover["capabilities"] == init["capabilities"]
    assert discover["_meta"] == {"io.modelcontextprotocol/serverInfo": init["serverInfo"]}
    assert (discover["ttlMs"], discover["cacheScope"], discover["resultType"]) == (
        0,
        "private",
        "complete",
    )


async def test_legacy_ping_is_exactly_empty() -> None:
    assert await build_app().handle_request("ping", None, context()) == {}


async def test_tools_list_keeps_table_order_and_fields() -> None:
    async def handler(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        return ToolResult("ok", None)

    app = McpApp(name="gno", version="1", tools=[bound("zeta", handler), bound("alpha", handler)])
    listed = await app.handle_request("tools/list", {}, context())
    assert [tool["name"] for tool in listed["tools"]] == ["zeta", "alpha"]
    assert listed["tools"][0] == {
        "name": "zeta",
        "title": "Zeta",
        "description": "zeta tool",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    assert "resources" not in app.capabilities
    error = await refusal(app, "tools/list", {"cursor": "abc"}, context())
    assert error.code == INVALID_PARAMS
    assert (await refusal(app, "resources/list", {}, context())).code == METHOD_NOT_FOUND


def test_duplicate_tool_names_are_rejected() -> None:
    async def handler(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        return ToolResult("ok", None)

    with pytest.raises(ValueError, match="duplicate"):
        McpApp(name="gno", version="1", tools=[bound("a", handler), bound("a", handler)])


async def test_tool_call_receives_decoded_struct_and_context() -> None:
    seen: list[Any] = []

    async def handler(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        seen.append((args, ctx.tool_name, ctx.client_name, ctx.session_id, dict(ctx.custom_meta)))
        return ToolResult(text="done", structured={"limit": args.limit})

    app = McpApp(name="gno", version="1", tools=[bound("count", handler)])
    ctx = context(Era.MODERN, custom_meta={"acme/trace": "t1"})
    result = await app.handle_request(
        "tools/call", {"name": "count", "arguments": {"limit": 3}}, ctx
    )
    assert seen == [(LimitInput(limit=3), "count", "mcp", "sess-1", {"acme/trace": "t1"})]
    assert result["content"] == [{"type": "text", "text": "done"}]
    assert result["structuredContent"] == {"limit": 3}
    assert "isError" not in result and "ttlMs" not in result
    assert result["resultType"] == "complete"


async def test_invalid_arguments_are_a_tool_error_naming_the_field() -> None:
    async def handler(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        raise AssertionError("not reached")

    app = McpApp(name="gno", version="1", tools=[bound("count", handler)])
    result = await app.handle_request(
        "tools/call", {"name": "count", "arguments": {"limit": "many"}}, context()
    )
    assert result["isError"] is True
    assert tool_error_code(result) == "INVALID_INPUT"
    assert "$.limit" in tool_error_message(result)
    assert result["content"][0]["text"].startswith("Error: ")
    unknown_field = await app.handle_request(
        "tools/call", {"name": "count", "arguments": {"limt": 1}}, context()
    )
    assert unknown_field["isError"] is True and "limt" in unknown_field["content"][0]["text"]


async def test_unknown_tool_is_invalid_params() -> None:
    app = build_app()
    error = await refusal(app, "tools/call", {"name": "gno_nope", "arguments": {}}, context())
    assert (error.code, error.data) == (INVALID_PARAMS, {"name": "gno_nope"})
    assert (await refusal(app, "tools/call", {"arguments": {}}, context())).code == INVALID_PARAMS


async def test_handler_failures_never_escape() -> None:
    async def gno_failure(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        raise GnoError("LOCKED", "another writer holds the lock")

    async def crash(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        raise KeyError("boom")

    async def wrong_type(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        return "not a ToolResult"  # type: ignore[return-value]

    async def needs_sampling(args: LimitInput, ctx: ToolCallContext) -> ToolResult:
        raise ProtocolError(MISSING_REQUIRED_CLIENT_CAPABILITY, "needs sampling")

    app = McpApp(
        name="gno",
        version="1",
        tools=[
            bound("locked", gno_failure),
            bound("crash", crash),
            bound("wrong", wrong_type),
            bound("sampling", needs_sampling),
        ],
    )
    locked = await app.handle_request("tools/call", {"name": "locked"}, context())
    assert locked == {
        "content": [{"type": "text", "text": "Error: LOCKED: another writer holds the lock"}],
        "isError": True,
    }
    crashed = await app.handle_request("tools/call", {"name": "crash"}, context())
    assert crashed["isError"] is True and tool_error_code(crashed) == "RUNTIME"
    wrong = await app.handle_request("tools/call", {"name": "wrong"}, context())
    assert tool_error_code(wrong) == "RUNTIME"
    error = await refusal(app, "tools/call", {"name": "sampling"}, context())
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY


def test_tool_error_shape() -> None:
    assert tool_error("NOT_FOUND", "gone") == ToolResult(
        text="Error: NOT_FOUND: gone", structured=None, is_error=True, code="NOT_FOUND"
    )


async def test_resources_in_both_eras() -> None:
    app = build_app()
    listed = await app.handle_request("resources/list", {}, context())
    assert listed == {
        "resources": [{"uri": "echo://greeting", "name": "greeting", "mimeType": "text/plain"}]
    }
    templates = await app.handle_request("resources/templates/list", {}, context(Era.MODERN))
    assert templates["resourceTemplates"][0]["uriTemplate"] == "echo://{name}"
    assert templates["cacheScope"] == "private"
    read = await app.handle_request("resources/read", {"uri": "echo://greeting"}, context())
    assert read["contents"][0]["text"] == "hello from gno-echo"


@pytest.mark.parametrize("uri", ["echo://missing", "echo://empty", "other://x"])
@pytest.mark.parametrize(
    ("era", "code"), [(Era.LEGACY, RESOURCE_NOT_FOUND_LEGACY), (Era.MODERN, INVALID_PARAMS)]
)
async def test_missing_resource_uses_the_era_code(uri: str, era: Era, code: int) -> None:
    error = await refusal(build_app(), "resources/read", {"uri": uri}, context(era))
    assert (error.code, error.data) == (code, {"uri": uri})


async def test_resource_provider_failures_are_internal_errors() -> None:
    class Broken(EchoResources):
        async def read(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]:
            raise OSError("disk on fire")

    app = McpApp(name="gno", version="1", resources=Broken())
    error = await refusal(app, "resources/read", {"uri": "echo://greeting"}, context())
    assert error.code == -32603
    assert (await refusal(app, "resources/read", {"uri": 3}, context())).code == INVALID_PARAMS


async def test_progress_is_monotonic_and_stops_after_the_response() -> None:
    sent: list[tuple[str, Any]] = []

    async def send(method: str, params: Any) -> None:
        sent.append((method, params))

    ctx = context(progress_token="tok", send_notification=send)
    assert await ctx.report_progress(1, 3, "one")
    assert not await ctx.report_progress(1, 3)  # not strictly increasing
    assert await ctx.report_progress(2.5)
    ctx.finish()
    assert not await ctx.report_progress(3, 3)
    assert sent == [
        (
            "notifications/progress",
            {"progressToken": "tok", "progress": 1, "total": 3, "message": "one"},
        ),
        ("notifications/progress", {"progressToken": "tok", "progress": 2.5}),
    ]
    assert not await context(send_notification=send).report_progress(1)  # no token, no progress


def test_cancellation_flag_runs_callbacks_once() -> None:
    ctx = context()
    calls: list[str] = []
    unregister = ctx.cancellation.on_cancel(lambda: calls.append("a"))
    ctx.cancellation.on_cancel(lambda: calls.append("b"))
    unregister()
    ctx.cancellation.cancel()
    ctx.cancellation.cancel()
    ctx.cancellation.on_cancel(lambda: calls.append("late"))
    assert calls == ["b", "late"] and ctx.cancellation.is_cancelled
