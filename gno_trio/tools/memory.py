"""``gno_recall`` and ``gno_remember``.

Identity never comes from arguments: ``caller`` is the client's name from
the handshake or envelope, ``session`` the transport's identity for this
connection (HTTP session, per-caller sessionless label, or the stdio
server instance). The remember adapter takes no lock of its own: the
memory service holds the shared write lease for each write. Remember is
registered only when writes are enabled, and its handler checks again, so a
mis-wired registry answers ``WRITE_DISABLED`` instead of writing.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.receipts import PresentedReceipt
from gno_trio.engine.memory.service import MemoryService
from gno_trio.runtime import Runtime
from gno_trio.server.context import DEFAULT_CLIENT_NAME, ToolCallContext
from gno_trio.server.inputs import MemoryReceipt, RecallInput, RememberInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt


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
    service = MemoryService(runtime.engine)

    def call(args: RecallInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return service.recall(
            query=args.query,
            collection=args.collection,
            scopes=args.scopes,
            identity=identity_of(ctx),
            max_facts=args.maxFacts,
            max_tokens=args.maxTokens,
            conn=conn,
        )

    return engine_tool(runtime, call, recall_text)


def make_remember(runtime: Runtime) -> ToolHandler:
    service = MemoryService(runtime.engine)

    def call(args: RememberInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return service.remember(
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
            conn=conn,
            cancelled=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, remember_text, write=True)
