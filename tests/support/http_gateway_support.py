"""Shared helpers for the HTTP gateway tests (``tests/wire/test_http_*.py``).

* ``evals_dirs``: a session-wide index over the shared gno-evals corpus;
* :func:`running_gateway`: the real gateway on hypercorn's trio worker,
  on 127.0.0.1 with an ephemeral port, inside the test's own trio run;
* :func:`raw_exchange`: one hand-written HTTP/1.1 exchange over a trio socket,
  for what an HTTP client library would not send (slow bodies, lies in
  ``Content-Length``);
* :func:`asgi_call`: the gateway's ASGI app driven in memory with a chosen
  socket peer, for peers a test machine cannot produce (a LAN or remote
  address) -- everything else in the pipeline is the real code;
* request builders for both protocol eras.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import trio
import trio.testing

from gno_trio.compose import build_app
from gno_trio.config import GatewayLimits
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.runtime import Runtime
from gno_trio.server.dispatch import McpApp
from gno_trio.transports.http.asgi import GatewayApp
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.server import GatewayEndpoint, build_state, serve_gateway
from gno_trio.transports.http.settings import GatewaySettings
from gno_trio.transports.http.surfaces import Surface
from gno_trio.transports.http.tokens import ensure_token_file
from nurseries import GracefulDrain, open_supervisor
from tests.support.shared import EVALS_CORPUS, SCHEMAS, required

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-probe", "version": "1"},
}
ACCEPT_BOTH = "application/json, text/event-stream"
# Generous limits so wire tests never trip the rate limit by accident.
RELAXED = GatewayLimits(max_requests_per_minute=100_000)


# -- index ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def evals_dirs(tmp_path_factory: pytest.TempPathFactory) -> Dirs:
    """An index with the gno-evals corpus as collection ``evals`` (built once)."""
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    root = tmp_path_factory.mktemp("gno-evals-index")
    dirs = Dirs(config=root / "config", data=root / "data", cache=root / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(EVALS_CORPUS), name="evals")
        engine.sync()
    return dirs


@contextmanager
def engine_app(dirs: Dirs, *, write_enabled: bool = False) -> Iterator[tuple[McpApp, Engine]]:
    """The real gno MCP surface over ``dirs``."""
    engine = Engine.open(dirs=dirs)
    try:
        runtime = Runtime(engine=engine, write_enabled=write_enabled)
        yield build_app(runtime), engine
    finally:
        engine.close()


# -- running the gateway -----------------------------------------------------------------


@dataclass(frozen=True)
class RunningGateway:
    endpoint: GatewayEndpoint
    drain: GracefulDrain

    @property
    def url(self) -> str:
        return self.endpoint.mcp_url

    @property
    def base(self) -> str:
        return self.endpoint.url


@asynccontextmanager
async def running_gateway(
    app: McpApp,
    settings: GatewaySettings | None = None,
    *,
    policies: PolicyBook | None = None,
    sock: socket.socket | None = None,
    pages: Surface | None = None,
    **overrides: Any,
) -> AsyncIterator[RunningGateway]:
    """Serve ``app`` on 127.0.0.1:<ephemeral> for the body of the block, then drain.

    ``pages``: the web workspace's surface, when the test drives it.
    """
    base = settings or GatewaySettings(port=0, limits=RELAXED)
    settings = replace(base, **overrides) if overrides else base
    drain = GracefulDrain()
    async with trio.open_nursery() as nursery:

        async def serve(*, task_status: trio.TaskStatus[GatewayEndpoint]) -> None:
            await serve_gateway(
                app,
                settings,
                policies=policies if policies is not None else PolicyBook(None),
                sock=sock,
                drain=drain,
                handle_signals=False,
                pages=pages,
                task_status=task_status,
            )

        endpoint: GatewayEndpoint = await nursery.start(serve)
        try:
            yield RunningGateway(endpoint, drain)
        finally:
            drain.trigger()


async def wait_until_idle(client: Any, running: RunningGateway, timeout: float = 2.0) -> Any:
    """Poll the status endpoint until no request holds a slot; returns the last snapshot.

    A reply can reach an in-process client a moment before the server task
    that sent it has left its admission slots, hence the polling.
    """
    with trio.fail_after(timeout):
        while True:
            status = (await client.get(running.endpoint.status_url)).json()
            if status["transport"]["activeRequests"] == 0 and status["readers"]["active"] == 0:
                return status
            await trio.sleep(0.01)


async def wait_for_requests(
    client: Any, running: RunningGateway, *, active: int, queued: int = 0, timeout: float = 30
) -> None:
    """Poll the status endpoint until exactly ``active`` requests run and ``queued`` wait.

    A test that needs a request to be in flight (holding a slot, or queued for
    one) before it acts waits here instead of sleeping a guess.
    """
    with trio.fail_after(timeout):
        while True:
            transport = (await client.get(running.endpoint.status_url)).json()["transport"]
            if (transport["activeRequests"], transport["queuedRequests"]) == (active, queued):
                return
            await trio.sleep(0.01)


async def idle_for(clock: trio.testing.MockClock, seconds: float) -> None:
    """Let ``seconds`` of trio time pass at once on ``clock``, then let what woke run.

    For a gateway whose timers (session reaper, idle streams) are the subject:
    the test runs on a clock that stands still, and jumps it past a deadline.
    What is still running (a request finishing after its reply) settles first.
    """
    await trio.testing.wait_all_tasks_blocked()
    clock.jump(seconds)
    await trio.testing.wait_all_tasks_blocked()


async def wait_for_admitted(gateway: GatewayApp, active: int, timeout: float = 30) -> None:
    """Like :func:`wait_for_requests`, for a gateway app driven in-process (no listener)."""
    with trio.fail_after(timeout):
        while gateway.state.capacity.stats().active != active:
            await trio.sleep(0.01)


# -- request builders ----------------------------------------------------------------------


def modern_params(**params: Any) -> dict[str, Any]:
    meta = {**ENVELOPE, **params.pop("_meta", {})}
    return {**params, "_meta": meta}


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {
        "accept": ACCEPT_BOTH,
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


def rpc(method: str, params: Any = None, request_id: int | str | None = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return message


def initialize_body(request_id: int = 1, version: str = LEGACY) -> dict[str, Any]:
    return rpc(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw-legacy", "version": "1"},
        },
        request_id,
    )


LEGACY_POST_HEADERS = {"accept": ACCEPT_BOTH, "content-type": "application/json"}


def legacy_headers(session_id: str | None = None, **extra: str) -> dict[str, str]:
    headers = dict(LEGACY_POST_HEADERS)
    if session_id is not None:
        headers["mcp-session-id"] = session_id
        headers["mcp-protocol-version"] = LEGACY
    headers.update(extra)
    return headers


# -- schemas -------------------------------------------------------------------------------


@cache
def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
    return loaded


def check_schema(name: str, instance: Any) -> None:
    """Validate against GNO's published output schema (skips when it is not available)."""
    required(SCHEMAS, "GNO's output schemas")
    schema = _schema(name)
    jsonschema.validators.validator_for(schema)(schema).validate(instance)


