"""A tiny MCP app over the real stdio transport, for wire tests and the stdio benchmark.

Run as ``python -m tests.support.mcp_echo_app`` (from the repository root) or
``python tests/support/mcp_echo_app.py``. Tools:

* ``echo`` - returns its text plus what the server knows about the caller;
* ``slow`` - sleeps in steps, reporting progress, so cancellation can be observed;
* ``fail`` - raises a ``GnoError`` or a plain exception;
* ``noisy`` - prints to stdout behind the protocol's back.

Resources: ``echo://greeting`` and the template ``echo://{name}`` (``echo://missing``
and ``echo://empty`` exercise the not-found paths).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any, Literal

if not __package__:  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import msgspec
import trio

from gno_trio.errors import GnoError
from gno_trio.server.context import RequestContext, ToolCallContext
from gno_trio.server.dispatch import McpApp
from gno_trio.server.tooltypes import BoundTool, ToolResult, ToolSpec
from gno_trio.transports.deadlines import ANSWER_DEADLINE_SECONDS
from gno_trio.transports.stdio import DEFAULT_MAX_LINE_BYTES, serve_stdio

SERVER_NAME = "gno-echo"
SERVER_VERSION = "0.0.1"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class EchoInput(msgspec.Struct, forbid_unknown_fields=True):
    text: str
    repeat: int = 1


class SlowInput(msgspec.Struct, forbid_unknown_fields=True):
    steps: int = 5
    delay: float = 0.05


class FailInput(msgspec.Struct, forbid_unknown_fields=True):
    kind: Literal["gno", "crash"] = "crash"


class NoisyInput(msgspec.Struct, forbid_unknown_fields=True):
    text: str = "noise"


def _input_schema(struct_type: type[msgspec.Struct]) -> dict[str, Any]:
    generated = msgspec.json.schema(struct_type)
    name = generated["$ref"].rsplit("/", 1)[-1]
    return {"$schema": JSON_SCHEMA_DIALECT, **generated["$defs"][name]}


def _spec(
    name: str, description: str, input_type: type[msgspec.Struct], **annotations: Any
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        input_type=input_type,
        input_schema=_input_schema(input_type),
        output_schema=None,
        annotations=annotations,
    )


async def echo(args: EchoInput, ctx: ToolCallContext) -> ToolResult:
    text = args.text * args.repeat
    return ToolResult(
        text=text,
        structured={
            "text": text,
            "client": ctx.client_name,
            "session": ctx.session_id,
            "era": str(ctx.era),
            "protocolVersion": ctx.protocol_version,
            "meta": dict(ctx.custom_meta),
        },
    )


async def slow(args: SlowInput, ctx: ToolCallContext) -> ToolResult:
    for step in range(1, args.steps + 1):
        await trio.sleep(args.delay)
        await ctx.report_progress(step, args.steps, f"step {step}")
    return ToolResult(text=f"slept {args.steps} steps", structured={"steps": args.steps})


async def fail(args: FailInput, ctx: ToolCallContext) -> ToolResult:
    if args.kind == "gno":
        raise GnoError("NOT_FOUND", "no such thing")
    raise RuntimeError("boom")


async def noisy(args: NoisyInput, ctx: ToolCallContext) -> ToolResult:
    print(f"print() {args.text}")
    os.write(1, f"os.write(1) {args.text}\n".encode())
    return ToolResult(text="printed", structured=None)


class EchoResources:
    """One fixed resource and a template whose expansions echo their name."""

    async def list_resources(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return [{"uri": "echo://greeting", "name": "greeting", "mimeType": "text/plain"}]

    def list_templates(self) -> list[dict[str, Any]]:
        return [{"uriTemplate": "echo://{name}", "name": "echo", "mimeType": "text/plain"}]

    async def read(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]:
        if uri == "echo://greeting":
            return [{"uri": uri, "mimeType": "text/plain", "text": "hello from gno-echo"}]
        if uri == "echo://missing":
            raise GnoError("NOT_FOUND", f"no resource {uri}")
        if uri == "echo://empty":
            return []
        if uri.startswith("echo://"):
            return [{"uri": uri, "mimeType": "text/plain", "text": uri.removeprefix("echo://")}]
        raise GnoError("NOT_FOUND", f"no resource {uri}")


def build_app() -> McpApp:
    tools = [
        BoundTool(
            _spec("echo", "Echo text back with caller identity.", EchoInput, readOnlyHint=True),
            echo,
        ),
        BoundTool(
            _spec("slow", "Sleep in steps, reporting progress.", SlowInput, readOnlyHint=True), slow
        ),
        BoundTool(_spec("fail", "Fail on purpose.", FailInput), fail),
        BoundTool(_spec("noisy", "Print to stdout behind the protocol's back.", NoisyInput), noisy),
    ]
    # Two of GNO's write tools (not served here), so the gateway's write gate has something
    # to refuse; importing the real catalogue would slow this small server's start.
    return McpApp(
        name=SERVER_NAME,
        version=SERVER_VERSION,
        tools=tools,
        resources=EchoResources(),
        write_tools=frozenset({"gno_capture", "gno_remember"}),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-line-bytes", type=int, default=DEFAULT_MAX_LINE_BYTES)
    parser.add_argument("--drain-timeout", type=float, default=10.0)
    parser.add_argument("--answer-deadline", type=float, default=ANSWER_DEADLINE_SECONDS)
    options = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    app = build_app()
    return trio.run(
        lambda: serve_stdio(
            app,
            max_line_bytes=options.max_line_bytes,
            drain_timeout=options.drain_timeout,
            answer_deadline=options.answer_deadline,
        )
    )


if __name__ == "__main__":
    raise SystemExit(main())
