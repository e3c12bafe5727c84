"""``gno_status``, ``gno_peek``, ``gno_list_tags`` and ``gno_changes``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final

from msgspec import UNSET, Meta, UnsetType

from gno_trio import __version__
from gno_trio.engine import parse_uri, standalone_resident
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler, ToolResult
from gno_trio.tools.common import engine_tool, guarded, opt
from gno_trio.tools.fields import (
    ToolInput,
)


class StatusInput(ToolInput):
    """Arguments of ``gno_status``: none."""


class PeekInput(ToolInput):
    """Arguments of ``gno_peek``: none."""


class ListTagsInput(ToolInput):
    """Arguments of ``gno_list_tags``."""

    collection: (
        Annotated[str, Meta(description="Count tags within this collection only")] | UnsetType
    ) = UNSET
    prefix: (
        Annotated[str, Meta(description="Keep tags starting with this prefix, such as 'project/'")]
        | UnsetType
    ) = UNSET


class ChangesInput(ToolInput):
    """Arguments of ``gno_changes`` (metadata-only change journal)."""

    since: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=512,
                description="ISO-8601 instant or a cursor returned by an earlier page",
            ),
        ]
        | UnsetType
    ) = UNSET
    collection: (
        Annotated[
            str,
            Meta(min_length=1, max_length=256, description="Limit the feed to one collection"),
        ]
        | UnsetType
    ) = UNSET
    limit: Annotated[
        int, Meta(ge=1, le=1000, description="Maximum change records per page (1-1000)")
    ] = 100


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


PEEK_SCHEMA_VERSION = "peek@1.0"


def _recent_entry(doc: dict[str, Any]) -> dict[str, Any]:
    collection = doc.get("collection") or parse_uri(doc["uri"])[0]
    return {
        "docid": doc["docid"],
        "uri": doc["uri"],
        "title": doc.get("title"),
        "collection": collection,
        # The engine's snapshot may only know when a document was indexed;
        # that is the closest honest stand-in for its modification time.
        "modifiedAt": doc.get("modifiedAt") or doc.get("indexedAt") or "",
    }


def peek_result(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The engine's index snapshot in the advertised ``peek@1.0`` shape.

    The engine reports raw counts; the tool contract adds who answered and
    when, folds errors and the embedding backlog into ``backlog``, and nulls
    the counters of an index with no collection, as the output schema asks.
    A stdio process runs no resident HTTP server, so ``serve`` says so.
    """
    initialized = bool(snapshot["initialized"])
    counts = snapshot.get("counts") or {}
    recent = [_recent_entry(doc) for doc in snapshot.get("recentDocuments", [])]
    return {
        "schemaVersion": PEEK_SCHEMA_VERSION,
        "gnoVersion": __version__,
        "generatedAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "initialized": initialized,
        "indexName": snapshot["indexName"],
        "counts": (
            {"documents": counts.get("documents", 0), "collections": counts.get("collections", 0)}
            if initialized
            else None
        ),
        "backlog": (
            {"pending": snapshot.get("embeddingBacklog", 0), "failed": counts.get("errors", 0)}
            if initialized
            else None
        ),
        "lastIndexedAt": snapshot.get("lastIndexedAt") if initialized else None,
        "recent": recent[:10] if initialized else [],
        "serve": {"running": False, "url": None},
    }