def assert_boundary_error(status: int, body: bytes | str, expected_status: int) -> None:
    """The closed ``mcp-http-error`` body for ``expected_status``."""
    assert status == expected_status
    document = json.loads(body)
    check_schema("mcp-http-error", document)
    assert document["id"] is None
    assert document["error"]["code"] == -32000


# -- raw HTTP ------------------------------------------------------------------------------


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def parse_response(data: bytes) -> RawResponse:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RawResponse(status, headers, body)


async def raw_exchange(
    port: int,
    head: bytes,
    body_parts: Sequence[bytes] = (),
    *,
    delay: float = 0.0,
    timeout: float = 10.0,
) -> RawResponse:
    """Send ``head`` then each body part (``delay`` seconds apart); read until the server closes.

    Write failures after the server answered early are ignored: the answer is
    what the test is about.
    """
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    received = bytearray()
    with trio.fail_after(timeout):
        async with stream:
            try:
                await stream.send_all(head)
                for part in body_parts:
                    if delay:
                        await trio.sleep(delay)
                    await stream.send_all(part)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            while True:
                try:
                    chunk = await stream.receive_some(65536)
                except trio.BrokenResourceError:
                    break
                if not chunk:
                    break
                received += chunk
                if _complete(received):
                    break
    return parse_response(bytes(received))


