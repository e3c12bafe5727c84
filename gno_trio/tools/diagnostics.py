"""``gno_diff`` and ``gno_query_diagnose``: read-only explanations of history and ranking."""

from __future__ import annotations

from typing import Annotated, Any, Final

from msgspec import UNSET, Meta, UnsetType

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    BoundedDocumentRef,
    ToolInput,
)
from gno_trio.tools.retrieval import QueryInput, query_options, search_request


class QueryDiagnoseInput(QueryInput, kw_only=True):
    """Arguments of ``gno_query_diagnose``: a ``gno_query`` request plus the document to explain."""

    target: Annotated[
        str,
        Meta(
            min_length=1,
            description=(
                "The document expected in the results: gno://collection/path, #docid or "
                "collection/path"
            ),
        ),
    ]


class DiffInput(ToolInput):
    """Arguments of ``gno_diff`` (the retained structural diff of one document change)."""

    ref: BoundedDocumentRef
    change: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=512,
                description="Change id from gno_changes; omit for the latest retained change",
            ),
        ]
        | UnsetType
    ) = UNSET


def _delta_lines(delta: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for key in ("headings", "links", "typedEdges"):
        for sign, side in (("+", "added"), ("-", "removed")):
            lines.extend(f"  {sign} {key}: {item}" for item in delta[key][side])
    dates = delta["dates"]
    lines.extend(f"  + date: {item}" for item in dates["added"])
    lines.extend(f"  - date: {item}" for item in dates["removed"])
    lines.extend(f"  ~ date: {item}" for item in dates["changed"])
    return lines


def diff_text(result: dict[str, Any]) -> str:
    document = result["document"]
    change = result["change"]
    if change is None:
        return f"No retained change for {document['uri']}."
    lines = [
        f"{change['kind']} of {document['uri']} at {change['observedAt']} ({change['id']})",
        *(_delta_lines(change["structureDelta"]) or ["  no structural difference recorded"]),
        "Bodies are not retained; read the current text with gno_get.",
    ]
    return "\n".join(lines)


def diagnose_text(result: dict[str, Any]) -> str:
    target = result["target"]
    lines = [f'Target {target["ref"]} for "{result["query"]}": {target["status"]}']
    if target["filterReasons"]:
        lines.append(f"  excluded by: {', '.join(target['filterReasons'])}")
    for stage in result["stages"]:
        lines.append(f"  {stage['id']}: {stage['reason']}")
    return "\n".join(lines)


def make_diff(runtime: Runtime) -> ToolHandler:
    def call(args: DiffInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.documents.diff(args.ref, opt(args.change))

    return engine_tool(runtime, call, diff_text)


def make_query_diagnose(runtime: Runtime) -> ToolHandler:
    def call(args: QueryDiagnoseInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.search.diagnose(
            search_request(args, args.query),
            args.target,
            query_options(args),
        )

    return engine_tool(runtime, call, diagnose_text)


QUERY_DIAGNOSE: Final = read_tool(
    "gno_query_diagnose",
    QueryDiagnoseInput,
    "query-diagnose",
    make_query_diagnose,
    content_class="metadata",
    full=(
        "Trace one named document through the retrieval stages for a query (filters, BM25, "
        "vector, fusion, graph, rerank) and show where it ranks or drops out. Use it when an "
        "expected document is missing, before changing the retrieval strategy."
    ),
)

DIFF: Final = read_tool(
    "gno_diff",
    DiffInput,
    "document-diff",
    make_diff,
    content_class="metadata",
    full=(
        "Show the structural change (headings, links, typed edges, dates) recorded for one "
        "document, metadata only; expired history is reported as expired."
    ),
)

TOOLS: Final = (
    QUERY_DIAGNOSE,
    DIFF,
)
