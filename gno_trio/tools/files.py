"""``gno_create_folder`` and ``gno_duplicate_note``: small file operations in a collection."""

from __future__ import annotations

from typing import Annotated, Any, Final

from msgspec import UNSET, Meta, UnsetType

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    APPEND_ONLY_WRITE,
    write_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    DocumentRef,
    ToolInput,
)


class CreateFolderInput(ToolInput):
    """Arguments of ``gno_create_folder``."""

    collection: Annotated[str, Meta(min_length=1, description="Collection to create it in")]
    name: Annotated[str, Meta(min_length=1, description="Name of the new folder (one segment)")]
    parentPath: (
        Annotated[
            str,
            Meta(description="Existing folder to create it in, relative to the collection root"),
        ]
        | UnsetType
    ) = UNSET


class DuplicateNoteInput(ToolInput):
    """Arguments of ``gno_duplicate_note``."""

    ref: DocumentRef
    folderPath: (
        Annotated[
            str,
            Meta(
                description=(
                    "Existing folder for the copy, relative to the collection root "
                    "(default: the note's own folder)"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    name: (
        Annotated[
            str,
            Meta(
                min_length=1,
                description="File name of the copy (default: the note's name plus -copy)",
            ),
        ]
        | UnsetType
    ) = UNSET


def folder_text(result: dict[str, Any]) -> str:
    return f"Created folder {result['folderPath']} in collection {result['collection']}"


def duplicate_text(result: dict[str, Any]) -> str:
    text = f"Copied {result['source']['uri']} to {result['uri']} ({result['docid']})"
    if result["sync"]["status"] != "completed":
        text += f"; indexing the copy failed: {result['sync'].get('error', 'unknown error')}"
    return text


def make_create_folder(runtime: Runtime) -> ToolHandler:
    def call(args: CreateFolderInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.notes.create_folder(
            args.collection,
            args.name,
            parent_path=opt(args.parentPath),
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, folder_text, write=True)


def make_duplicate_note(runtime: Runtime) -> ToolHandler:
    def call(args: DuplicateNoteInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.notes.duplicate(
            args.ref,
            folder_path=opt(args.folderPath),
            name=opt(args.name),
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, duplicate_text, write=True)


CREATE_FOLDER: Final = write_tool(
    "gno_create_folder",
    CreateFolderInput,
    "mcp-create-folder-result",
    make_create_folder,
    content_class="metadata",
    annotations=APPEND_ONLY_WRITE,
    full=("Make a new folder, optionally under a parent path, in an existing collection."),
)

DUPLICATE_NOTE: Final = write_tool(
    "gno_duplicate_note",
    DuplicateNoteInput,
    "mcp-duplicate-note-result",
    make_duplicate_note,
    content_class="metadata",
    annotations=APPEND_ONLY_WRITE,
    full=("Copy an editable note into its own folder or another one, optionally under a new name."),
)

TOOLS: Final = (
    CREATE_FOLDER,
    DUPLICATE_NOTE,
)
