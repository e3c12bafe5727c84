"""A standing fuzz suite for everything that parses untrusted bytes: stdio lines, HTTP bodies.

The real gno MCP surface (an index over a small corpus, writes off) is driven
in-process: through the stdio transport over memory streams, and through the
gateway's ASGI application in both protocol eras. Inputs mix random bytes,
mangled JSON, absurd nesting and JSON-RPC-shaped messages whose methods,
ids, envelopes, tool names and argument keys are drawn from what the server
knows, so they get past the first checks and reach deeper code.

Every input must leave the server serving, within a time bound, and every
reply must be a JSON-RPC object (or an empty 202/204, or SSE events each
holding one). Over HTTP no status may be 500. HTTP/2 clients (prior
knowledge and ``Upgrade: h2c``, drawn settings, streams and trailing bytes)
talk to the real listener: each is answered in HTTP/1.1, and no slot stays
held after it.

Short by default; ``GNO_FUZZ_EXAMPLES=<n>`` runs ``n`` examples per target
and ``GNO_FUZZ_BATCH=<k>`` adds ``k`` fast seeded inputs to each (long mode).
``GNO_FUZZ_REPORT=<file>`` appends the counts of this run (inputs, crashes,
500s, hangs) as one JSON line.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.settings
import httpx
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.compose import build_app
from gno_trio.config import GatewayLimits
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.protocol.connection import LEGACY_REQUEST_METHODS, MODERN_REQUEST_METHODS
from gno_trio.runtime import Runtime
from gno_trio.server.dispatch import McpApp
from gno_trio.tools import CATALOGUE
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.settings import STATUS_PATH, GatewaySettings
from gno_trio.transports.stdio import serve_stdio
from tests.conftest import write_corpus
from tests.support.http_gateway_support import (
    ENVELOPE,
    asgi_call,
    gateway_app,
    initialize_body,
    modern_headers,
    modern_params,
    rpc,
    running_gateway,
    wait_until_idle,
)

EXAMPLES = int(os.environ.get("GNO_FUZZ_EXAMPLES", "40"))
BATCH = int(os.environ.get("GNO_FUZZ_BATCH", "8"))
REPORT = os.environ.get("GNO_FUZZ_REPORT")
HANG_SECONDS = 20.0
COUNTS: Counter[str] = Counter()
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

# -- what the server knows, so generated messages reach past the first checks ---------------

METHODS = [
    *sorted(LEGACY_REQUEST_METHODS | MODERN_REQUEST_METHODS),
    "notifications/initialized",
    "notifications/cancelled",
    "logging/setLevel",
    "subscriptions/listen",
    "prompts/list",
]
TOOL_NAMES = sorted(CATALOGUE.order)
ARGUMENT_KEYS = [
    "query",
    "ref",
    "refs",
    "pattern",
    "limit",
    "maxBytes",
    "lineNumbers",
    "fromLine",
    "lineCount",
    "collection",
    "collections",
    "since",
    "until",
    "target",
    "from",
    "to",
    "root",
    "depth",
    "direction",
    "tags",
    "minScore",
    "uri",
    "content",
    "title",
    "path",
    "action",
    "anchor",
    "line",
    "jobId",
    "mode",
]
VERSIONS = ["2025-11-25", "2025-06-18", "2026-07-28", "1999-01-01", "", "v999"]

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=24)
    | st.sampled_from(["gno://notes/alpha.md", "notes/beta.md", "#000000", "**", "../x", "*"])
)
json_values = st.recursive(
    json_leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)
request_ids = st.integers(min_value=-(2**64), max_value=2**64) | st.text(max_size=6) | json_leaves
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "io.modelcontextprotocol/protocolVersion": st.sampled_from(VERSIONS) | json_leaves,
        "io.modelcontextprotocol/clientCapabilities": st.just({}) | json_values,
        "io.modelcontextprotocol/clientInfo": st.just(
            ENVELOPE["io.modelcontextprotocol/clientInfo"]
        )
        | json_values,
        "io.modelcontextprotocol/logLevel": st.sampled_from(["debug", "info", "nope"])
        | json_leaves,
        "progressToken": request_ids,
    },
)
arguments = st.dictionaries(st.sampled_from(ARGUMENT_KEYS), json_values, max_size=5) | json_values
params = (
    st.none()
    | json_values
    | st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(TOOL_NAMES) | st.text(max_size=12),
            "arguments": arguments,
            "_meta": st.just(ENVELOPE) | envelopes | json_values,
            "uri": st.sampled_from(["gno://notes/alpha.md", "gno://nope/x", "file:///etc/passwd"])
            | json_leaves,
            "protocolVersion": st.sampled_from(VERSIONS) | json_leaves,
            "capabilities": st.just({}) | json_values,
            "clientInfo": st.just({"name": "fuzz", "version": "1"}) | json_values,
            "requestId": request_ids,
            "cursor": json_leaves,
            "level": json_leaves,
        },
    )
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | json_leaves,
        "id": request_ids,
        "method": st.sampled_from(METHODS) | st.text(max_size=12) | json_leaves,
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)


@st.composite
def mangled(draw: st.DrawFn, message: Any) -> bytes:
    """Valid JSON of a message, then cut, flipped, spliced or wrapped in brackets."""
    data = bytearray(json.dumps(message, ensure_ascii=draw(st.booleans())).encode())
    for _ in range(draw(st.integers(0, 3))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["cut", "flip", "insert", "drop"]))
        if action == "cut":
            del data[at:]
        elif action == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            data[at:at] = draw(
                st.sampled_from([b"[", b"{", b'"', b"\\", b"\x00", b"\xff", b"9" * 40])
            )
        else:
            del data[at]
    depth = draw(st.sampled_from([0, 0, 0, 63, 64, 65, 1000, 100_000]))
    return b"[" * depth + bytes(data) + b"]" * draw(st.integers(0, depth))


inputs = (
    messages.map(lambda m: json.dumps(m).encode())
    | messages.flatmap(mangled)
    | st.binary(max_size=300)
    | st.text(max_size=200).map(str.encode)
    | json_values.map(lambda v: json.dumps(v).encode())
)

# -- a fast generator for volume ---------------------------------------------------------------
# Hypothesis spends milliseconds on each structured draw. For a million inputs each
# example also carries BATCH inputs built by a plain seeded generator from the same
# vocabulary: reproducible from the seed Hypothesis reports, not shrinkable.


def _fast_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return [_fast_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if depth < 3 and roll < 0.3:
        return {
            rng.choice([*ARGUMENT_KEYS, "", "_meta", "x"]): _fast_value(rng, depth + 1)
            for _ in range(rng.randrange(4))
        }
    return rng.choice(
        [
            None,
            True,
            False,
            0,
            -1,
            rng.randrange(-(2**70), 2**70),
            rng.random() * 1e6,
            "",
            "gno://notes/alpha.md",
            "notes/beta.md",
            "#000000",
            "**",
            "../../etc/passwd",
            "\u0000",
            "\ud800",
            "x" * rng.randrange(2000),
            "kubernetes",
            "2024-03-01",
            rng.choice(TOOL_NAMES),
        ]
    )


def _fast_message(rng: random.Random) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0" if rng.random() < 0.97 else _fast_value(rng)}
    if rng.random() < 0.85:
        message["id"] = (
            rng.choice([rng.randrange(10**6), "r" + str(rng.randrange(99))])
            if rng.random() < 0.95
            else rng.choice([None, True, 1.5, [], -(2**80)])
        )
    message["method"] = rng.choice(METHODS) if rng.random() < 0.97 else _fast_value(rng)
    params: dict[str, Any] = {}
    if rng.random() < 0.7:
        params["name"] = rng.choice(TOOL_NAMES) if rng.random() < 0.9 else _fast_value(rng)
        params["arguments"] = {
            rng.choice(ARGUMENT_KEYS): _fast_value(rng) for _ in range(rng.randrange(5))
        }
    if rng.random() < 0.7:
        params["_meta"] = dict(ENVELOPE) if rng.random() < 0.8 else _fast_value(rng)
    if rng.random() < 0.2:
        params.update(initialize_body()["params"])
    if rng.random() < 0.1:
        params["uri"] = rng.choice(["gno://notes/alpha.md", "gno://x/y", _fast_value(rng)])
    message["params"] = params if rng.random() < 0.97 else _fast_value(rng)
    return message


def _fast_mutate(rng: random.Random, data: bytes) -> bytes:
    mutable = bytearray(data)
    for _ in range(rng.choice([0, 0, 0, 0, 0, 0, 0, 1, 2, 5])):
        if not mutable:
            break
        at = rng.randrange(len(mutable))
        action = rng.randrange(4)
        if action == 0:
            del mutable[at:]
        elif action == 1:
            mutable[at] ^= 1 << rng.randrange(8)
        elif action == 2:
            mutable[at:at] = rng.choice([b"[", b"{", b'"', b"\\", b"\x00", b"\xff", b"1e999"])
        else:
            del mutable[at]
    depth = rng.choice([0] * 40 + [64, 65, 1000, 50_000])
    return b"[" * depth + bytes(mutable) + b"]" * rng.randrange(depth + 1)


def fast_inputs(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    batch = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.08:
            batch.append(rng.randbytes(rng.randrange(300)))
        else:
            batch.append(_fast_mutate(rng, json.dumps(_fast_message(rng)).encode()))
    return batch


# -- the server under test -------------------------------------------------------------------


@pytest.fixture(scope="module")
def gno_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpApp]:
    root = tmp_path_factory.mktemp("fuzz-index")
    dirs = Dirs(config=root / "config", data=root / "data", cache=root / "cache")
    engine = Engine.open(dirs=dirs)
    try:
        engine.collections.add(str(write_corpus(root / "corpus")), name="notes")
        engine.sync()
        runtime = Runtime(engine=engine)
        yield build_app(runtime)
        runtime.jobs.close()
    finally:
        engine.close()


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    line = json.dumps({"examples": EXAMPLES, **dict(sorted(COUNTS.items()))})
    print(f"\nfuzz counts: {line}", file=sys.stderr)
    if REPORT:
        with Path(REPORT).open("a", encoding="utf-8") as report:
            report.write(line + "\n")


def _check_message(message: Any, where: str) -> None:
    """One JSON-RPC object the server may send: a response or a notification."""
    assert isinstance(message, dict), (where, message)
    assert message.get("jsonrpc") == "2.0", (where, message)
    if "method" in message:
        assert isinstance(message["method"], str) and "id" not in message, (where, message)
        return
    assert "id" in message and (("result" in message) != ("error" in message)), (where, message)
    request_id = message["id"]
    assert request_id is None or isinstance(request_id, int | str), (where, message)
    if "error" in message:
        error = message["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str), (
            where,
            message,
        )
        COUNTS[f"{where}:error{error['code']}"] += 1
    else:
        assert isinstance(message["result"], dict), (where, message)
        COUNTS[
            f"{where}:tool_errors" if message["result"].get("isError") else f"{where}:results"
        ] += 1


def _run(kind: str, scenario: Any, *args: Any) -> None:
    """Run one example in its own trio run; a timeout is a hang, anything raised a crash."""

    async def bounded() -> None:
        with trio.fail_after(HANG_SECONDS):
            await scenario(*args)

    try:
        trio.run(bounded)
    except trio.TooSlowError:
        COUNTS[f"{kind}:hangs"] += 1
        raise
    except AssertionError:
        COUNTS[f"{kind}:bad_replies"] += 1
        raise
    except BaseException:
        COUNTS[f"{kind}:crashes"] += 1
        raise


# -- stdio ------------------------------------------------------------------------------------

FINAL_PING = b'{"jsonrpc":"2.0","id":"fuzz-final","method":"ping"}\n'


OPENINGS = [
    [],
    [
        json.dumps(initialize_body(0)).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ],
    [
        json.dumps(
            {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}}
        ).encode()
    ],
]


async def _stdio_scenario(app: McpApp, lines: list[bytes]) -> None:
    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    server_out, from_server = trio.testing.memory_stream_one_way_pair()
    output = bytearray()
    status: list[int] = []

    async def serve() -> None:
        status.append(
            await serve_stdio(
                app, stdin=server_in, stdout=server_out, drain_timeout=2.0, handle_signals=False
            )
        )
        await server_out.aclose()

    async def collect() -> None:
        while chunk := await from_server.receive_some(1 << 16):
            output.extend(chunk)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        nursery.start_soon(collect)
        for line in lines:
            await to_server.send_all(line.replace(b"\n", b" ") + b"\n")
        await to_server.send_all(FINAL_PING)
        await to_server.aclose()
    assert status == [0], "the stdio transport failed"
    replies = [json.loads(line) for line in bytes(output).splitlines()]
    for reply in replies:
        _check_message(reply, "stdio")
    assert any(r.get("id") == "fuzz-final" for r in replies), "no answer after the fuzzed input"


@FUZZ_SETTINGS
@given(
    opening=st.sampled_from(OPENINGS),
    drawn=st.lists(inputs, max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_fuzz_stdio_lines(
    gno_app: McpApp, opening: list[bytes], drawn: list[bytes], seed: int
) -> None:
    lines = [*opening, *drawn, *fast_inputs(seed, BATCH)]
    COUNTS["stdio:inputs"] += len(lines)
    _run("stdio", _stdio_scenario, gno_app, lines)


# -- HTTP, both eras --------------------------------------------------------------------------

HTTP_SETTINGS = GatewaySettings(port=0, limits=GatewayLimits(max_requests_per_minute=1_000_000))
HOST = {"host": "127.0.0.1:4444"}
# Header values are bytes on the wire; Latin-1 text covers every byte value.
header_text = st.text(alphabet=st.characters(max_codepoint=255), max_size=10)
JSON_POST = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _check_http(status: int, headers: dict[str, str], body: bytes, where: str) -> None:
    assert status != 500 and 200 <= status < 500, (where, status, body[:300])
    if status in (202, 204):
        assert body == b"", (where, status, body[:300])
        return
    if headers.get("content-type") == "text/event-stream":
        events = [
            part[len("data: ") :]
            for event in body.split(b"\n\n")
            for part in event.split(b"\n")
            if part.startswith(b"data: ")
        ]
        for data in events:
            _check_message(json.loads(data), where)
        return
    _check_message(json.loads(body), where)


def _modern_headers(body: bytes, draw_version: str, draw_name: str | None) -> dict[str, str]:
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        decoded = None
    method = decoded.get("method") if isinstance(decoded, dict) else None
    params = decoded.get("params") if isinstance(decoded, dict) else None
    headers = {**JSON_POST, **HOST, "mcp-protocol-version": draw_version}
    if isinstance(method, str) and _header_safe(method):
        headers["mcp-method"] = method
    body_name = params.get("name", params.get("uri")) if isinstance(params, dict) else None
    if draw_name is not None:
        headers["mcp-name"] = draw_name
    elif isinstance(body_name, str) and _header_safe(body_name):
        headers["mcp-name"] = body_name
    return headers


def _header_safe(text: str) -> bool:
    return text.isascii() and text.isprintable()


async def _http_scenario(
    app: McpApp, era: str, bodies: list[bytes], version: str, name: str | None, with_session: bool
) -> None:
    async with gateway_app(app, HTTP_SETTINGS, policies=PolicyBook(None)) as gateway:
        session: dict[str, str] = {}
        if era == "legacy" and with_session:
            opened = await asgi_call(
                gateway,
                peer="127.0.0.1",
                headers={**JSON_POST, **HOST},
                body=json.dumps(initialize_body()).encode(),
            )
            assert opened.status == 200
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
        for body in bodies:
            if era == "legacy":
                headers = {**JSON_POST, **HOST, **session}
            else:
                headers = _modern_headers(body, version, name)
            reply = await asgi_call(gateway, peer="127.0.0.1", headers=headers, body=body)
            _check_http(reply.status, reply.headers, reply.body, era)
        probe = await asgi_call(
            gateway,
            peer="127.0.0.1",
            headers={**JSON_POST, **HOST},
            body=json.dumps(initialize_body(99)).encode(),
        )
        assert probe.status == 200, "no answer after the fuzzed input"


@pytest.mark.parametrize("era", ["legacy", "modern"])
@FUZZ_SETTINGS
@given(
    drawn=st.lists(inputs, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    version=st.sampled_from(VERSIONS[:3]) | header_text,
    name=st.none() | st.sampled_from(TOOL_NAMES) | header_text,
    with_session=st.booleans(),
)
def test_fuzz_http_bodies(
    gno_app: McpApp,
    era: str,
    drawn: list[bytes],
    seed: int,
    version: str,
    name: str | None,
    with_session: bool,
) -> None:
    bodies = [*drawn, *fast_inputs(seed, BATCH)]
    COUNTS[f"http-{era}:inputs"] += len(bodies)
    try:
        _run(f"http-{era}", _http_scenario, gno_app, era, bodies, version, name, with_session)
    except AssertionError as failure:
        if "500" in str(failure):
            COUNTS[f"http-{era}:500s"] += 1
        raise


# -- HTTP/2 clients on the real listener ------------------------------------------------------

H2_SETTINGS = {
    h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: st.integers(0, 2**31 - 1),
    h2.settings.SettingCodes.MAX_FRAME_SIZE: st.integers(2**14, 2**24 - 1),
    h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: st.integers(0, 2**31 - 1),
    h2.settings.SettingCodes.HEADER_TABLE_SIZE: st.integers(0, 2**16),
}
h2_settings = st.fixed_dictionaries({}, optional=H2_SETTINGS)
H2_STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")
H2_BODY_BYTES = 16_000  # one DATA frame each, all four within the initial 64 KiB window


def _h2_frames(
    client: h2.connection.H2Connection, port: int, bodies: list[bytes], first_id: int
) -> bytes:
    """POST /mcp streams (one per body) on ``client``; the bytes it would send."""
    for index, whole in enumerate(bodies):
        body = whole[:H2_BODY_BYTES]
        stream_id = first_id + 2 * index
        headers = [
            (":method", "POST"),
            (":path", "/mcp"),
            (":scheme", "http"),
            (":authority", f"127.0.0.1:{port}"),
            *_modern_headers(body, "2026-07-28", None).items(),
            ("content-length", str(len(body))),
        ]
        client.send_headers(stream_id, [(k, v) for k, v in headers if k != "host"])
        client.send_data(stream_id, body, end_stream=True)
    return client.data_to_send()


@dataclass(frozen=True)
class H2Client:
    """One hostile HTTP/2 client: its opening, settings, streams and trailing bytes."""

    upgrade: bool
    local: dict[int, int]
    bodies: list[bytes]
    tail: bytes

    def wire(self, port: int) -> bytes:
        client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        client.local_settings = h2.settings.Settings(client=True, initial_values=self.local)
        if self.upgrade:
            header = client.initiate_upgrade_connection() or b""
            opening = (
                f"GET {STATUS_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                f"HTTP2-Settings: {header.decode()}\r\n\r\n"
            ).encode()
        else:
            client.initiate_connection()
            opening = b""
        return opening + _h2_frames(client, port, self.bodies, 3 if self.upgrade else 1) + self.tail


def fast_h2_clients(seed: int, count: int) -> list[H2Client]:
    rng = random.Random(seed)
    limits = {
        code: (0, 2**31 - 1)
        if code != h2.settings.SettingCodes.MAX_FRAME_SIZE
        else (2**14, 2**24 - 1)
        for code in H2_SETTINGS
    }
    return [
        H2Client(
            upgrade=rng.random() < 0.5,
            local={code: rng.randint(*limits[code]) for code in limits if rng.random() < 0.5},
            bodies=fast_inputs(rng.randrange(2**32), rng.randrange(5)),
            tail=rng.randbytes(rng.randrange(64)),
        )
        for _ in range(count)
    ]


async def _h2_exchange(port: int, data: bytes) -> list[int]:
    """Send one client's bytes; the HTTP/1.1 statuses it got before the server closed."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    received = bytearray()
    async with stream:
        with contextlib.suppress(trio.BrokenResourceError):
            await stream.send_all(data)
        with trio.fail_after(HANG_SECONDS / 2):
            while True:
                try:
                    chunk = await stream.receive_some(1 << 16)
                except trio.BrokenResourceError:
                    break
                if not chunk:
                    break
                received += chunk
    assert received.startswith(b"HTTP/1.1 "), received[:80]
    return [int(code) for code in H2_STATUS.findall(bytes(received))]


