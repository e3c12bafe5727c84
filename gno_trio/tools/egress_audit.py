"""The five ``gno_egress_audit_*`` tools: read and delete content-free decision receipts.

Three read (a newest-first page, one receipt, the log's retention and size)
and two delete (one receipt, or every receipt with ``confirm: true``); the
deletions are write tools behind the write gate and the engine's lease. All
inputs are closed objects, as GNO's are.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

from msgspec import UNSET, Meta, UnsetType

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import NO_HINTS, read_tool, write_tool
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import ToolInput
from gno_trio.views.management import (
    egress_audit_list_text,
    egress_audit_removal_text,
    egress_audit_show_text,
    egress_audit_status_text,
)

AuditId: TypeAlias = Annotated[
    str, Meta(min_length=1, max_length=128, description="Receipt ID from gno_egress_audit_list")
]


class EgressAuditListInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_audit_list``."""

    limit: Annotated[int, Meta(ge=1, le=1000, description="Receipts per page (1-1000)")] = 100
    cursor: (
        Annotated[
            str,
            Meta(min_length=1, max_length=512, description="nextCursor of the previous page"),
        ]
        | UnsetType
    ) = UNSET


class EgressAuditIdInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_audit_show`` and ``gno_egress_audit_delete``."""

    auditId: AuditId


class EgressAuditStatusInput(ToolInput, forbid_unknown_fields=True):
    """``gno_egress_audit_status`` takes no arguments."""


class EgressAuditPurgeInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_audit_purge``."""

    confirm: Annotated[Literal[True], Meta(description="Must be true: every receipt is deleted")]


def make_list(runtime: Runtime) -> ToolHandler:
    def call(args: EgressAuditListInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.audit_list(limit=args.limit, cursor=opt(args.cursor))

    return engine_tool(runtime, call, egress_audit_list_text)


def make_show(runtime: Runtime) -> ToolHandler:
    def call(args: EgressAuditIdInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.audit_show(args.auditId)

    return engine_tool(runtime, call, egress_audit_show_text)


def make_status(runtime: Runtime) -> ToolHandler:
    def call(args: EgressAuditStatusInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.audit_status()

    return engine_tool(runtime, call, egress_audit_status_text)


def make_delete(runtime: Runtime) -> ToolHandler:
    def call(args: EgressAuditIdInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.audit_delete(
            args.auditId, should_stop=lambda: ctx.cancellation.is_cancelled
        )

    return engine_tool(runtime, call, egress_audit_removal_text, write=True)


def make_purge(runtime: Runtime) -> ToolHandler:
    def call(args: EgressAuditPurgeInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.egress.audit_purge(should_stop=lambda: ctx.cancellation.is_cancelled)

    return engine_tool(runtime, call, egress_audit_removal_text, write=True)


EGRESS_AUDIT_LIST: Final = read_tool(
    "gno_egress_audit_list",
    EgressAuditListInput,
    "egress-audit-list",
    make_list,
    content_class="audit_log",
    full=(
        "List the receipts of egress decisions the engine enforced, newest first, one cursor "
        "page at a time. A receipt holds the verdict, action, destination zone, content class, "
        "binding policy and reason code; never content, queries or paths."
    ),
)

EGRESS_AUDIT_SHOW: Final = read_tool(
    "gno_egress_audit_show",
    EgressAuditIdInput,
    "egress-audit-show",
    make_show,
    content_class="audit_log",
    full="Show one egress decision receipt by its audit ID (content free).",
)

EGRESS_AUDIT_STATUS: Final = read_tool(
    "gno_egress_audit_status",
    EgressAuditStatusInput,
    "egress-audit-status",
    make_status,
    content_class="audit_log",
    full=(
        "Report the egress receipt log: how many receipts and bytes it holds, the oldest and "
        "newest, and the age, count and size bounds it is kept within."
    ),
)

EGRESS_AUDIT_DELETE: Final = write_tool(
    "gno_egress_audit_delete",
    EgressAuditIdInput,
    "egress-audit-delete",
    make_delete,
    content_class="audit_log",
    full=(
        "Delete one egress decision receipt and report whether its pages were also cleaned "
        "from the database file."
    ),
    annotations=NO_HINTS,
)

EGRESS_AUDIT_PURGE: Final = write_tool(
    "gno_egress_audit_purge",
    EgressAuditPurgeInput,
    "egress-audit-purge",
    make_purge,
    content_class="audit_log",
    full=(
        "Delete every egress decision receipt (nothing else) when called with confirm=true, and "
        "report how many went and whether the database file was cleaned."
    ),
)

TOOLS: Final = (
    EGRESS_AUDIT_LIST,
    EGRESS_AUDIT_SHOW,
    EGRESS_AUDIT_STATUS,
    EGRESS_AUDIT_DELETE,
    EGRESS_AUDIT_PURGE,
)
