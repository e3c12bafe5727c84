"""``gno_egress_policy_get`` and ``gno_egress_check``: read-only egress policy views."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio import egress_explain
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import EgressCheckInput, EgressPolicyGetInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt


def policy_text(result: dict[str, Any]) -> str:
    configured = result["configuredPolicy"] or "not set"
    return (
        f"Collection {result['collection']}: egress policy {result['effectivePolicy']} "
        f"(configured: {configured}, source: {result['source']}, "
        f"revision {result['revision']})"
    )


def check_text(result: dict[str, Any]) -> str:
    decision = result["decision"]
    verdict = "allowed" if decision["allowed"] else "denied"
    lines = [
        f"Egress {result['mode']}: {verdict} ({decision['reason']}), effective policy "
        f"{result['lineage']['effectivePolicy']}"
    ]
    if result["allowedCollections"]:
        lines.append(f"  served: {', '.join(result['allowedCollections'])}")
    for entry in result["omittedCollections"]:
        lines.append(f"  omitted: {entry['collection']} ({entry['reason']})")
    if result["remediation"] is not None:
        lines.append(f"  remedy: {result['remediation']['message']}")
    return "\n".join(lines)


def make_egress_policy_get(runtime: Runtime) -> ToolHandler:
    def call(
        args: EgressPolicyGetInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return egress_explain.policy_state(runtime.engine.config.collections, args.collection)

    return engine_tool(runtime, call, policy_text)


def make_egress_check(runtime: Runtime) -> ToolHandler:
    def call(
        args: EgressCheckInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        caller = opt(args.caller)
        return egress_explain.check(
            runtime.engine.config.collections,
            requested=opt(args.collections),
            zone=args.destinationZone,
            authenticated=caller is not None and caller.authenticated,
            content_class=args.contentClass,
            action=args.action,
            partial=args.partial,
        )

    return engine_tool(runtime, call, check_text)