async def _h2_scenario(app: McpApp, clients: list[H2Client]) -> None:
    async with (
        running_gateway(app, HTTP_SETTINGS) as running,
        httpx.AsyncClient() as probe,
    ):
        port = running.endpoint.port
        for client in clients:
            statuses = await _h2_exchange(port, client.wire(port))
            assert 101 not in statuses and 500 not in statuses, statuses
            assert statuses[-1] in (400, 505), statuses  # the preface is never taken as HTTP/2
            COUNTS[f"h2:{statuses[-1]}"] += 1
        reply = await probe.post(
            running.url,
            json=rpc("tools/list", modern_params()),
            headers=modern_headers("tools/list"),
        )
        assert reply.status_code == 200, "no answer after the HTTP/2 clients"
        await wait_until_idle(probe, running, timeout=HANG_SECONDS / 2)


@FUZZ_SETTINGS
@given(
    upgrade=st.booleans(),
    local=h2_settings,
    drawn=st.lists(inputs, max_size=4),
    tail=st.binary(max_size=64),
    seed=st.integers(0, 2**32 - 1),
)
def test_fuzz_http2_clients_are_answered_in_http11(
    gno_app: McpApp,
    upgrade: bool,
    local: dict[int, int],
    drawn: list[bytes],
    tail: bytes,
    seed: int,
) -> None:
    clients = [H2Client(upgrade, local, drawn, tail), *fast_h2_clients(seed, BATCH)]
    COUNTS["h2:inputs"] += sum(1 + len(client.bodies) for client in clients)
    _run("h2", _h2_scenario, gno_app, clients)
