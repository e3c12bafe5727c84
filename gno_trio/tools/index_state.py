"""``gno_status``, ``gno_peek``, ``gno_list_tags`` and ``gno_changes``."""

from __future__ import annotations

from typing import Any

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import ChangesInput, ListTagsInput, PeekInput, StatusInput
from gno_trio.server.tooltypes import ToolResult
from gno_trio.tools.common import guarded, opt


def status_text(result: dict[str, Any]) -> str:
    lines = [
        f"Index {result['indexName']}: {result['totalDocuments']} documents, "
        f"{result['totalChunks']} chunks, {result['recentErrors']} recent errors"
    ]
    for c in result["collections"]:
        lines.append(
            f"- {c['name']}: {c['documentCount']} documents, last sync "
            f"{c.get('lastSyncedAt') or 'never'} ({c['path']})"
        )
    return "\n".join(lines)


def peek_text(result: dict[str, Any]) -> str:
    counts = result["counts"]
    state = "initialized" if result["initialized"] else "empty (no collections)"
    return (
        f"Index {result['indexName']} {state}: {counts['collections']} collections, "
        f"{counts['documents']} documents; last indexed {result.get('lastIndexedAt') or 'never'}"
    )


def tags_text(result: dict[str, Any]) -> str:
    tags = result["tags"]
    if not tags:
        return "No tags"
    return f"{len(tags)} tags\n" + "\n".join(f"{t['tag']} ({t['count']})" for t in tags)


def changes_text(result: dict[str, Any]) -> str:
    changes = result["changes"]
    lines = [f"{len(changes)} changes"]
    for change in changes:
        snap = change["current"] or change["previous"] or {}
        lines.append(f"{change['observedAt']} {change['kind']} {snap.get('uri', '')}")
    page = result["page"]
    lines.append(f"next cursor: {page['nextCursor'] or page['latestCursor']}")
    return "\n".join(lines)


def make_status(runtime: Runtime) -> Any:
    async def gno_status(args: StatusInput, ctx: ToolCallContext) -> ToolResult:
        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(lambda conn: runtime.engine.status(conn=conn))
            return status_text(result), result

        return await guarded(produce)

    return gno_status


def make_peek(runtime: Runtime) -> Any:
    async def gno_peek(args: PeekInput, ctx: ToolCallContext) -> ToolResult:
        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(lambda conn: runtime.engine.peek(conn=conn))
            return peek_text(result), result

        return await guarded(produce)

    return gno_peek


def make_list_tags(runtime: Runtime) -> Any:
    async def gno_list_tags(args: ListTagsInput, ctx: ToolCallContext) -> ToolResult:
        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(
                lambda conn: runtime.engine.list_tags(
                    collection=opt(args.collection), prefix=opt(args.prefix), conn=conn
                )
            )
            return tags_text(result), result

        return await guarded(produce)

    return gno_list_tags


def make_changes(runtime: Runtime) -> Any:
    async def gno_changes(args: ChangesInput, ctx: ToolCallContext) -> ToolResult:
        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(
                lambda conn: runtime.engine.changes(
                    since=opt(args.since),
                    collection=opt(args.collection),
                    limit=args.limit,
                    conn=conn,
                )
            )
            return changes_text(result), result

        return await guarded(produce)

    return gno_changes
