"""``gno_context``: compile one budgeted evidence Capsule for a goal.

``structuredContent`` is the complete Capsule for the application; the text a
model reads is the compact ``gno-context-agent-v1`` projection of the same
Capsule, never the Capsule twice. Failures use the Context error taxonomy's
codes (``invalid_input``, ``runtime_error``...) in every tool's error text,
``Error: code: message``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Final, Literal, TypeAlias

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import Traced, public_code
from gno_trio.engine.vocabulary import MAX_SAFE_INTEGER
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler, ToolResult, tool_error
from gno_trio.tools.common import opt, trace_meta
from gno_trio.tools.fields import (
    AuthorFilter,
    LangHint,
    MinScore,
    ProjectHints,
    QueryModeKind,
    SinceBound,
    ToolInput,
    UntilBound,
)
from gno_trio.tools.retrieval import scope_of

if TYPE_CHECKING:
    from gno_trio.engine import ContextRequest

CONTEXT_MAX_FILTER_VALUES: Final = 128

ContextFilterValues: TypeAlias = Annotated[
    list[Annotated[str, Meta(max_length=256)]], Meta(max_length=CONTEXT_MAX_FILTER_VALUES)
]


class ContextQueryMode(ToolInput, forbid_unknown_fields=True):
    """One caller-typed retrieval entry of ``gno_context`` (closed: no other keys)."""

    mode: Annotated[
        QueryModeKind,
        Meta(
            description="term: an extra lexical search; intent: disambiguating context; hyde: "
            "a hypothetical answer passage (kept for the record; no vector search runs)"
        ),
    ]
    text: Annotated[str, Meta(min_length=1, max_length=4096, description="Text of this entry")]


class ContextInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_context``; the object is closed, so an unknown key is an error."""

    goal: Annotated[
        str,
        Meta(
            description=(
                "What the evidence is for, in plain words (required, non-empty, at most "
                "16,384 characters); it is also the search query unless query is given"
            )
        ),
    ]
    budgetTokens: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SAFE_INTEGER,
            description=(
                "Token ceiling for the whole Capsule JSON; without a tokenizer each UTF-8 "
                "byte counts as one token"
            ),
        ),
    ]
    query: (
        Annotated[str, Meta(description="Search text to use instead of the goal")] | UnsetType
    ) = UNSET
    collections: (
        Annotated[
            list[str],
            Meta(
                max_length=CONTEXT_MAX_FILTER_VALUES,
                description="Draw evidence only from these collections (each must exist)",
            ),
        ]
        | UnsetType
    ) = UNSET
    uriPrefix: (
        Annotated[
            str | None,
            Meta(
                description=(
                    "Keep documents whose URI starts with this canonical gno://<collection>/ "
                    "prefix (null: no prefix filter)"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    queryModes: (
        Annotated[
            list[ContextQueryMode],
            Meta(
                max_length=CONTEXT_MAX_FILTER_VALUES,
                description="Typed retrieval entries: term anchors, intent context, one hyde",
            ),
        ]
        | UnsetType
    ) = UNSET
    tagsAll: ContextFilterValues | UnsetType = UNSET
    tagsAny: ContextFilterValues | UnsetType = UNSET
    categories: ContextFilterValues | UnsetType = UNSET
    author: AuthorFilter | UnsetType = UNSET
    lang: LangHint | UnsetType = UNSET
    intent: (
        Annotated[str, Meta(description="Background that disambiguates the goal; not searched")]
        | UnsetType
    ) = UNSET
    exclude: ContextFilterValues | UnsetType = UNSET
    minScore: MinScore | UnsetType = UNSET
    since: SinceBound | UnsetType = UNSET
    until: UntilBound | UnsetType = UNSET
    graph: (
        Annotated[
            bool,
            Meta(description="Ask for link-graph expansion (on by default; off under fast)"),
        ]
        | UnsetType
    ) = UNSET
    noRerank: Annotated[bool, Meta(description="Do not ask for reranking")] = False
    limit: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="Documents admitted across all collections (default 20)",
            ),
        ]
        | UnsetType
    ) = UNSET
    candidateLimit: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="Passages considered for packing (default 40; 80 under thorough)",
            ),
        ]
        | UnsetType
    ) = UNSET
    budgetBytes: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="Byte ceiling for the Capsule JSON (default 4 x budgetTokens)",
            ),
        ]
        | UnsetType
    ) = UNSET
    safetyMarginTokens: (
        Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="Tokens kept unused")]
        | UnsetType
    ) = UNSET
    safetyMarginBytes: (
        Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="Bytes kept unused")] | UnsetType
    ) = UNSET
    depthPolicy: Annotated[
        Literal["fast", "balanced", "thorough"],
        Meta(
            description=(
                "How many passages to consider: fast takes one per document, balanced two, "
                "thorough three and a larger candidate pool"
            )
        ),
    ] = "balanced"
    format: Annotated[
        Literal["json", "md"],
        Meta(description="Accepted for compatibility; the text is always the agent projection"),
    ] = "json"
    projectHints: ProjectHints | UnsetType = UNSET


logger = logging.getLogger("gno_trio.mcp")


def context_request(args: ContextInput) -> ContextRequest:
    """MCP arguments as an engine request; ``format`` and ``projectHints`` change nothing."""
    from gno_trio.engine import ContextRequest  # the Capsule compiler's: loaded by a first call

    return ContextRequest(
        goal=args.goal,
        budget_tokens=args.budgetTokens,
        query=opt(args.query),
        scope=scope_of(args),
        query_modes=tuple((m.mode, m.text) for m in opt(args.queryModes) or ()),
        graph=opt(args.graph),
        no_rerank=args.noRerank,
        limit=opt(args.limit),
        candidate_limit=opt(args.candidateLimit),
        budget_bytes=opt(args.budgetBytes),
        safety_margin_tokens=opt(args.safetyMarginTokens) or 0,
        safety_margin_bytes=opt(args.safetyMarginBytes) or 0,
        depth_policy=args.depthPolicy,
    )


def make_context(runtime: Runtime) -> ToolHandler:
    async def handler(args: ContextInput, ctx: ToolCallContext) -> ToolResult:
        request = context_request(args)

        def compile_capsule() -> Traced:
            return runtime.engine.retrieval.capsule(request)

        try:
            traced = await runtime.run(compile_capsule)
        except GnoError as error:
            return tool_error(public_code(error.code), error.message)
        except Exception as exc:  # the taxonomy's catch-all; the cause goes to the log
            logger.exception("gno_context failed")
            return tool_error("runtime_error", str(exc) or type(exc).__name__)
        from gno_trio.engine import agent_projection_text

        capsule, trace = traced.result, trace_meta(traced.trace_id)
        return ToolResult(text=agent_projection_text(capsule), structured=capsule, meta=trace)

    return handler


CONTEXT: Final = read_tool(
    "gno_context",
    ContextInput,
    "context-capsule",
    make_context,
    content_class="capsule",
    full=(
        "Compile one budgeted evidence Capsule for a goal: exact line spans extracted from "
        "indexed documents, with coverage gaps, omissions, provenance and verification "
        "fingerprints. Read-only; gno_search, gno_query and gno_get stay available for "
        "manual retrieval."
    ),
    core=(
        "Call when one goal needs a single, bounded evidence handoff. Compiles exact source "
        "passages for the goal with line spans, content hashes, egress class, coverage gaps, "
        "omissions and fingerprints; depthPolicy fast runs model-free, and the call is "
        "read-only. Returns a compact agent projection as text and the full Capsule in "
        "structuredContent, sized to fit budgetTokens."
    ),
)

TOOLS: Final = (CONTEXT,)
