"""``gno_create_folder`` and ``gno_duplicate_note``: small file operations in a collection."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio.engine import filing
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import CreateFolderInput, DuplicateNoteInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt


def folder_text(result: dict[str, Any]) -> str:
    return f"Created folder {result['folderPath']} in collection {result['collection']}"


def duplicate_text(result: dict[str, Any]) -> str:
    text = f"Copied {result['source']['uri']} to {result['uri']} ({result['docid']})"
    if result["sync"]["status"] != "completed":
        text += f"; indexing the copy failed: {result['sync'].get('error', 'unknown error')}"
    return text


def make_create_folder(runtime: Runtime) -> ToolHandler:
    def call(
        args: CreateFolderInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return filing.create_folder(
            runtime.engine,
            args.collection,
            args.name,
            parent_path=opt(args.parentPath),
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, folder_text, write=True)


def make_duplicate_note(runtime: Runtime) -> ToolHandler:
    def call(
        args: DuplicateNoteInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return filing.duplicate_note(
            runtime.engine,
            conn,
            args.ref,
            folder_path=opt(args.folderPath),
            name=opt(args.name),
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, duplicate_text, write=True)
