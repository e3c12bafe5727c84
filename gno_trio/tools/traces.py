"""The six ``gno_trace_*`` tools: private local retrieval traces.

``gno_trace_list`` and ``gno_trace_show`` read; ``gno_trace_label``,
``gno_trace_export``, ``gno_trace_delete`` and ``gno_trace_purge`` change
stored receipts and are write tools (behind the write gate and the lease),
so an HTTP gateway can refuse them before dispatch. A bearer token never
grants them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import TraceJudgment
from gno_trio.engine.vocabulary import MAX_SAFE_INTEGER
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import read_tool, write_tool
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import ToolInput
from gno_trio.views.management import (
    trace_delete_text,
    trace_export_text,
    trace_label_text,
    trace_list_text,
    trace_purge_text,
    trace_show_text,
)

TraceId: TypeAlias = Annotated[
    str, Meta(min_length=1, max_length=128, description="Trace ID from a tool result's _meta")
]
Line: TypeAlias = Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER)]


class TraceListInput(ToolInput):
    """Arguments of ``gno_trace_list``."""

    limit: Annotated[int, Meta(ge=1, le=1000, description="Traces per page (1-1000)")] = 50
    cursor: (
        Annotated[
            str, Meta(min_length=1, max_length=512, description="nextCursor of the previous page")
        ]
        | UnsetType
    ) = UNSET


class TraceShowInput(ToolInput):
    """Arguments of ``gno_trace_show``."""

    traceId: TraceId
    detailLimit: Annotated[
        int, Meta(ge=1, le=5000, description="Most records shown per section (1-5000)")
    ] = 500


class TraceLabelInput(ToolInput, kw_only=True):
    """Arguments of ``gno_trace_label``."""

    traceId: TraceId
    label: Annotated[
        Literal["relevant", "irrelevant", "missing_expected"],
        Meta(description="relevant/irrelevant: recorded evidence; missing_expected: a miss"),
    ]
    targetRef: Annotated[
        str,
        Meta(
            min_length=1,
            max_length=4096,
            description=(
                "The document judged: gno:// URI, #docid or collection/path (missing_expected: "
                "a gno:// URI, docid or source hash only)"
            ),
        ),
    ]
    targetKind: Annotated[
        Literal["document", "chunk", "span"],
        Meta(description="Judge the whole document, one chunk, or one line span"),
    ] = "document"
    startLine: Annotated[Line, Meta(description="First line of a span")] | UnsetType = UNSET
    endLine: Annotated[Line, Meta(description="Last line of a span")] | UnsetType = UNSET
    sourceHash: (
        Annotated[str, Meta(pattern="^[a-f0-9]{64}$", description="SHA-256 of the source file")]
        | UnsetType
    ) = UNSET
    docid: (
        Annotated[str, Meta(min_length=1, max_length=256, description="Docid of the document")]
        | UnsetType
    ) = UNSET
    idempotencyKey: (
        Annotated[
            str,
            Meta(min_length=1, max_length=256, description="Retry-safe key; repeats are no-ops"),
        ]
        | UnsetType
    ) = UNSET


class TraceExportInput(ToolInput):
    """Arguments of ``gno_trace_export``."""

    traceIds: Annotated[
        list[Annotated[str, Meta(min_length=1, max_length=128)]],
        Meta(min_length=1, max_length=1000, description="Finished traces to export (1-1000)"),
    ]
    format: Annotated[
        Literal["agentic-receipt"], Meta(description="Export format (agentic-receipt)")
    ] = "agentic-receipt"


class TraceDeleteInput(ToolInput):
    """Arguments of ``gno_trace_delete``."""

    traceId: TraceId


class TracePurgeInput(ToolInput):
    """Arguments of ``gno_trace_purge``."""

    confirm: Annotated[Literal[True], Meta(description="Must be true: every trace is deleted")]


def _stop(ctx: ToolCallContext) -> Any:
    return lambda: ctx.cancellation.is_cancelled


def make_list(runtime: Runtime) -> ToolHandler:
    def call(args: TraceListInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.traces.list(limit=args.limit, cursor=opt(args.cursor))

    return engine_tool(runtime, call, trace_list_text)


def make_show(runtime: Runtime) -> ToolHandler:
    def call(args: TraceShowInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.traces.show(args.traceId, detail_limit=args.detailLimit)

    return engine_tool(runtime, call, trace_show_text)


def make_label(runtime: Runtime) -> ToolHandler:
    def call(args: TraceLabelInput, ctx: ToolCallContext) -> Any:
        judgment = TraceJudgment(
            label=args.label,
            target_ref=args.targetRef,
            target_kind=args.targetKind,
            start_line=opt(args.startLine),
            end_line=opt(args.endLine),
            source_hash=opt(args.sourceHash),
            docid=opt(args.docid),
            idempotency_key=opt(args.idempotencyKey),
        )
        return runtime.engine.traces.label(args.traceId, judgment, should_stop=_stop(ctx))

    return engine_tool(runtime, call, trace_label_text, write=True)


def make_export(runtime: Runtime) -> ToolHandler:
    def call(args: TraceExportInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.traces.export(args.traceIds, should_stop=_stop(ctx))

    return engine_tool(runtime, call, trace_export_text, write=True)


def make_delete(runtime: Runtime) -> ToolHandler:
    def call(args: TraceDeleteInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.traces.delete(args.traceId, should_stop=_stop(ctx))

    return engine_tool(runtime, call, trace_delete_text, write=True)


def make_purge(runtime: Runtime) -> ToolHandler:
    def call(args: TracePurgeInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.traces.purge(should_stop=_stop(ctx))

    return engine_tool(runtime, call, trace_purge_text, write=True)


TRACE_LIST: Final = read_tool(
    "gno_trace_list",
    TraceListInput,
    "retrieval-trace-list",
    make_list,
    content_class="retrieval_trace",
    full=(
        "List the local retrieval traces (recorded when retrievalTraces is enabled), newest "
        "first, one cursor page at a time. Summaries carry status, redaction mode, query shape "
        "and fingerprints; the query and goal text stay out of them."
    ),
)

TRACE_SHOW: Final = read_tool(
    "gno_trace_show",
    TraceShowInput,
    "retrieval-trace-show",
    make_show,
    content_class="retrieval_trace",
    full=(
        "Show one retrieval trace: its runs, events, judgments and exports, each section cut at "
        "detailLimit with exact totals. Replay-mode traces include their own query text."
    ),
)

TRACE_LABEL: Final = write_tool(
    "gno_trace_label",
    TraceLabelInput,
    "retrieval-trace-judgment",
    make_label,
    content_class="retrieval_trace",
    full=(
        "Record one explicit judgment on a retrieval trace: relevant or irrelevant for evidence "
        "the trace recorded, or missing_expected for a document it should have found. "
        "Append-only; a retry with the same idempotencyKey changes nothing."
    ),
)

TRACE_EXPORT: Final = write_tool(
    "gno_trace_export",
    TraceExportInput,
    "retrieval-trace-export",
    make_export,
    content_class="retrieval_trace",
    full=(
        "Export finished retrieval traces as one deterministic agentic-receipt artifact with a "
        "manifest and its hash; open or missing traces are refused, and the export is checked "
        "against the collections' egress policy."
    ),
)

TRACE_DELETE: Final = write_tool(
    "gno_trace_delete",
    TraceDeleteInput,
    "retrieval-trace-delete",
    make_delete,
    content_class="retrieval_trace",
    full="Delete one retrieval trace and the runs, events, judgments and export links it owns.",
)

TRACE_PURGE: Final = write_tool(
    "gno_trace_purge",
    TracePurgeInput,
    "retrieval-trace-purge",
    make_purge,
    content_class="retrieval_trace",
    full=(
        "Delete every retrieval trace, record and export when called with confirm=true, and "
        "report whether the database file was cleaned."
    ),
)

TOOLS: Final = (TRACE_LIST, TRACE_SHOW, TRACE_LABEL, TRACE_EXPORT, TRACE_DELETE, TRACE_PURGE)
