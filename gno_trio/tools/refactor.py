"""``gno_rename_note`` and ``gno_move_note``: reference-safe refactors, previewed then applied.

Both take ``action: preview`` (a content-free plan with a ``planDigest``) or
``action: apply`` with that digest, ``schemaVersion: "1.0"``,
``confirmation: "apply"`` and ``confirm: true``; an apply that lacks any of
them, or a preview that carries them, is refused before anything is read
or written. GNO's schema is a ``oneOf`` of those two closed shapes; it is
published here as one closed object and the branches are checked by the
handler, so the client sees the same bounds it is held to.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from msgspec import UNSET, Meta, UnsetType

from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import DESTRUCTIVE_WRITE, write_tool
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import ToolInput

_APPLY_FIELDS: Final = ("schemaVersion", "planDigest", "confirmation", "confirm")


class RefactorInput(ToolInput, kw_only=True, forbid_unknown_fields=True):
    """The fields both refactor tools share."""

    action: Annotated[
        Literal["preview", "apply"],
        Meta(description="preview: compute the plan; apply: carry out the previewed plan"),
    ]
    ref: Annotated[
        str, Meta(min_length=1, description="The note: gno:// URI, collection/path or #docid")
    ]
    schemaVersion: Annotated[Literal["1.0"], Meta(description='apply: "1.0"')] | UnsetType = UNSET
    planDigest: (
        Annotated[
            str, Meta(pattern="^[a-f0-9]{64}$", description="apply: the preview's planDigest")
        ]
        | UnsetType
    ) = UNSET
    confirmation: Annotated[Literal["apply"], Meta(description='apply: "apply"')] | UnsetType = (
        UNSET
    )
    confirm: Annotated[Literal[True], Meta(description="apply: true")] | UnsetType = UNSET

    def apply_digest(self) -> str | None:
        """The digest to apply, None for a preview; refuses a mixed or partial request."""
        given = [name for name in _APPLY_FIELDS if getattr(self, name) is not UNSET]
        if self.action == "preview":
            if given:
                raise GnoError(
                    "INVALID_INPUT", f"A preview takes no {', '.join(given)}; they belong to apply"
                )
            return None
        missing = [name for name in _APPLY_FIELDS if name not in given]
        if missing:
            raise GnoError(
                "INVALID_INPUT",
                f"apply needs {', '.join(missing)}: send the preview's planDigest with "
                'schemaVersion "1.0", confirmation "apply" and confirm true',
            )
        return str(self.planDigest)


class RenameNoteInput(RefactorInput, kw_only=True, forbid_unknown_fields=True):
    """Arguments of ``gno_rename_note``."""

    name: Annotated[
        str,
        Meta(min_length=1, description="New file name in the same folder (extension optional)"),
    ]


class MoveNoteInput(RefactorInput, kw_only=True, forbid_unknown_fields=True):
    """Arguments of ``gno_move_note``."""

    folderPath: Annotated[
        str,
        Meta(description='Destination folder in the same collection ("" for its root)'),
    ]
    name: (
        Annotated[str, Meta(min_length=1, description="New file name (default: keep it)")]
        | UnsetType
    ) = UNSET


def refactor_text(result: dict[str, Any]) -> str:
    source, target = result["source"]["uri"], result["target"]["uri"]
    if "status" in result:
        lines = [f"{result['operation'].capitalize()} {source} -> {target}: {result['status']}"]
        if "reasonCode" in result:
            lines.append(f"Reason: {result['reasonCode']}")
        lines.append(
            f"Files: {result['filesystem']['state']}; index: {result['indexConvergence']['state']}"
        )
        if "recoveryInstruction" in result["indexConvergence"]:
            lines.append(result["indexConvergence"]["recoveryInstruction"])
        return "\n".join(lines)
    safety = result["safety"]
    verdict = "can be applied" if result["canApply"] else "cannot be applied"
    lines = [
        f"Plan to {result['operation']} {source} -> {target} ({verdict}): "
        f"{safety['rewriteableCount']} references rewritten in "
        f"{len(result['affectedDocuments'])} notes, {safety['unchangedCount']} unchanged, "
        f"{safety['ambiguousCount']} ambiguous"
    ]
    if safety["blockingReasonCodes"]:
        lines.append("Blocked by: " + ", ".join(safety["blockingReasonCodes"]))
    for ref in result["examinedReferences"]:
        if "proposedDestination" in ref:
            lines.append(
                f"  {ref['documentUri']}:{ref['startLine']} {ref['originalDestination']} -> "
                f"{ref['proposedDestination']}"
            )
    if result["canApply"]:
        lines.append(f"planDigest: {result['planDigest']}")
    return "\n".join(lines)


def _handler(runtime: Runtime, operation: str) -> ToolHandler:
    def call(args: RenameNoteInput | MoveNoteInput, ctx: ToolCallContext) -> Any:
        digest = args.apply_digest()
        if isinstance(args, MoveNoteInput):
            name, folder = opt(args.name), args.folderPath
        else:
            name, folder = args.name, None
        return runtime.engine.notes.refactor(
            operation,
            args.ref,
            name=name,
            folder_path=folder,
            apply_digest=digest,
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, refactor_text, write=True)


def make_rename(runtime: Runtime) -> ToolHandler:
    return _handler(runtime, "rename")


def make_move(runtime: Runtime) -> ToolHandler:
    return _handler(runtime, "move")


RENAME_NOTE: Final = write_tool(
    "gno_rename_note",
    RenameNoteInput,
    "file-refactor-result",
    make_rename,
    content_class="metadata",
    full=(
        "Rename an editable note in its folder and rewrite the wiki and Markdown links that "
        "point at it, in two calls: action=preview returns the plan (every reference found, "
        "its classification and exact edit, a planDigest and canApply); action=apply carries "
        'out exactly that plan given planDigest, schemaVersion="1.0", confirmation="apply" '
        "and confirm=true, changing all files or none, then re-indexes."
    ),
    annotations=DESTRUCTIVE_WRITE,
)

MOVE_NOTE: Final = write_tool(
    "gno_move_note",
    MoveNoteInput,
    "file-refactor-result",
    make_move,
    content_class="metadata",
    full=(
        "Move an editable note to another folder of its collection (optionally renaming it) "
        "and rewrite the links that point at it and its own relative links, with the same "
        "preview-then-apply steps and all-or-nothing commit as gno_rename_note; moves to "
        "another collection are refused."
    ),
    annotations=DESTRUCTIVE_WRITE,
)

TOOLS: Final = (RENAME_NOTE, MOVE_NOTE)
