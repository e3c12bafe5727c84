"""``gno_capture``: the MCP face of ``Engine.capture``.

The adapter only translates: wire arguments into a ``CaptureRequest``, the
receipt into a short summary for the model. The engine takes the write lease
itself, so the adapter holds no lock. The tool is registered only when writes
are enabled; the handler checks again so a mis-wired registry cannot write by
accident.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import CaptureRequest
from gno_trio.engine.vocabulary import CAPTURE_MAX_TEXT_BYTES
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    APPEND_ONLY_WRITE,
    write_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt, seq
from gno_trio.tools.fields import (
    ToolInput,
)

CollisionPolicy: TypeAlias = Literal["error", "open_existing", "create_with_suffix"]

NotePreset: TypeAlias = Literal[
    "blank",
    "project-note",
    "research-note",
    "decision-note",
    "prompt-pattern",
    "source-summary",
    "idea-original",
    "person",
    "company-project",
    "meeting",
]

CaptureSourceKind: TypeAlias = Literal[
    "direct", "web", "email", "meeting", "chat", "file", "api", "unknown"
]


class CaptureSource(ToolInput):
    """Provenance written under the ``source:`` frontmatter of a captured note."""

    kind: (
        Annotated[CaptureSourceKind, Meta(description="Where the captured text came from")]
        | UnsetType
    ) = UNSET
    title: Annotated[str, Meta(description="Title of the source")] | UnsetType = UNSET
    url: Annotated[str, Meta(description="URL of the source")] | UnsetType = UNSET
    uri: Annotated[str, Meta(description="URI of the source")] | UnsetType = UNSET
    docid: Annotated[str, Meta(description="GNO docid of the source")] | UnsetType = UNSET
    mime: Annotated[str, Meta(description="MIME type of the source")] | UnsetType = UNSET
    ext: Annotated[str, Meta(description="File extension of the source")] | UnsetType = UNSET
    author: Annotated[str, Meta(description="Author of the source")] | UnsetType = UNSET
    observedAt: (
        Annotated[str, Meta(description="When the source was seen (ISO 8601)")] | UnsetType
    ) = UNSET
    capturedAt: (
        Annotated[str, Meta(description="Capture time to record in place of now (ISO 8601)")]
        | UnsetType
    ) = UNSET
    externalId: (
        Annotated[str, Meta(description="Identifier of the source in its own system")] | UnsetType
    ) = UNSET


class CaptureInput(ToolInput):
    """Arguments of ``gno_capture`` (create one new document)."""

    collection: Annotated[
        str, Meta(min_length=1, description="Existing collection that receives the document")
    ]
    content: (
        Annotated[
            str,
            Meta(
                max_length=CAPTURE_MAX_TEXT_BYTES,
                description="Markdown or plain text body; optional when presetId supplies one",
            ),
        ]
        | UnsetType
    ) = UNSET
    title: (
        Annotated[str, Meta(description="Document title; derived from the content when omitted")]
        | UnsetType
    ) = UNSET
    path: (
        Annotated[
            str,
            Meta(
                description=(
                    "Path inside the collection, such as 'notes/meeting.md'; generated when omitted"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    folderPath: (
        Annotated[str, Meta(description="Folder inside the collection for a generated name")]
        | UnsetType
    ) = UNSET
    collisionPolicy: (
        Annotated[
            CollisionPolicy, Meta(description="What to do when the target path already exists")
        ]
        | UnsetType
    ) = UNSET
    presetId: Annotated[NotePreset, Meta(description="Note scaffold to start from")] | UnsetType = (
        UNSET
    )
    overwrite: Annotated[
        bool, Meta(description="Replace a file that already exists at path (legacy switch)")
    ] = False
    tags: Annotated[list[str], Meta(description="Tags for the new document")] | UnsetType = UNSET
    source: (
        Annotated[
            CaptureSource,
            Meta(description="Provenance recorded under the note's source frontmatter"),
        ]
        | UnsetType
    ) = UNSET


_RESULT_VERBS = {
    "created": "Created",
    "created_with_suffix": "Created (name was taken, suffix added)",
    "opened_existing": "Opened existing",
    "overwritten": "Overwrote",
}


def request_from(args: CaptureInput) -> CaptureRequest:
    source = opt(args.source)
    provenance = (
        None
        if source is None
        else {
            name: value
            for name, value in msgspec.structs.asdict(source).items()
            if value is not msgspec.UNSET
        }
    )
    return CaptureRequest(
        collection=args.collection,
        content=opt(args.content),
        title=opt(args.title),
        path=opt(args.path),
        folder_path=opt(args.folderPath),
        collision_policy=opt(args.collisionPolicy),
        preset_id=opt(args.presetId),
        overwrite=args.overwrite,
        tags=seq(args.tags),
        source=provenance,
    )


def capture_text(receipt: dict[str, Any]) -> str:
    """What the model reads: where the note is and whether search can see it yet."""
    verb = _RESULT_VERBS.get(receipt["collisionPolicyResult"], "Captured")
    lines = [f"{verb}: {receipt['uri']} ({receipt['docid']})", f"Path: {receipt['absPath']}"]
    sync = receipt["sync"]
    if sync["status"] == "completed":
        lines.append("Keyword index: updated, the note is searchable now")
    else:
        lines.append(f"Keyword index: {sync['status']} ({sync.get('error', 'no details')})")
    lines.append("Embedding: not requested (run gno_embed or gno_index for vector search)")
    if receipt["tags"]:
        lines.append("Tags: " + ", ".join(receipt["tags"]))
    return "\n".join(lines)


def make_capture(runtime: Runtime) -> ToolHandler:
    def call(args: CaptureInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.notes.capture(
            request_from(args),
            server_instance_id=runtime.instance_id,
        )

    return engine_tool(runtime, call, capture_text, write=True)


CAPTURE: Final = write_tool(
    "gno_capture",
    CaptureInput,
    "mcp-capture-result",
    make_capture,
    content_class="metadata",
    annotations=APPEND_ONLY_WRITE,
    full=(
        "Create a new document in an existing collection: write the file with source "
        "provenance frontmatter, then sync it into the keyword index. Embedding is a separate "
        "step; run gno_embed or gno_index before vector search can see the document. "
        "collisionPolicy decides what happens when the target path is taken."
    ),
    core=(
        "Call to keep new text as a document in a collection. Writes a new file with source "
        "provenance frontmatter under the write lock and syncs it into the keyword index. "
        "Returns a receipt with uri, docid, path, contentHash and the sync and embed states; "
        "collisionPolicy (error, open_existing, create_with_suffix) settles a name clash, "
        "and vector search sees the note after a separate embedding step (gno_embed or "
        "gno_index)."
    ),
)

TOOLS: Final = (CAPTURE,)
