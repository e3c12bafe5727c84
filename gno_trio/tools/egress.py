"""``gno_egress_policy_get``, ``gno_egress_check`` and ``gno_egress_policy_set``.

The first two are read-only views of the egress policy; the third changes one
collection's policy under the write lease, with a confirmation bound to the
revision the caller read when it relaxes the policy.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any, Final, Literal

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import EGRESS_CHECK_MAX_COLLECTIONS, MAX_SAFE_INTEGER, Confirmation
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
    write_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    ToolInput,
)


class EgressPolicyGetInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_policy_get``."""

    collection: Annotated[
        str, Meta(min_length=1, description="Name of the collection (any letter case)")
    ]


class EgressCaller(ToolInput, forbid_unknown_fields=True):
    """Who the dry-run caller is, as far as the egress rules care."""

    authenticated: Annotated[
        bool, Meta(description="Whether the caller presented valid transport credentials")
    ] = False


class EgressCheckInput(ToolInput, kw_only=True, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_check``."""

    collections: (
        Annotated[
            list[Annotated[str, Meta(min_length=1)]],
            Meta(
                min_length=1,
                max_length=EGRESS_CHECK_MAX_COLLECTIONS,
                description=(
                    "Collections in scope, each named once (1-64); omit for every configured "
                    "collection"
                ),
            ),
        ]
        | UnsetType
    ) = UNSET
    action: Annotated[
        Literal["serve"], Meta(description="What would happen to the content (only serve)")
    ] = "serve"
    destinationZone: Annotated[
        Literal["loopback", "lan", "remote"],
        Meta(description="Network zone of the peer the content would go to"),
    ]
    caller: Annotated[EgressCaller, Meta(description="The caller's credentials")] | UnsetType = (
        UNSET
    )
    contentClass: Annotated[
        Literal["source", "snippet", "capsule", "metadata", "audit_log", "retrieval_trace"],
        Meta(description="Kind of content that would be served"),
    ] = "metadata"
    partial: Annotated[
        bool,
        Meta(description="Judge each collection alone and serve the allowed ones (partial result)"),
    ] = False


class EgressConfirmation(ToolInput, forbid_unknown_fields=True):
    """What the caller read with ``gno_egress_policy_get`` before relaxing a policy."""

    currentPolicy: Annotated[
        Literal["local_only", "lan", "remote"],
        Meta(description="The effective policy the caller read"),
    ]
    currentRevision: Annotated[
        int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="The revision the caller read")
    ]
    acknowledged: Annotated[
        bool, Meta(description="Must be true: the caller accepts that content may travel further")
    ]
    collection: (
        Annotated[str, Meta(min_length=1, description="When given, must be the same collection")]
        | UnsetType
    ) = UNSET
    targetPolicy: (
        Annotated[
            Literal["local_only", "lan", "remote"],
            Meta(description="When given, must be the same target policy"),
        ]
        | UnsetType
    ) = UNSET


class EgressPolicySetInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_policy_set``."""

    collection: Annotated[
        str, Meta(min_length=1, description="Name of the collection (any letter case)")
    ]
    targetPolicy: Annotated[
        Literal["local_only", "lan", "remote"],
        Meta(description="The policy to apply: local_only, lan or remote"),
    ]
    confirmation: (
        Annotated[
            EgressConfirmation,
            Meta(description="Required to relax the policy; not needed to tighten it"),
        ]
        | UnsetType
    ) = UNSET


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
        return runtime.engine.egress_policy(args.collection)

    return engine_tool(runtime, call, policy_text)


def make_egress_check(runtime: Runtime) -> ToolHandler:
    def call(
        args: EgressCheckInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        caller = opt(args.caller)
        return runtime.engine.egress_check(
            requested=opt(args.collections),
            zone=args.destinationZone,
            authenticated=caller is not None and caller.authenticated,
            content_class=args.contentClass,
            action=args.action,
            partial=args.partial,
        )

    return engine_tool(runtime, call, check_text)


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

    def call(
        args: EgressPolicySetInput, ctx: ToolCallContext, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        return runtime.engine.set_egress_policy(
            args.collection,
            args.targetPolicy,
            _confirmation(opt(args.confirmation)),
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, policy_set_text, write=True)


EGRESS_POLICY_GET: Final = read_tool(
    "gno_egress_policy_get",
    EgressPolicyGetInput,
    "collection-egress-policy",
    make_egress_policy_get,
    full=(
        "Report the egress policy of one collection: the configured value, the value in "
        "effect, where it comes from, and the revision a change has to confirm."
    ),
)

EGRESS_CHECK: Final = read_tool(
    "gno_egress_check",
    EgressCheckInput,
    "collection-egress-check",
    make_egress_check,
    full=(
        "Dry-run an egress decision: for given collections, action, destination zone, caller "
        "and content class, report whether it would be allowed and why. Nothing is sent."
    ),
)

EGRESS_POLICY_SET: Final = write_tool(
    "gno_egress_policy_set",
    EgressPolicySetInput,
    "collection-egress-policy-set",
    make_egress_policy_set,
    full=(
        "Change one collection's egress policy. Relaxing a policy requires a confirmation "
        "that names the current policy and its revision."
    ),
)

TOOLS: Final = (
    EGRESS_POLICY_GET,
    EGRESS_CHECK,
    EGRESS_POLICY_SET,
)
