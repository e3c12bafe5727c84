"""``gno_egress_policy_get``, ``gno_egress_check`` and ``gno_egress_policy_set``.

The first two are read-only views of the egress policy; the third changes one
collection's policy under the write lease, with a confirmation bound to the
revision the caller read when it relaxes the policy.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import Confirmation
from gno_trio.engine.egress_rules import EgressAction, EgressContentClass, EgressPartialMode, Zone
from gno_trio.engine.vocabulary import EGRESS_CHECK_MAX_COLLECTIONS, MAX_SAFE_INTEGER
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
from gno_trio.views.management import egress_check_text, egress_policy_set_text, egress_policy_text

CollectionName: TypeAlias = Annotated[
    str, Meta(min_length=1, max_length=64, description="Name of the collection (any letter case)")
]


class EgressPolicyGetInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_policy_get``."""

    collection: CollectionName


PolicyName: TypeAlias = Literal["local_only", "lan", "remote"]


class EgressCaller(ToolInput, forbid_unknown_fields=True):
    """Who the dry-run caller is, as far as the egress rules care."""

    authenticated: Annotated[
        bool, Meta(description="Whether the caller presented valid transport credentials")
    ]
    operationAuthorized: Annotated[
        bool,
        Meta(description="Whether the layer around the call permits this operation at all"),
    ]


class EgressCheckInput(ToolInput, kw_only=True, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_check`` (GNO's closed shape)."""

    collections: (
        Annotated[
            list[Annotated[str, Meta(min_length=1, max_length=64)]],
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
        EgressAction,
        Meta(
            description=(
                "What would happen to the content: retrieve, serve, publish, remote_inference, "
                "export or clip_write"
            )
        ),
    ]
    destinationZone: Annotated[
        Zone,
        Meta(description="Where the content would go: local_process, loopback, lan or remote"),
    ]
    caller: Annotated[EgressCaller, Meta(description="The caller's credentials and authority")]
    contentClass: Annotated[
        EgressContentClass,
        Meta(description="Kind of content that would leave (source, snippet, capsule ...)"),
    ]
    partialResults: Annotated[
        EgressPartialMode,
        Meta(
            description=(
                "deny: refuse the whole scope if any collection is refused; explicit: judge "
                "each collection alone and report the allowed part, saying what was left out"
            )
        ),
    ] = "deny"


class EgressConfirmation(ToolInput, forbid_unknown_fields=True):
    """What the caller read with ``gno_egress_policy_get`` before relaxing a policy."""

    collection: Annotated[
        str, Meta(min_length=1, max_length=64, description="The collection being changed")
    ]
    currentPolicy: Annotated[PolicyName, Meta(description="The effective policy the caller read")]
    currentRevision: Annotated[
        int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="The revision the caller read")
    ]
    targetPolicy: Annotated[PolicyName, Meta(description="The policy being confirmed")]
    acknowledged: Annotated[
        Literal[True],
        Meta(description="Must be true: the caller accepts that content may travel further"),
    ]


class EgressPolicySetInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_policy_set``."""

    collection: CollectionName
    policy: Annotated[
        PolicyName, Meta(description="The policy to apply: local_only, lan or remote")
    ]
    confirmation: (
        Annotated[
            EgressConfirmation,
            Meta(
                description=(
                    "Required to relax the policy (not to tighten it): the collection, the "
                    "current policy and revision as read, the target policy, acknowledged=true"
                )
            ),
        ]
        | UnsetType
    ) = UNSET


def make_egress_policy_get(runtime: Runtime) -> ToolHandler:
    def call(args: EgressPolicyGetInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.policy(args.collection)

    return engine_tool(runtime, call, egress_policy_text)


def make_egress_check(runtime: Runtime) -> ToolHandler:
    def call(args: EgressCheckInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.check(
            requested=opt(args.collections),
            zone=args.destinationZone,
            authenticated=args.caller.authenticated,
            operation_authorized=args.caller.operationAuthorized,
            content_class=args.contentClass,
            action=args.action,
            partial_results=args.partialResults,
        )

    return engine_tool(runtime, call, egress_check_text)


def _confirmation(value: EgressConfirmation | None) -> Confirmation | None:
    if value is None:
        return None
    return Confirmation(
        current_policy=value.currentPolicy,
        current_revision=value.currentRevision,
        acknowledged=value.acknowledged,
        collection=value.collection,
        target_policy=value.targetPolicy,
    )


def make_egress_policy_set(runtime: Runtime) -> ToolHandler:

    def call(args: EgressPolicySetInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.set_policy(
            args.collection,
            args.policy,
            _confirmation(opt(args.confirmation)),
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, egress_policy_set_text, write=True)


EGRESS_POLICY_GET: Final = read_tool(
    "gno_egress_policy_get",
    EgressPolicyGetInput,
    "collection-egress-policy",
    make_egress_policy_get,
    content_class="metadata",
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
    content_class="metadata",
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
    content_class="metadata",
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
