"""``gno_egress_policy_set``: change a collection's egress policy under the write lease."""

from __future__ import annotations

import sqlite3
from typing import Any

from gno_trio.egress_set import Confirmation, set_policy
from gno_trio.engine.locks import write_lease
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import EgressConfirmation, EgressPolicySetInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt


def _confirmation(value: EgressConfirmation | None) -> Confirmation | None:
    if value is None:
        return None
    return Confirmation(
        current_policy=value.currentPolicy,
        current_revision=value.currentRevision,
        acknowledged=value.acknowledged,
        collection=opt(value.collection),
        target_policy=opt(value.targetPolicy),
    )


def policy_set_text(result: dict[str, Any]) -> str:
    before, after = result["previous"], result["current"]
    return (
        f"Collection {after['collection']}: egress policy {result['change']} "
        f"({before['effectivePolicy']} -> {after['effectivePolicy']}, "
        f"revision {before['revision']} -> {after['revision']})"
    )


def make_egress_policy_set(runtime: Runtime) -> ToolHandler:
    engine = runtime.engine

    def call(
        args: EgressPolicySetInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        with write_lease(
            engine.location.dirs.write_lock,
            should_stop=lambda: ctx.cancellation.is_cancelled,
        ):
            return set_policy(
                engine, args.collection, args.targetPolicy, _confirmation(opt(args.confirmation))
            )

    return engine_tool(runtime, call, policy_set_text, write=True)