def peek_text(result: dict[str, Any]) -> str:
    counts = result["counts"]
    if counts is None:
        return f"Index {result['indexName']} is empty: no collections yet"
    return (
        f"Index {result['indexName']} initialized: {counts['collections']} collections, "
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


def _process_facts(runtime: Runtime) -> tuple[dict[str, Any] | None, dict[str, int]]:
    """The gateway's resident snapshot (if one serves us) and the reader slots.

    Taken on the event loop, where the gateway's own objects live; it reads
    no shared registry there (a multi-worker or team gateway reports the
    session count it last read).
    """
    limiter = runtime.limiter
    readers = {
        "active": int(limiter.borrowed_tokens),
        "queued": limiter.statistics().tasks_waiting,
        "limit": int(limiter.total_tokens),
        "maxQueued": 0,
    }
    return runtime.lifecycle.snapshot(), readers


def resident_block(
    runtime: Runtime,
    reported: dict[str, Any] | None,
    readers: dict[str, int],
    generations: dict[str, int],
) -> dict[str, Any]:
    """``resident-status@1.0`` for this process: the gateway's, else a stdio one.

    Jobs and model loads are this process's own (:meth:`Runtime.process_counters`,
    as the gateway's own snapshot has them) and the generations come from the index.
    """
    counters = runtime.process_counters()
    if reported is None:
        return standalone_resident(
            "stdio",
            generation=generations,
            readers=readers,
            jobs=counters["jobs"],
            models=counters["models"],
        )
    return {**reported, **counters, "generations": generations}


def make_status(runtime: Runtime) -> ToolHandler:
    async def handler(args: StatusInput, ctx: ToolCallContext) -> ToolResult:
        reported, readers = _process_facts(runtime)

        def call() -> dict[str, Any]:
            result = runtime.engine.index.status()
            generations = result["resident"]["generations"]
            result["resident"] = resident_block(runtime, reported, readers, generations)
            return result

        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(call)
            return status_text(result), result

        return await guarded(produce)

    return handler


def make_peek(runtime: Runtime) -> ToolHandler:
    def call(args: PeekInput, ctx: ToolCallContext) -> dict[str, Any]:
        return peek_result(runtime.engine.index.peek())

    return engine_tool(runtime, call, peek_text)


def make_list_tags(runtime: Runtime) -> ToolHandler:
    def call(args: ListTagsInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.documents.tags(
            collection=opt(args.collection), prefix=opt(args.prefix)
        )

    return engine_tool(runtime, call, tags_text)


def make_changes(runtime: Runtime) -> ToolHandler:
    def call(args: ChangesInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.documents.changes(
            since=opt(args.since), collection=opt(args.collection), limit=args.limit
        )

    return engine_tool(runtime, call, changes_text)


PEEK: Final = read_tool(
    "gno_peek",
    PeekInput,
    "peek",
    make_peek,
    content_class="metadata",
    full=(
        "Cheap, model-free snapshot of the install (peek@1.0): whether GNO is initialized, "
        "document and collection counts, embedding backlog, last index time, the most recently "
        "modified documents and whether gno serve is running. Use gno_status for the full "
        "health report."
    ),
)

STATUS: Final = read_tool(
    "gno_status",
    StatusInput,
    "status",
    make_status,
    content_class="metadata",
    full=(
        "Full health report for the index: collections with document, chunk and embedding "
        "counts, the embedding backlog, activation state and serving-process counters. Check "
        "it when vector or hybrid results look stale or unavailable."
    ),
)

CHANGES: Final = read_tool(
    "gno_changes",
    ChangesInput,
    "changes",
    make_changes,
    content_class="metadata",
    full=(
        "List document changes from the metadata-only change journal, starting at a time or a "
        "cursor, with cursor pagination and retention flags. Records carry paths, hashes and "
        "structure deltas; read the content itself with gno_get."
    ),
    core=(
        "Call to learn what changed in the index and since when. Reads the metadata-only "
        "change journal from since, an ISO-8601 time or the cursor of an earlier page. "
        "Returns change records with kind, before and after snapshots and structure deltas, "
        "page cursors and retention flags; limit defaults to 100 (max 1000), and gno_get "
        "reads the changed content."
    ),
)

LIST_TAGS: Final = read_tool(
    "gno_list_tags",
    ListTagsInput,
    "tags-list",
    make_list_tags,
    content_class="metadata",
    full=(
        "List tags with the number of documents carrying each. Narrow the list to one "
        "collection, or to a prefix for hierarchical tags such as 'project/'."
    ),
)

TOOLS: Final = (
    PEEK,
    STATUS,
    CHANGES,
    LIST_TAGS,
)
