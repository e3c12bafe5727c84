"""The servers ``bench_http.py`` measures, one per process.

    python bench/_http_servers.py bare        [--port N] [--reuseport]
    python bench/_http_servers.py sdk         [--port N]
    python bench/_http_servers.py sdk-search  [--port N]   (index from GNO_*_DIR)
    python bench/_http_servers.py gateway     [--port N] [--reuseport]

Each binds 127.0.0.1 itself, prints one JSON line ``{"port": N, "pid": P}`` once
the socket listens, and serves until SIGTERM/SIGINT.

* ``bare``: the floor for our stack. A plain ASGI callable on hypercorn's trio
  worker (``hypercorn.trio.serve`` in this process, configured as the gateway
  configures it) that reads the body, decodes it with ``json`` and answers a
  JSON-RPC result shaped and sized like the gateway's echo answer.
* ``sdk``: the peer. The official SDK's ``MCPServer`` with an ``echo`` tool,
  started by the SDK's own launcher (``MCPServer.run("streamable-http")``,
  stateless with JSON responses): uvicorn binds the port itself, so asyncio
  sets ``TCP_NODELAY`` on every accepted connection exactly as it does for
  any user of the SDK. (Handing uvicorn a socket made with protocol 0 skips
  that, and every keep-alive answer then stalls ~40 ms on Nagle plus delayed
  ACK: a benchmark artefact, not the SDK's speed.)
* ``sdk-search``: the same launcher with one ``gno_search`` tool that makes
  the identical engine call ``gno-trio serve`` makes, over the index named by
  ``GNO_*_DIR``, and returns the identical payload (the same summary text and
  the same structured result), so both sides put the same bytes on the wire.
* ``gateway``: our gateway (:func:`serve_gateway`) over a two-tool app:
  ``echo`` (the same work as the peer's tool) and ``sleep`` (waits, then
  echoes), with the rate limit lifted and the admission limits from flags,
  in a process whose cycle collector runs at ``gno-trio serve``'s pace
  (:func:`~gno_trio.collector.pace_for_serving`). The floors and the peers
  keep CPython's own.

``--reuseport`` sets ``SO_REUSEPORT`` so several processes can share a port:
the kernel spreads new connections over them.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import trio

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gno_trio.collector import pace_for_serving
from gno_trio.config import GatewayLimits
from gno_trio.server.context import ToolCallContext
from gno_trio.server.dispatch import McpApp
from gno_trio.server.tooltypes import BoundTool, ToolResult, ToolSpec
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.server import GatewayEndpoint, serve_gateway
from gno_trio.transports.http.settings import GatewaySettings

SERVER_NAME = "bench-echo"
_JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def listening_socket(port: int, *, reuseport: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuseport:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    return sock


def announce(port: int) -> None:
    sys.stdout.write(json.dumps({"port": port, "pid": os.getpid()}) + "\n")
    sys.stdout.flush()


# -- bare ASGI on hypercorn's trio worker -----------------------------------------------


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Read, decode, answer: the JSON work of an echo call without any MCP layer."""
    request = await _http_request(scope, receive, send)
    if request is None:
        return
    text = request.get("params", {}).get("arguments", {}).get("text", "")
    result = {
        "jsonrpc": "2.0",
        "id": request.get("id"),
        "result": {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"result": text},
            "isError": False,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": SERVER_NAME, "version": "1"}},
        },
    }
    await _answer_json(send, result)


async def _http_request(scope: dict[str, Any], receive: Any, send: Any) -> dict[str, Any] | None:
    """An HTTP request's decoded JSON body; None for anything else (lifespan is answered
    here) or a client that went away."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return None
    if scope["type"] != "http":
        return None
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    decoded: dict[str, Any] = json.loads(b"".join(chunks))
    return decoded


async def _answer_json(send: Any, result: dict[str, Any]) -> None:
    body = json.dumps(result, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def bare_search_app(engine: Any) -> Any:
    """The floor of an HTTP ``gno_search``: hypercorn's trio worker, the identical engine call
    in a worker thread (as any server that keeps the engine off the event loop must), the
    identical payload, and nothing else (no validation, envelope, admission or registry)."""
    from gno_trio.engine import SearchRequest
    from gno_trio.runtime import ENGINE_STAGGER, ENGINE_THREADS
    from gno_trio.tools.retrieval import search_text
    from nurseries.stagger import StaggeredLimiter

    limiter = StaggeredLimiter(ENGINE_THREADS, ENGINE_STAGGER)  # the gateway's own bound

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        request = await _http_request(scope, receive, send)
        if request is None:
            return
        arguments = request.get("params", {}).get("arguments", {})
        search = SearchRequest(query=arguments["query"], limit=int(arguments.get("limit", 5)))
        found = await trio.to_thread.run_sync(engine.search.lexical, search, limiter=limiter)
        result = {
            "content": [{"type": "text", "text": search_text(found)}],
            "structuredContent": found,
            "isError": False,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": SERVER_NAME, "version": "1"}},
        }
        await _answer_json(send, {"jsonrpc": "2.0", "id": request.get("id"), "result": result})

    return app


def run_bare(port: int, reuseport: bool, app: Any = bare_app) -> None:
    import hypercorn.config
    import hypercorn.trio

    sock = listening_socket(port, reuseport=reuseport)
    bound = sock.getsockname()[1]
    config = hypercorn.config.Config()
    config.bind = [f"fd://{sock.detach()}"]
    config.accesslog = None
    config.include_server_header = False

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(hypercorn.trio.serve, app, config))
            announce(bound)

    trio.run(main)


# -- the official SDK ---------------------------------------------------------------------


def free_port() -> int:
    """A port nothing listens on right now, for a launcher that binds by number."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def announce_when_listening(port: int) -> None:
    """Announce ``port`` from a side thread once a connection to it succeeds."""

    def wait() -> None:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                    break
            except OSError:
                time.sleep(0.02)
        announce(port)

    threading.Thread(target=wait, daemon=True).start()


