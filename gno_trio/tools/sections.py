"""``gno_section``: create or resolve a durable section target in one indexed document.

GNO publishes one closed object (the MCP SDK cannot publish a union); the
action branches are enforced by the engine: create takes exactly one of
``anchor`` and ``line``, resolve takes ``target``. The model-visible text
carries the structured answer as JSON for hosts that ignore
``structuredContent``, plus the ``gno_get`` follow-up when there is a
citation to read.
"""

from __future__ import annotations

import json
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

Text512: TypeAlias = Annotated[str, Meta(min_length=1, max_length=512)]
Sha256: TypeAlias = Annotated[str, Meta(pattern="^[a-f0-9]{64}$")]
Positive: TypeAlias = Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER)]
Offset: TypeAlias = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]


class TargetDocument(ToolInput, forbid_unknown_fields=True):
    uri: Annotated[str, Meta(min_length=1, max_length=1024)]


class TargetQuote(ToolInput, forbid_unknown_fields=True):
    exact: Annotated[str, Meta(max_length=96)]
    prefix: Annotated[str, Meta(max_length=32)]
    suffix: Annotated[str, Meta(max_length=32)]


class TargetHints(ToolInput, forbid_unknown_fields=True):
    line: Positive
    startOffset: Offset
    endOffset: Offset


class SectionTarget(ToolInput, forbid_unknown_fields=True):
    """``SectionTargetV1`` as ``action=create`` returned it."""

    schemaVersion: Literal["1"]
    document: TargetDocument
    anchor: Text512
    headingPath: Annotated[list[Text512], Meta(min_length=1, max_length=6)]
    occurrence: Positive
    quote: TargetQuote
    sourceFingerprint: Sha256
    hints: TargetHints


class SectionInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_section``."""

    action: Annotated[
        Literal["create", "resolve"],
        Meta(description="create: a target for one heading; resolve: find a target's section"),
    ]
    ref: Annotated[
        str,
        Meta(
            min_length=1,
            max_length=2048,
            description="Document reference: gno:// URI, collection/path, or #docid",
        ),
    ]
    anchor: (
        Annotated[str, Meta(min_length=1, max_length=512, description="create: heading anchor")]
        | UnsetType
    ) = UNSET
    line: (
        Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="create: heading line")]
        | UnsetType
    ) = UNSET
    target: (
        Annotated[SectionTarget, Meta(description="resolve: the target create returned")]
        | UnsetType
    ) = UNSET


def section_text(result: dict[str, Any]) -> str:
    lines = []
    citation = result.get("citation")
    if result["action"] == "create":
        lines.append(f"Section target for {result['uri']}#{result['target']['anchor']}")
    elif citation is not None:
        lines.append(
            f"Resolved ({result['status']}) to {citation['uri']}#{citation['anchor']}, lines "
            f"{citation['lineStart']}-{citation['lineEnd']}; read them with gno_get "
            f"fromLine={citation['lineStart']} "
            f"lineCount={citation['lineEnd'] - citation['lineStart'] + 1}"
        )
    else:
        lines.append(
            f"Not resolved ({result['status']}): this section is not safe to cite or navigate to"
        )
    lines.append(json.dumps(result, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines)


def make_section(runtime: Runtime) -> ToolHandler:
    def call(args: SectionInput, ctx: ToolCallContext) -> Any:
        target = opt(args.target)
        return runtime.engine.documents.section(
            args.action,
            args.ref,
            anchor=opt(args.anchor),
            line=opt(args.line),
            target=msgspec.to_builtins(target) if target is not None else None,
        )

    return engine_tool(runtime, call, section_text)


SECTION: Final = read_tool(
    "gno_section",
    SectionInput,
    "section",
    make_section,
    content_class="metadata",
    full=(
        "Make a durable, content-derived target for one heading of an indexed document "
        "(action=create with ref and anchor or line), or find where a saved target's section "
        "is now (action=resolve with ref and target). exact and recovered answers carry a "
        "citation (uri, anchor, title, line range, fingerprint) to read with gno_get; "
        "ambiguous, stale and missing ones carry none and must not be cited."
    ),
)

TOOLS: Final = (SECTION,)
