"""``gno_recall`` and ``gno_remember``.

Identity never comes from arguments: ``caller`` is the client's name from
the handshake or envelope, ``session`` the transport's identity for this
connection (HTTP session, per-caller sessionless label, or the stdio
server instance). The remember adapter takes no lock of its own: the
engine holds the shared write lease for each write. Remember is
registered only when writes are enabled, and its handler checks again, so a
mis-wired registry answers ``WRITE_DISABLED`` instead of writing.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import Identity, PresentedReceipt
from gno_trio.engine.vocabulary import (
    MEMORY_MAX_SCOPES,
    RECALL_DEFAULT_MAX_FACTS,
    RECALL_DEFAULT_MAX_TOKENS,
    RECALL_MAX_FACTS,
    RECALL_MAX_TOKENS,
)
from gno_trio.runtime import Runtime
from gno_trio.server.context import DEFAULT_CLIENT_NAME, ToolCallContext
from gno_trio.server.registry import (
    APPEND_ONLY_WRITE,
    read_tool,
    write_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    ToolInput,
)

MemoryScopes: TypeAlias = Annotated[
    list[str],
    Meta(
        min_length=1,
        max_length=MEMORY_MAX_SCOPES,
        description=(
            "Explicit scopes such as 'project:gno' (1-8); a fact is visible when it shares "
            "any scope with this list, and there is no implicit global scope"
        ),
    ),
]

MemoryDecision: TypeAlias = Literal["add", "supersede"]


class RecallInput(ToolInput):
    """Arguments of ``gno_recall``; identity comes from the session, never from here."""

    query: Annotated[str, Meta(description="The question, worded like the stored fact would read")]
    collection: Annotated[
        str, Meta(description="Collection with memoryManaged enabled that holds the facts")
    ]
    scopes: MemoryScopes
    maxFacts: Annotated[
        int, Meta(ge=1, le=RECALL_MAX_FACTS, description="Most facts to return (1-64, default 8)")
    ] = RECALL_DEFAULT_MAX_FACTS
    maxTokens: Annotated[
        int,
        Meta(
            ge=1,
            le=RECALL_MAX_TOKENS,
            description="Token budget for the returned facts (1-8192, default 512)",
        ),
    ] = RECALL_DEFAULT_MAX_TOKENS


class MemoryReceipt(ToolInput):
    """The receipt a ``gno_recall`` answer carried, handed back to ``gno_remember``.

    Every part is optional on input: the fence only needs ``spanHashes``, and a
    partial receipt simply fences fewer spans.
    """

    caller: str | UnsetType = UNSET
    session: str | UnsetType = UNSET
    issuedAt: str | UnsetType = UNSET
    memoryIds: list[str] = msgspec.field(default_factory=list)
    spanHashes: list[str] = msgspec.field(default_factory=list)
    digest: str | UnsetType = UNSET


class RememberInput(ToolInput):
    """Arguments of ``gno_remember``; identity comes from the session, never from here."""

    text: Annotated[
        str,
        Meta(description="One fact stated in full, as a single statement rather than a document"),
    ]
    collection: Annotated[
        str, Meta(description="Collection with memoryManaged enabled that receives the fact")
    ]
    scopes: MemoryScopes
    decision: (
        Annotated[
            MemoryDecision,
            Meta(
                description=(
                    "add writes a new fact; supersede replaces predecessorUri; omit it to get "
                    "candidate matches and write nothing"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    predecessorUri: (
        Annotated[str, Meta(description="With supersede: the gno:// URI of the earlier fact")]
        | UnsetType
    ) = UNSET
    predecessorHash: (
        Annotated[
            str,
            Meta(
                description="With supersede: the earlier fact's contentHash as gno_recall gave it"
            ),
        ]
        | UnsetType
    ) = UNSET
    receipt: (
        Annotated[
            MemoryReceipt,
            Meta(description="Receipt from the gno_recall answer this fact was derived from"),
        ]
        | UnsetType
    ) = UNSET
    derivedFrom: (
        Annotated[
            list[str],
            Meta(description="Declared origins of the fact; a gno:// origin is rejected"),
        ]
        | UnsetType
    ) = UNSET
    source: (
        Annotated[str, Meta(description="Free-text evidence: where the fact came from")] | UnsetType
    ) = UNSET


def identity_of(ctx: ToolCallContext) -> Identity:
    """``caller`` = the client's name (``mcp`` when it sent none or a blank one)."""
    caller = ctx.client_name.strip() if isinstance(ctx.client_name, str) else ""
    return Identity(caller=caller or DEFAULT_CLIENT_NAME, session=ctx.session_id)


