"""Listings the REST API serves that no MCP tool offers: collections, ``ls``, the browse tree.

They are bound like tools (an argument Struct, a handler running one engine
call in a worker thread, a declared answer) so the REST API calls them
through :meth:`~gno_trio.server.dispatch.McpApp.run_tool` like every tool,
but they are never listed or callable over MCP.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import READ_ONLY
from gno_trio.server.schemas import input_schemas_for
from gno_trio.server.tooltypes import BoundTool, ToolHandler, ToolSpec
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import ToolInput

LIST_COLLECTIONS: Final = "collections"
LIST_DOCUMENTS: Final = "ls"
BROWSE: Final = "browse"


class CollectionsInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of the collection list: none."""


class LsInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of the document list."""

    collection: Annotated[str, Meta(description="Only this collection")] | UnsetType = UNSET
    prefix: Annotated[str, Meta(description="Only paths starting with this")] | UnsetType = UNSET
    limit: Annotated[int, Meta(ge=1, le=1000)] = 1000
    offset: Annotated[int, Meta(ge=0)] = 0


class BrowseInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of one level of the browse tree."""

    collection: (
        Annotated[str, Meta(description="The collection (none: list the collections)")] | UnsetType
    ) = UNSET
    path: Annotated[str, Meta(description="A folder under the collection root")] = ""


class CollectionEntry(msgspec.Struct, rename="camel"):
    name: str
    path: str
    pattern: str
    include: list[str]
    exclude: list[str]
    memory_managed: bool


class CollectionsOutput(msgspec.Struct):
    collections: list[CollectionEntry]


class ListedDocument(msgspec.Struct, rename="camel"):
    docid: str
    uri: str
    title: str | None
    collection: str
    rel_path: str
    mime: str | None
    size_bytes: int | None
    modified_at: str | None


class LsMeta(msgspec.Struct):
    total: int
    returned: int
    offset: int


class LsOutput(msgspec.Struct):
    documents: list[ListedDocument]
    meta: LsMeta


class Folder(msgspec.Struct):
    name: str
    path: str
    documents: int


class BrowseMeta(msgspec.Struct, omit_defaults=True):
    documents: int | UnsetType = UNSET
    truncated: bool | UnsetType = UNSET


class BrowseOutput(msgspec.Struct):
    collection: str | None
    path: str
    folders: list[Folder]
    documents: list[ListedDocument]
    meta: BrowseMeta


def _collections(runtime: Runtime) -> ToolHandler:
    def call(args: CollectionsInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.collections.list()

    return engine_tool(runtime, call, lambda r: f"{len(r['collections'])} collection(s)")


def _ls(runtime: Runtime) -> ToolHandler:
    def call(args: LsInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.documents.ls(
            collection=opt(args.collection),
            prefix=opt(args.prefix),
            limit=args.limit,
            offset=args.offset,
        )

    return engine_tool(runtime, call, lambda r: f"{r['meta']['returned']} document(s)")


def _browse(runtime: Runtime) -> ToolHandler:
    def call(args: BrowseInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.documents.browse(collection=opt(args.collection), path=args.path)

    return engine_tool(
        runtime, call, lambda r: f"{len(r['folders'])} folder(s), {len(r['documents'])} document(s)"
    )


@dataclass(frozen=True, slots=True)
class _Listing:
    name: str
    description: str
    input_type: type[msgspec.Struct]
    output_type: type[msgspec.Struct]
    make: Callable[[Runtime], ToolHandler]


_LISTINGS: Final = (
    _Listing(
        LIST_COLLECTIONS,
        "The configured collections",
        CollectionsInput,
        CollectionsOutput,
        _collections,
    ),
    _Listing(LIST_DOCUMENTS, "Active documents, by collection and path", LsInput, LsOutput, _ls),
    _Listing(BROWSE, "One level of the browse tree", BrowseInput, BrowseOutput, _browse),
)


def bind_listings(runtime: Runtime) -> list[BoundTool]:
    """The listings as REST-only operations of one server."""
    inputs = input_schemas_for([listing.input_type for listing in _LISTINGS])
    outputs, definitions = msgspec.json.schema_components(
        [listing.output_type for listing in _LISTINGS]
    )
    return [
        BoundTool(
            spec=ToolSpec(
                name=listing.name,
                description=listing.description,
                input_type=listing.input_type,
                input_schema=input_schema,
                output_schema={**output, "$defs": definitions},
                annotations=READ_ONLY,
            ),
            handler=listing.make(runtime),
        )
        for listing, input_schema, output in zip(_LISTINGS, inputs, outputs, strict=True)
    ]


__all__ = ["BROWSE", "LIST_COLLECTIONS", "LIST_DOCUMENTS", "bind_listings"]
