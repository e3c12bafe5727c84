"""Method routing for an MCP server that serves both protocol eras from one tool table.

:class:`McpApp` knows what the server offers (identity, tools, resources) and
answers already-admitted requests; transports own framing, era pinning and
concurrency. Every answer is either a result (stamped for the request's era) or
a raised :class:`~gno_trio.protocol.errors.ProtocolError`. Tool failures are not
protocol errors: they come back as ``isError`` results with a stable code.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final, Protocol

import msgspec
import trio

from gno_trio.errors import GnoError, Kind
from gno_trio.protocol.connection import LEGACY_REQUEST_METHODS, MODERN_REQUEST_METHODS
from gno_trio.protocol.errors import (
    RESOURCE_NOT_FOUND_LEGACY,
    ProtocolError,
    internal_error,
    invalid_params,
    method_not_found,
    resource_not_found,
)
from gno_trio.protocol.stamping import stamp_result
from gno_trio.protocol.subscriptions import (
    LEGACY_SUBSCRIPTION_METHODS,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    SUBSCRIPTIONS_LISTEN,
    ResourceSubscriptions,
)
from gno_trio.protocol.versions import MODERN_VERSIONS, Era
from gno_trio.server.change_feed import ChangeFeed
from gno_trio.server.context import RequestContext, ToolCallContext
from gno_trio.server.tooltypes import BoundTool, ToolResult, tool_error
from gno_trio.server.unavailable import Unavailable

logger = logging.getLogger("gno_trio.mcp")

RUNTIME_ERROR_CODE: Final = "RUNTIME"
INVALID_ARGUMENTS_CODE: Final = "INVALID_INPUT"


class ResourceProvider(Protocol):
    """Where ``resources/*`` answers come from.

    ``read`` raises ``GnoError`` (``NOT_FOUND``/``PATH_NOT_FOUND`` for a missing
    resource) or a ``ProtocolError``; the dispatcher turns a missing resource into
    the era's resource-not-found error.
    """

    async def list_resources(self, ctx: RequestContext) -> list[dict[str, Any]]: ...

    def list_templates(self) -> list[dict[str, Any]]: ...

    async def read(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]: ...


Params = Mapping[str, Any]
_Route = Callable[[Params, RequestContext], Awaitable[dict[str, Any]]]


def _describe_tool(bound: BoundTool) -> dict[str, Any]:
    spec = bound.spec
    entry: dict[str, Any] = {"name": spec.name}
    if spec.title is not None:
        entry["title"] = spec.title
    entry["description"] = spec.description
    entry["inputSchema"] = spec.input_schema
    if spec.output_schema is not None:
        entry["outputSchema"] = spec.output_schema
    entry["annotations"] = spec.annotations
    if spec.execution is not None:
        entry["execution"] = spec.execution
    return entry


def _tool_result_object(result: ToolResult) -> dict[str, Any]:
    """The wire form of a tool result: the one place every ``tools/call`` answer is built.

    An error result is text only (``isError`` and ``content``), never
    ``structuredContent``: what a tool's ``outputSchema`` declares is its
    answer, and official clients check any structured object present against
    it, errors included.
    """
    payload: dict[str, Any] = {"content": [{"type": "text", "text": result.text}]}
    if result.structured is not None and not result.is_error:
        structured = result.structured
        payload["structuredContent"] = (
            structured if isinstance(structured, dict) else dict(structured)
        )
    if result.is_error:
        payload["isError"] = True
    if result.meta:
        payload["_meta"] = dict(result.meta)
    return payload


def _reject_cursor(params: Params) -> None:
    # Lists are never paginated, so no cursor this server could have issued exists.
    if params.get("cursor") is not None:
        raise invalid_params("Invalid cursor")


class LifecycleSlot(Protocol):
    """Where the listener serving an app reports its resident status (the runtime's)."""

    def attach(self, report: Callable[[], dict[str, Any]]) -> None: ...

    def counters(self) -> dict[str, Any]:
        """The serving process's own resident-status blocks (model loads, jobs)."""
        ...


class McpApp:
    """The server's MCP surface: identity, capabilities, tools and resources."""

    def __init__(
        self,
        *,
        name: str,
        version: str,
        tools: Sequence[BoundTool] = (),
        resources: ResourceProvider | None = None,
        instance_id: str | None = None,
        write_tools: Collection[str] = (),
        content_classes: Mapping[str, str] | None = None,
        inactive: Mapping[str, Unavailable] | None = None,
        lifecycle: LifecycleSlot | None = None,
        change_feed: ChangeFeed | None = None,
        subscriptions: bool = False,
        operations: Sequence[BoundTool] = (),
    ) -> None:
        """``inactive``: known tools left out of ``tools``, refused with a hint when called.

        ``operations``: calls served to the REST API only (never listed or
        callable over MCP), run by :meth:`run_tool` exactly like the tools.

        ``write_tools``: every catalogued write tool, for the HTTP write gate.
        ``change_feed``: the journal reader document changes come from (the
        REST event stream listens to it). ``subscriptions`` (``--subscriptions``)
        offers them over MCP as well: then, given a feed and resources,
        ``resources/subscribe``/``unsubscribe`` are served to 2025-era clients,
        ``subscriptions/listen`` to 2026-07-28 ones, and ``initialize``
        advertises them.
        ``content_classes``: every catalogued tool's egress content class, for
        the HTTP egress judge.
        """
        self.name = name
        # Where a listener serving this app attaches its resident status
        # (None: nothing reports one, as for an app serving no tools).
        self.lifecycle = lifecycle
        self.version = version
        self.instance_id = instance_id if instance_id is not None else uuid.uuid4().hex
        self.server_info: dict[str, Any] = {"name": name, "version": version}
        self._tools: dict[str, BoundTool] = {}
        for bound in tools:
            if bound.spec.name in self._tools:
                raise ValueError(f"duplicate tool name {bound.spec.name!r}")
            self._tools[bound.spec.name] = bound
        # tools/list never varies per connection, so it is built once, in table order.
        self._tool_list = [_describe_tool(bound) for bound in tools]
        self._operations: dict[str, BoundTool] = {bound.spec.name: bound for bound in operations}
        self._resources = resources
        # Every catalogued write tool, served or not: the HTTP write gate refuses
        # them before dispatch while writes are disabled.
        self.write_tools: frozenset[str] = frozenset(write_tools)
        self.content_classes: Mapping[str, str] = (
            content_classes if content_classes is not None else {}
        )
        self._inactive = inactive if inactive is not None else {}
        self.capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        if resources is not None:
            self.capabilities["resources"] = {"subscribe": False, "listChanged": False}
        self.change_feed = change_feed
        self.subscriptions = subscriptions and change_feed is not None and resources is not None
        # Requests each era serves; subscriptions/listen is served by the transports
        # themselves (a stream, not one answer), so it has no route here.
        self.legacy_methods: frozenset[str] = LEGACY_REQUEST_METHODS
        self.modern_methods: frozenset[str] = MODERN_REQUEST_METHODS
        if self.subscriptions:
            self.capabilities["resources"] = {"subscribe": True, "listChanged": True}
            self.legacy_methods = LEGACY_REQUEST_METHODS | LEGACY_SUBSCRIPTION_METHODS
            self.modern_methods = MODERN_REQUEST_METHODS | {SUBSCRIPTIONS_LISTEN}
        self._methods_by_era = {Era.LEGACY: self.legacy_methods, Era.MODERN: self.modern_methods}
        self._routes: dict[str, _Route] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "server/discover": self._discover,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            RESOURCES_SUBSCRIBE: self._subscribe,
            RESOURCES_UNSUBSCRIBE: self._unsubscribe,
        }

    @property
    def tools(self) -> Mapping[str, BoundTool]:
        """The active tool set, by name, in advertised order."""
        return self._tools

    @property
    def operations(self) -> Mapping[str, BoundTool]:
        """The REST-only operations, by name."""
        return self._operations

    async def handle_request(
        self, method: str, params: Params | None, ctx: RequestContext
    ) -> Mapping[str, Any]:
        """Answer one admitted request: the era-stamped result, or a raised ``ProtocolError``."""
        route = self._routes.get(method)
        if route is None or method not in self._methods_by_era[ctx.era]:
            raise method_not_found(method)
        result = await route(params if params is not None else {}, ctx)
        return stamp_result(ctx.era, method, result, self.server_info)

    def handle_notification(self, method: str, params: Params | None) -> None:
        """Client notifications carry no work here (cancellation is the transport's job)."""
        logger.debug("notification %s ignored", method)

    # -- lifecycle ---------------------------------------------------------------------

    async def _initialize(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        return {
            "protocolVersion": ctx.protocol_version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }

    async def _ping(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        return {}

    async def _discover(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        return {"supportedVersions": list(MODERN_VERSIONS), "capabilities": self.capabilities}

    # -- tools -------------------------------------------------------------------------

    async def _list_tools(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        _reject_cursor(params)
        return {"tools": self._tool_list}

    async def _call_tool(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise invalid_params("tools/call needs a string name")
        result = await self.run_tool(name, params.get("arguments"), ctx, tools_only=True)
        return _tool_result_object(result)

    async def run_tool(
        self,
        name: str,
        arguments: Any,
        ctx: RequestContext,
        *,
        tools_only: bool = False,
        from_strings: bool = False,
    ) -> ToolResult:
        """One call of tool (or REST operation) ``name``: the one path both surfaces take.

        ``from_strings`` lets numbers and booleans arrive as text (a query
        string). Raises ``ProtocolError`` (``-32602``) for an unknown or
        switched-off tool; every other failure is an error result.
        """
        bound = self._tools.get(name)
        if bound is None and not tools_only:
            bound = self._operations.get(name)
        if bound is None:
            inactive = self._inactive.get(name)
            if inactive is not None:
                raise invalid_params(inactive.message, dict(inactive.data))
            raise invalid_params(f"Unknown tool: {name}", {"name": name})
        try:
            decoded = msgspec.convert(
                arguments if arguments is not None else {},
                bound.spec.input_type,
                strict=not from_strings,
            )
        except msgspec.ValidationError as exc:
            return tool_error(INVALID_ARGUMENTS_CODE, f"Invalid arguments for {name}: {exc}")
        return await self._run_tool(bound, decoded, ToolCallContext(ctx, name))

    async def _run_tool(self, bound: BoundTool, decoded: Any, ctx: ToolCallContext) -> ToolResult:
        try:
            result = await bound.handler(decoded, ctx)
        except ProtocolError:
            raise
        except GnoError as exc:
            return tool_error(exc.code, exc.message)
        except Exception as exc:
            logger.exception("tool %s failed", ctx.tool_name)
            return tool_error(RUNTIME_ERROR_CODE, str(exc) or type(exc).__name__)
        if not isinstance(result, ToolResult):
            logger.error("tool %s returned %r instead of a ToolResult", ctx.tool_name, type(result))
            return tool_error(RUNTIME_ERROR_CODE, "tool returned an invalid result")
        return result

    # -- resources ---------------------------------------------------------------------

    def _provider(self, method: str) -> ResourceProvider:
        if self._resources is None:
            raise method_not_found(method)
        return self._resources

    async def _list_resources(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        provider = self._provider("resources/list")
        _reject_cursor(params)
        try:
            resources = await provider.list_resources(ctx)
        except ProtocolError:
            raise
        except Exception as exc:
            raise _internal("resources/list", exc) from None
        return {"resources": resources}

    async def _list_templates(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        provider = self._provider("resources/templates/list")
        _reject_cursor(params)
        return {"resourceTemplates": provider.list_templates()}

    async def _read_resource(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        provider = self._provider("resources/read")
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params("resources/read needs a string uri")
        try:
            contents = await provider.read(uri, ctx)
        except ProtocolError as exc:
            if exc.code == RESOURCE_NOT_FOUND_LEGACY:
                raise resource_not_found(uri, ctx.era) from None
            raise
        except GnoError as exc:
            if exc.kind is Kind.NOT_FOUND:
                raise resource_not_found(uri, ctx.era) from None
            if exc.kind.is_caller_error:
                raise invalid_params(exc.message, {"uri": uri}) from None
            raise _internal("resources/read", exc) from None
        except Exception as exc:
            raise _internal("resources/read", exc) from None
        if not contents:
            # An empty read is a missing resource (2026-07-28 forbids empty contents).
            raise resource_not_found(uri, ctx.era)
        return {"contents": contents}

    def _subscriptions(self, method: str, ctx: RequestContext) -> ResourceSubscriptions:
        if ctx.subscriptions is None or method not in self.legacy_methods:
            raise method_not_found(method)
        return ctx.subscriptions

    async def _subscribe(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        # In a worker thread: the book may be a registry shared by gateway processes.
        await trio.to_thread.run_sync(
            self._subscriptions(RESOURCES_SUBSCRIBE, ctx).subscribe, params
        )
        return {}

    async def _unsubscribe(self, params: Params, ctx: RequestContext) -> dict[str, Any]:
        subscriptions = self._subscriptions(RESOURCES_UNSUBSCRIBE, ctx)
        await trio.to_thread.run_sync(subscriptions.unsubscribe, params)
        return {}


def _internal(method: str, exc: Exception) -> ProtocolError:
    logger.error("%s failed", method, exc_info=exc)
    message = exc.message if isinstance(exc, GnoError) else "Internal error"
    return internal_error(message)