def presented_receipt(receipt: MemoryReceipt | None) -> PresentedReceipt | None:
    """The receipt argument as the service checks it (absent parts stay absent)."""
    if receipt is None:
        return None
    return PresentedReceipt(
        caller=opt(receipt.caller),
        session=opt(receipt.session),
        issued_at=opt(receipt.issuedAt),
        memory_ids=tuple(receipt.memoryIds),
        span_hashes=tuple(receipt.spanHashes),
        digest=opt(receipt.digest),
    )


def recall_text(result: dict[str, Any]) -> str:
    facts = result["facts"]
    if not facts:
        return str(result.get("hint", "No facts in scope"))
    budget = result["budget"]
    lines = [
        f"{len(facts)} facts ({budget['usedTokens']}/{budget['maxTokens']} tokens, "
        f"{budget['omitted']} omitted)"
    ]
    for fact in facts:
        lines.append(f"- {fact['text']} [{fact['uri']} hash {fact['contentHash'][:12]}]")
    return "\n".join(lines)


def remember_text(result: dict[str, Any]) -> str:
    outcome = result["outcome"]
    if outcome == "candidates":
        found = result["candidates"]
        if not found:
            return "No similar facts in scope; call again with decision add to store it."
        lines = [f"{len(found)} similar facts (nothing written):"]
        lines.extend(
            f"- [{c['match']} {c['similarity']:.2f}] {c['text']} ({c['uri']})" for c in found
        )
        return "\n".join(lines)
    record = result["record"]
    if outcome == "existing":
        return f"Already stored: {record['uri']} (nothing written)"
    return f"{outcome.capitalize()}: {record['uri']} (indexed, searchable now)"


def make_recall(runtime: Runtime) -> ToolHandler:
    def call(args: RecallInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.memory.recall(
            query=args.query,
            collection=args.collection,
            scopes=args.scopes,
            identity=identity_of(ctx),
            max_facts=args.maxFacts,
            max_tokens=args.maxTokens,
        )

    return engine_tool(runtime, call, recall_text)


def make_remember(runtime: Runtime) -> ToolHandler:
    def call(args: RememberInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.memory.remember(
            text=args.text,
            collection=args.collection,
            scopes=args.scopes,
            identity=identity_of(ctx),
            decision=opt(args.decision),
            predecessor_uri=opt(args.predecessorUri),
            predecessor_hash=opt(args.predecessorHash),
            receipt=presented_receipt(opt(args.receipt)),
            derived_from=[] if args.derivedFrom is msgspec.UNSET else list(args.derivedFrom),
            source=opt(args.source),
            cancelled=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, remember_text, write=True)


RECALL: Final = read_tool(
    "gno_recall",
    RecallInput,
    "memory-recall",
    make_recall,
    content_class="source",
    full=(
        "Recall current facts from a memory-managed collection, limited to the scopes you "
        "name and to a budget of facts and tokens (default 8 facts, 512 tokens). Each fact "
        "carries a gno:// citation and its contentHash; superseded facts drop out. Also "
        "returns a content-free receipt for gno_remember. This server runs the lexical leg, "
        "so retrieval.mode reports lexical."
    ),
    core=(
        "Call before answering about preferences, decisions, people or earlier work, and "
        "before gno_remember to find the fact a new one would supersede. Runs lexical "
        "retrieval over the current facts of a memory-managed collection, filtered to the "
        "explicit scopes you pass; superseded facts drop out. Returns cited facts with "
        "contentHash and a content-free receipt to hand to gno_remember, and an empty answer "
        "names the command that stores a first fact; the budget is 8 facts and 512 tokens "
        "by default (maxFacts up to 64, maxTokens up to 8192)."
    ),
)

REMEMBER: Final = write_tool(
    "gno_remember",
    RememberInput,
    "memory-remember",
    make_remember,
    content_class="source",
    annotations=APPEND_ONLY_WRITE,
    full=(
        "Store one fact in a memory-managed collection, or supersede an earlier one. With no "
        "decision the call only proposes candidate matches; decision=add writes a new fact, and "
        "decision=supersede replaces predecessorUri after checking predecessorHash. Documents "
        "belong in gno_capture. A written fact is keyword-searchable when the call returns."
    ),
    core=(
        "Call to store a durable preference, decision or fact; documents go to gno_capture "
        "and edits go to the note's file. Matches the text against current facts in scope: "
        "omit decision for a dry run that lists candidates, use decision add for a new fact, "
        "or decision supersede with predecessorUri and the predecessorHash from gno_recall "
        "(one successor per fact). Returns the outcome (candidates, existing, added or "
        "superseded) with the record; replayed receipt spans and gno:// origins are "
        "rejected, and a written fact is keyword-searchable when the call returns."
    ),
)

TOOLS: Final = (
    RECALL,
    REMEMBER,
)