async def drain_until_closed(stream: trio.abc.ReceiveStream) -> int:
    """Read and discard until the server closes (EOF or reset); how many bytes came."""
    received = 0
    while True:
        try:
            chunk = await stream.receive_some(1 << 20)
        except trio.BrokenResourceError:
            return received
        if not chunk:
            return received
        received += len(chunk)


def _complete(data: bytearray) -> bool:
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        return False
    response = parse_response(bytes(data))
    length = response.headers.get("content-length")
    return length is not None and len(response.body) >= int(length)


def request_head(
    method: str, path: str, headers: Mapping[str, str], *, host: str = "127.0.0.1"
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1"]
    if "host" not in {k.lower() for k in headers}:
        lines.append(f"Host: {host}")
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def mcp_head_for(port: int, extra: Mapping[str, str]) -> bytes:
    """The head of a POST /mcp with the loopback Host, both Accept types and JSON."""
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Accept": ACCEPT_BOTH,
        "Content-Type": "application/json",
        **extra,
    }
    return request_head("POST", "/mcp", headers)


# -- in-memory ASGI with a chosen peer -----------------------------------------------------


@dataclass
class AsgiResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@asynccontextmanager
async def gateway_app(
    app: McpApp, settings: GatewaySettings, *, policies: PolicyBook
) -> AsyncIterator[GatewayApp]:
    """The gateway's ASGI app with its state, without a socket (port 4444)."""
    token_state = ensure_token_file(settings.token_file) if settings.token_file else None
    async with open_supervisor() as supervisor:
        state = build_state(app, settings, 4444, supervisor, policies)
        yield GatewayApp(state, token_state=token_state)


async def asgi_call(
    gateway: GatewayApp,
    *,
    peer: str,
    method: str = "POST",
    path: str = "/mcp",
    headers: Mapping[str, str],
    body: bytes = b"",
) -> AsgiResponse:
    """One request through the ASGI app as if it came from socket peer ``peer``."""
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "client": (peer, 50000),
        "server": ("0.0.0.0", 4444),
    }
    delivered = False
    done = trio.Event()
    status = 0
    response_headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            response_headers.update(
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
            )
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    await gateway(scope, receive, send)
    done.set()
    return AsgiResponse(status, response_headers, b"".join(chunks))


def sse_messages(body: bytes | str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body, in order."""
    text = body.decode() if isinstance(body, bytes) else body
    messages = []
    for event in text.split("\n\n"):
        data = [line[5:].strip() for line in event.split("\n") if line.startswith("data:")]
        if data and data[0]:
            messages.append(json.loads("\n".join(data)))
    return messages


async def read_events(lines: AsyncIterator[str], until: Callable[[str, Any], bool]) -> list[Any]:
    """The (event, data) pairs of an SSE response up to and including the one ``until`` picks."""
    events: list[tuple[str, Any]] = []
    event = ""
    async for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            events.append((event, json.loads(line[6:])))
            if until(*events[-1]):
                break
    return events


def non_loopback_address() -> str | None:
    """A local address other than loopback that this machine can connect to itself on."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
        address: str = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    if address.startswith("127.") or address == "0.0.0.0":
        return None
    return address
