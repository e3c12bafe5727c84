"""``gno_context``: compile one budgeted evidence Capsule for a goal.

``structuredContent`` is the complete Capsule for the application; the text a
model reads is the compact ``gno-context-agent-v1`` projection of the same
Capsule, never the Capsule twice. Failures use the Context error taxonomy and
its text form ``Error [code]: message`` (unlike other tools' ``Error:``), so a
client can branch on the code without parsing the message.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from gno_trio.engine.context import (
    ContextRequest,
    agent_projection_text,
    compile_capsule,
    public_code,
)
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import ContextInput
from gno_trio.server.tooltypes import ToolHandler, ToolResult
from gno_trio.tools.common import opt, seq

logger = logging.getLogger("gno_trio.mcp")


def context_error(code: str, message: str) -> ToolResult:
    """A failed compile as the client sees it."""
    return ToolResult(
        text=f"Error [{code}]: {message}",
        structured={"error": code, "message": message},
        is_error=True,
    )


def context_request(args: ContextInput) -> ContextRequest:
    """MCP arguments as an engine request; ``format`` and ``projectHints`` change nothing."""
    return ContextRequest(
        goal=args.goal,
        budget_tokens=args.budgetTokens,
        query=opt(args.query),
        collections=seq(args.collections),
        uri_prefix=opt(args.uriPrefix),
        query_modes=tuple((m.mode, m.text) for m in opt(args.queryModes) or ()),
        tags_all=seq(args.tagsAll),
        tags_any=seq(args.tagsAny),
        categories=seq(args.categories),
        exclude=seq(args.exclude),
        author=opt(args.author),
        lang=opt(args.lang),
        intent=opt(args.intent),
        min_score=opt(args.minScore),
        since=opt(args.since),
        until=opt(args.until),
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
        engine = runtime.engine
        request = context_request(args)

        def call(conn: sqlite3.Connection) -> dict[str, Any]:
            return compile_capsule(conn, engine.config, engine.location.index_name, request)

        try:
            capsule = await runtime.run(call)
        except GnoError as error:
            return context_error(public_code(error.code), error.message)
        except Exception as exc:  # the taxonomy's catch-all; the cause goes to the log
            logger.exception("gno_context failed")
            return context_error("runtime_error", str(exc) or type(exc).__name__)
        return ToolResult(text=agent_projection_text(capsule), structured=capsule)

    return handler
