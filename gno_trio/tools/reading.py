"""``gno_get`` and ``gno_multi_get``."""

from __future__ import annotations

from typing import Any

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import GetInput, MultiGetInput
from gno_trio.server.tooltypes import ToolResult
from gno_trio.tools.common import guarded, opt


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


def make_get(runtime: Runtime) -> Any:
    async def gno_get(args: GetInput, ctx: ToolCallContext) -> ToolResult:
        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(
                lambda conn: runtime.engine.get(
                    args.ref,
                    from_line=opt(args.fromLine),
                    line_count=opt(args.lineCount),
                    line_numbers=args.lineNumbers,
                    conn=conn,
                )
            )
            return get_text(result), result

        return await guarded(produce)

    return gno_get


def make_multi_get(runtime: Runtime) -> Any:
    async def gno_multi_get(args: MultiGetInput, ctx: ToolCallContext) -> ToolResult:
        async def produce() -> tuple[str, dict[str, Any]]:
            result = await runtime.run(
                lambda conn: runtime.engine.multi_get(
                    refs=opt(args.refs),
                    pattern=opt(args.pattern),
                    max_bytes=args.maxBytes,
                    line_numbers=args.lineNumbers,
                    conn=conn,
                )
            )
            return multi_get_text(result), result

        return await guarded(produce)

    return gno_multi_get
