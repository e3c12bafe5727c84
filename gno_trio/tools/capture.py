"""``gno_capture``: the MCP face of :func:`gno_trio.engine.capture.capture`.

The adapter only translates: wire arguments into a
:class:`~gno_trio.engine.capture.CaptureRequest`, the receipt into a short
summary for the model. The engine takes the write lease itself, so the
adapter holds no lock. The tool is registered only when writes are enabled;
the handler checks again so a mis-wired registry cannot write by accident.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from gno_trio.engine.capture import CaptureRequest, capture
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import CaptureInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt, seq

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
    def call(args: CaptureInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return capture(
            runtime.engine,
            request_from(args),
            server_instance_id=runtime.instance_id,
            conn=conn,
        )

    return engine_tool(runtime, call, capture_text, write=True)
