"""``gno_ask``: one answer from a closed Context Capsule, every claim checked, or withheld.

``verify`` must be the literal ``true``: an Ask over MCP is always the
verified kind. The model-visible text gives the answer status, who wrote the
draft (a configured endpoint, or the evidence itself, which the text says),
each claim's verdict with its ``gno://`` line spans, and the sources cited.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import AskOutcome, AskRequest, QueryOptions, public_code
from gno_trio.engine.vocabulary import MAX_SAFE_INTEGER
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import read_tool
from gno_trio.server.tooltypes import ToolHandler, ToolResult, tool_error
from gno_trio.tools.common import opt, trace_meta
from gno_trio.tools.context import ContextQueryMode
from gno_trio.tools.retrieval import RetrievalFilters, graph_wanted, search_request
from gno_trio.views.ask import ask_summary

Positive = Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER)]


class AskInput(RetrievalFilters, kw_only=True):
    """Arguments of ``gno_ask`` (GNO's names and bounds): the shared filters and these."""

    query: Annotated[str, Meta(min_length=1, description="The question to answer")]
    verify: Annotated[
        Literal[True],
        Meta(description="Must be true: every claim is checked or the answer withheld"),
    ]
    intent: (
        Annotated[str, Meta(description="Background that disambiguates the question")] | UnsetType
    ) = UNSET
    candidateLimit: (
        Annotated[int, Meta(ge=1, le=100, description="Candidates that reach reranking (1-100)")]
        | UnsetType
    ) = UNSET
    queryModes: (
        Annotated[
            list[ContextQueryMode],
            Meta(description="Typed retrieval entries (term, intent, hyde); each entry is closed"),
        ]
        | UnsetType
    ) = UNSET
    graph: (
        Annotated[bool, Meta(description="Graph expansion in the Capsule's retrieval")] | UnsetType
    ) = UNSET
    noGraph: Annotated[bool, Meta(description="Turn graph expansion off")] | UnsetType = UNSET
    noRerank: Annotated[bool, Meta(description="Turn reranking off")] | UnsetType = UNSET
    explain: (
        Annotated[bool, Meta(description="Add retrieval scoring details to meta")] | UnsetType
    ) = UNSET
    maxAnswerTokens: (
        Annotated[Positive, Meta(description="Cap on the draft's length in tokens")] | UnsetType
    ) = UNSET
    contextBudgetTokens: (
        Annotated[Positive, Meta(description="Token budget of the Capsule (default 12000)")]
        | UnsetType
    ) = UNSET
    contextBudgetBytes: (
        Annotated[Positive, Meta(description="Optional byte budget of the Capsule")] | UnsetType
    ) = UNSET


def ask_request(args: AskInput) -> AskRequest:
    return AskRequest(
        search=search_request(args, args.query),
        options=QueryOptions(
            query_modes=tuple((m.mode, m.text) for m in opt(args.queryModes) or ()),
            candidate_limit=opt(args.candidateLimit),
            explain=bool(opt(args.explain)),
            graph=graph_wanted(args),
        ),
        verify=True,
        no_rerank=bool(opt(args.noRerank)),
        max_answer_tokens=opt(args.maxAnswerTokens),
        context_budget_tokens=opt(args.contextBudgetTokens),
        context_budget_bytes=opt(args.contextBudgetBytes),
    )


def make_ask(runtime: Runtime) -> ToolHandler:
    async def handler(args: AskInput, ctx: ToolCallContext) -> ToolResult:
        request = ask_request(args)

        def ask() -> AskOutcome:
            return runtime.engine.answers.ask(request)

        try:
            outcome = await runtime.run(ask)
        except GnoError as error:
            if error.code == "INVALID_INPUT":
                return tool_error("invalid_input", error.message)
            return tool_error(public_code(error.code), error.message)
        return ToolResult(
            text=ask_summary(outcome), structured=outcome.result, meta=trace_meta(outcome.trace_id)
        )

    return handler


ASK: Final = read_tool(
    "gno_ask",
    AskInput,
    "ask",
    make_ask,
    content_class="capsule",
    full=(
        "Answer one question from a closed Context Capsule: retrieve, compile the Capsule, "
        "draft an answer (a configured chat endpoint, else sentences quoted from the evidence, "
        "which the answer says), then check every claim against the cited passages and their "
        "freshness. The answer comes back only when every claim is supported; otherwise it is "
        "withheld with the reason. Requires verify=true."
    ),
)

TOOLS: Final = (ASK,)