def run_sdk_launcher(server: MCPServer[Any], port: int) -> None:
    """Serve ``server`` the way the SDK's own launcher does (it binds, not us)."""
    bound = port or free_port()
    announce_when_listening(bound)
    server.run(
        "streamable-http", host="127.0.0.1", port=bound, stateless_http=True, json_response=True
    )


def run_sdk(port: int) -> None:
    from mcp.server.mcpserver import MCPServer

    server: MCPServer[Any] = MCPServer(SERVER_NAME, log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    run_sdk_launcher(server, port)


def run_bare_search(port: int) -> None:
    """:func:`bare_search_app` over the index the environment names."""
    from _common import serving_engine

    engine = serving_engine(resident=True)
    try:
        run_bare(port, False, bare_search_app(engine))
    finally:
        engine.close()


def run_sdk_search(port: int) -> None:
    """The SDK peer of ``gno-trio serve``'s ``gno_search``: same engine call, same payload."""
    from _common import sdk_search_peer, serving_engine

    engine = serving_engine(resident=True)
    try:
        run_sdk_launcher(sdk_search_peer(engine), port)
    finally:
        engine.close()


# -- our gateway ----------------------------------------------------------------------------


class EchoInput(msgspec.Struct, forbid_unknown_fields=True):
    text: str


class SleepInput(msgspec.Struct, forbid_unknown_fields=True):
    text: str = ""
    ms: float = 5.0


def _schema(struct_type: type[msgspec.Struct]) -> dict[str, Any]:
    generated = msgspec.json.schema(struct_type)
    name = generated["$ref"].rsplit("/", 1)[-1]
    return {"$schema": _JSON_SCHEMA_DIALECT, **generated["$defs"][name]}


def _spec(name: str, description: str, input_type: type[msgspec.Struct]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        input_type=input_type,
        input_schema=_schema(input_type),
        output_schema=None,
        annotations={"readOnlyHint": True},
    )


async def echo_tool(args: EchoInput, ctx: ToolCallContext) -> ToolResult:
    return ToolResult(text=args.text, structured={"result": args.text})


async def sleep_tool(args: SleepInput, ctx: ToolCallContext) -> ToolResult:
    await trio.sleep(args.ms / 1000.0)
    return ToolResult(text=args.text, structured={"result": args.text})


def bench_app() -> McpApp:
    return McpApp(
        name=SERVER_NAME,
        version="1",
        tools=[
            BoundTool(_spec("echo", "Echo the text back.", EchoInput), echo_tool),
            BoundTool(_spec("sleep", "Wait ms milliseconds, then echo.", SleepInput), sleep_tool),
        ],
    )


def run_gateway(port: int, reuseport: bool, max_active: int, max_queued: int) -> None:
    sock = listening_socket(port, reuseport=reuseport)
    limits = GatewayLimits(
        max_requests_per_minute=1_000_000_000,
        max_concurrent_requests=max_active,
        max_queued_requests=max_queued,
    )
    settings = GatewaySettings(port=sock.getsockname()[1], limits=limits)
    pace_for_serving()  # as ``gno-trio serve`` does; the floors and peers keep CPython's pace

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            endpoint: GatewayEndpoint = await nursery.start(
                partial(serve_gateway, bench_app(), settings, policies=PolicyBook(None), sock=sock)
            )
            announce(endpoint.port)

    trio.run(main)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind", choices=("bare", "bare-search", "sdk", "sdk-search", "gateway"))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reuseport", action="store_true")
    parser.add_argument("--max-active", type=int, default=64)
    parser.add_argument("--max-queued", type=int, default=16)
    options = parser.parse_args(argv)
    if options.kind == "bare":
        run_bare(options.port, options.reuseport)
    elif options.kind == "bare-search":
        run_bare_search(options.port)
    elif options.kind == "sdk":
        run_sdk(options.port)
    elif options.kind == "sdk-search":
        run_sdk_search(options.port)
    else:
        run_gateway(options.port, options.reuseport, options.max_active, options.max_queued)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
