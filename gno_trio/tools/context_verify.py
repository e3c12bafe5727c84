"""``gno_context_verify``: check a saved Context Capsule against the index without changing it."""

from __future__ import annotations

import json
from typing import Annotated, Any, Final, Literal

from msgspec import Meta

from gno_trio.engine import public_code
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import read_tool
from gno_trio.server.tooltypes import ToolHandler, ToolResult, tool_error
from gno_trio.tools.fields import ToolInput
from gno_trio.views.capsules import verification_markdown


class ContextVerifyInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_context_verify``."""

    capsule: Annotated[
        dict[str, Any], Meta(description="The complete Capsule gno_context returned, unmodified")
    ]
    format: Annotated[
        Literal["json", "md"],
        Meta(description="Model-visible text: the receipt as JSON, or a Markdown summary"),
    ] = "json"


def make_context_verify(runtime: Runtime) -> ToolHandler:
    async def handler(args: ContextVerifyInput, ctx: ToolCallContext) -> ToolResult:
        capsule = args.capsule

        def verify() -> dict[str, Any]:
            return runtime.engine.capsules.verify(capsule)

        try:
            receipt = await runtime.run(verify)
        except GnoError as error:
            return tool_error(public_code(error.code), error.message)
        if args.format == "md":
            text = verification_markdown(receipt)
        else:
            text = json.dumps(receipt, ensure_ascii=False, separators=(",", ":"))
        return ToolResult(text=text, structured=receipt)

    return handler


CONTEXT_VERIFY: Final = read_tool(
    "gno_context_verify",
    ContextVerifyInput,
    "context-capsule-verification",
    make_context_verify,
    content_class="capsule",
    full=(
        "Check a saved Context Capsule against the current index: for every passage whether "
        "its text is unchanged, stale or missing and whether its retrieval rank held, plus "
        "which fingerprints drifted. A malformed, edited or foreign Capsule is refused; "
        "nothing is rebuilt or stored."
    ),
)

TOOLS: Final = (CONTEXT_VERIFY,)
