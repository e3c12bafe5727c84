"""``gno_get`` and ``gno_multi_get``: read indexed documents back."""

from __future__ import annotations

from typing import Annotated, Any, Final

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import Traced
from gno_trio.engine.vocabulary import MAX_SAFE_INTEGER, MULTI_GET_DEFAULT_MAX_BYTES
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    LineNumbers,
    ToolInput,
)


class GetInput(ToolInput):
    """Arguments of ``gno_get`` (read one document or a line range of it)."""

    ref: Annotated[
        str,
        Meta(
            min_length=1,
            description="Document reference: gno://collection/path, #docid or collection/path",
        ),
    ]
    fromLine: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="First line to return (1-based); pass the line anchor of a search hit",
            ),
        ]
        | UnsetType
    ) = UNSET
    lineCount: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="How many lines to read starting at fromLine; a small window first",
            ),
        ]
        | UnsetType
    ) = UNSET
    lineNumbers: LineNumbers = True
    traceId: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=128,
                description="Retrieval trace to continue, as returned by a search or query",
            ),
        ]
        | UnsetType
    ) = UNSET


class MultiGetInput(ToolInput):
    """Arguments of ``gno_multi_get``; exactly one of ``refs`` / ``pattern`` is expected."""

    refs: (
        Annotated[
            list[str],
            Meta(
                min_length=1,
                description="Document references from search hits (gno:// URIs or #docids)",
            ),
        ]
        | UnsetType
    ) = UNSET
    pattern: (
        Annotated[
            str,
            Meta(
                description=(
                    "Glob over document URIs and collection paths (* and ?), used in place of refs"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    maxBytes: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SAFE_INTEGER,
            description="UTF-8 byte cap per document; longer content is truncated",
        ),
    ] = MULTI_GET_DEFAULT_MAX_BYTES
    lineNumbers: LineNumbers = True


def get_text(result: dict[str, Any]) -> str:
    lines = [f"Document: {result['uri']} ({result['docid']})"]
    if result.get("title"):
        lines.append(f"Title: {result['title']}")
    returned = result.get("returnedLines")
    total = result["totalLines"]
    if returned:
        span = f"{returned['start']}-{returned['end']}"
        lines.append(f"Lines: {span} of {total}")
    else:
        span = f"1-{total}" if result["content"] else "none"
        lines.append(f"Lines: {total}")
    lines.append(f"Path: {result['source'].get('absPath', result['source']['relPath'])}")
    lines.append(f"--- Content (lines {span}) ---")
    lines.append(result["content"])
    return "\n".join(lines)


def multi_get_text(result: dict[str, Any]) -> str:
    meta = result["meta"]
    lines = [
        f"Retrieved {meta['returned']} of {meta['requested']} documents"
        + (f", skipped {meta['skipped']}" if meta["skipped"] else "")
    ]
    for doc in result["documents"]:
        flag = " (truncated)" if doc.get("truncated") else ""
        lines.append(f"\n=== {doc['uri']} ({doc['docid']}){flag} ===")
        lines.append(doc["content"])
    for skip in result["skipped"]:
        lines.append(f"\nskipped {skip['ref']}: {skip['reason']}")
    return "\n".join(lines)


def make_get(runtime: Runtime) -> ToolHandler:
    def call(args: GetInput, ctx: ToolCallContext) -> Traced:
        result = runtime.engine.documents.get(
            args.ref,
            from_line=opt(args.fromLine),
            line_count=opt(args.lineCount),
            line_numbers=args.lineNumbers,
        )
        trace_id = opt(args.traceId)  # an open trace this read continues
        if trace_id is None or not runtime.engine.traces.record_read(trace_id, result):
            return Traced(result, None)
        return Traced(result, trace_id)

    return engine_tool(runtime, call, get_text)


def make_multi_get(runtime: Runtime) -> ToolHandler:
    def call(args: MultiGetInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.documents.multi_get(
            refs=opt(args.refs),
            pattern=opt(args.pattern),
            max_bytes=args.maxBytes,
            line_numbers=args.lineNumbers,
        )

    return engine_tool(runtime, call, multi_get_text)


GET: Final = read_tool(
    "gno_get",
    GetInput,
    "get",
    make_get,
    content_class="source",
    full=(
        "Read one document by gno:// URI, #docid or collection/path; a URI ending in "
        "?index=<name> reads that named index instead of the served one (a missing index is an "
        "error, never created). When a search hit gave a line, pass it as fromLine with a small "
        "lineCount to read just that region; "
        "lineNumbers prefixes each line with its number. Returns the content with title, "
        "totalLines, the returned range, source metadata and edit capabilities."
    ),
    core=(
        "Call to read a document that a search hit or citation named, by gno:// URI, #docid "
        "or collection/path. Reads the indexed Markdown mirror and numbers its lines. Returns "
        "the content with uri, docid, title, totalLines, returnedLines, source path and "
        "modifiedAt; start from the hit's line anchor as fromLine with a small lineCount, "
        "and widen the range only when the passage needs more context."
    ),
)

MULTI_GET: Final = read_tool(
    "gno_multi_get",
    MultiGetInput,
    "multi-get",
    make_multi_get,
    content_class="source",
    full=(
        "Read several documents at once, either from a refs list (URIs or docids taken from "
        "search hits) or from one glob pattern over URIs and paths. maxBytes caps each "
        "document and lineNumbers controls numbering; refs that cannot be read are listed "
        "under skipped with a reason. One answer carries at most 1 MiB of content: past it "
        "the last document is cut and the rest are skipped as exceeds_maxBytes, with "
        "meta.truncated set. All refs of one call must read one index (see ?index= "
        "on gno_get); split a batch that spans indexes."
    ),
    core=(
        "Call to read several documents in one round trip, once a search has named the ones "
        "worth reading together. Resolves either a refs list (URIs or #docids) or one glob "
        "pattern over URIs and paths; pass exactly one of the two. Returns the documents, the "
        "skipped refs with a reason, and counts; maxBytes (default 10240) truncates each "
        "document and 1 MiB bounds the whole answer (meta.truncated), so keep it small for "
        "large batches."
    ),
)

TOOLS: Final = (
    GET,
    MULTI_GET,
)
