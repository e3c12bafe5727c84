"""``gno_audit``: the offline, read-only knowledge-integrity audit (``audit-report@1.0``)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine.vocabulary import MAX_SAFE_INTEGER
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import read_tool
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import ToolInput
from gno_trio.views.management import audit_text

Names: TypeAlias = Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=256)]


class AuditInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_audit``."""

    category: Annotated[
        Literal["links", "provenance", "freshness", "all"],
        Meta(description="Which checks to run: links, provenance, freshness or all"),
    ] = "all"
    collections: Annotated[Names, Meta(description="Only these collections (default: all)")] = (
        msgspec.field(default_factory=list)
    )
    paths: Annotated[
        Names, Meta(description="Only documents under these path or gno:// URI prefixes")
    ] = msgspec.field(default_factory=list)
    tags: Annotated[Names, Meta(description="Only documents carrying any of these tags")] = (
        msgspec.field(default_factory=list)
    )
    maxFindings: Annotated[
        int, Meta(ge=1, le=1000, description="Most findings returned (1-1000); totals stay exact")
    ] = 100
    maxAgeDays: (
        Annotated[
            int,
            Meta(ge=1, le=MAX_SAFE_INTEGER, description="Flag notes not modified for this long"),
        ]
        | UnsetType
    ) = UNSET
    orphanRoots: Annotated[
        Names, Meta(description="Notes every other note should be reachable from by links")
    ] = msgspec.field(default_factory=list)
    orphanIgnorePrefixes: Annotated[
        Names, Meta(description="gno:// prefixes exempt from the orphan check")
    ] = msgspec.field(default_factory=list)


def make_audit(runtime: Runtime) -> ToolHandler:
    def call(args: AuditInput, ctx: ToolCallContext) -> Any:
        return runtime.engine.index.audit(
            category=args.category,
            collections=args.collections,
            paths=args.paths,
            tags=args.tags,
            max_findings=args.maxFindings,
            max_age_days=opt(args.maxAgeDays),
            orphan_roots=args.orphanRoots,
            orphan_ignore_prefixes=args.orphanIgnorePrefixes,
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, audit_text)


AUDIT: Final = read_tool(
    "gno_audit",
    AuditInput,
    "audit-report",
    make_audit,
    content_class="metadata",
    full=(
        "Run offline, read-only integrity checks over indexed notes: links that resolve nowhere "
        "(and, given orphanRoots, notes nothing reaches), invalid declared provenance, and "
        "notes whose files changed since indexing (or, given maxAgeDays, went stale). Returns "
        "per-rule status, stable finding IDs and exact totals; it repairs nothing."
    ),
)

TOOLS: Final = (AUDIT,)
