"""``/api/events`` is bounded like every long stream, seen from its clients on a real listener.

* A client that stops reading is dropped within the socket write deadline
  and gives back what it held (its share of the per-caller stream count),
  while a client that reads on the same gateway hears every change.
* A stream ends at its server-side lifetime with a final event the client
  sees (``end`` here, the ``complete`` result on a listen stream), and the
  per-caller cap counts open streams only: streams that ended, or that their
  client closed, never lock their caller out across reconnects.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio

from gno_trio.compose import build_app
from gno_trio.config import GatewayLimits
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.protocol.subscriptions import MAX_LISTENS
from gno_trio.runtime import Runtime
from gno_trio.server.change_feed import ChangeFeed
from gno_trio.transports.http.server import open_listening_socket
from tests.support.http_gateway_support import (
    RunningGateway,
    drain_until_closed,
    idle_for,
    modern_headers,
    modern_params,
    read_events,
    rpc,
    running_gateway,
)
from tests.support.waiting import real_time_limit, wait_until

SMALL_BUFFER = 4096
"""Socket buffer size (bytes) on both ends of a stalled stream: a few events fill it."""
LIMITS = GatewayLimits(max_requests_per_minute=100_000, write_timeout_ms=500)
BURST = 150
"""Documents one sync adds: more changes than one stream may queue."""


def _index(tmp_path: Path) -> tuple[Dirs, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "seed.md").write_text("# Seed\n\nthe first note\n")
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(corpus), name="notes")
        engine.sync()
    return dirs, corpus


@asynccontextmanager
async def _gateway(
    dirs: Dirs, **overrides: Any
) -> AsyncIterator[tuple[RunningGateway, httpx.AsyncClient, ChangeFeed]]:
    """``serve --subscriptions`` with writes on, its accepted sockets given small send buffers."""
    sock = open_listening_socket("127.0.0.1", 0)
    # Accepted sockets inherit it: a few events fill what the server side can hold.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER)
    engine = Engine.open(dirs=dirs)
    try:
        app = build_app(Runtime(engine=engine, write_enabled=True), subscriptions=True)
        assert app.change_feed is not None
        async with (
            trio.open_nursery() as background,
            running_gateway(
                app, limits=LIMITS, enable_write=True, sock=sock, **overrides
            ) as running,
            httpx.AsyncClient(base_url=running.base, timeout=30) as client,
        ):
            background.start_soon(app.change_feed.run)
            yield running, client, app.change_feed
            background.cancel_scope.cancel()
    finally:
        engine.close()


async def _stalled_stream(port: int) -> trio.SocketStream:
    """A raw ``GET /api/events`` whose client reads up to the ``ready`` event, then never again."""
    sink = socket.socket()
    sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(sink))
    await stream.socket.connect(("127.0.0.1", port))
    await stream.send_all(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    seen = bytearray()
    while b"event: ready" not in seen:
        chunk = await stream.receive_some(SMALL_BUFFER)
        assert chunk, "the server closed the stream before it was ready"
        seen += chunk
    assert seen.startswith(b"HTTP/1.1 200")
    return stream


async def _read_and_discard(
    client: httpx.AsyncClient, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """An event stream of this caller whose client reads everything and keeps nothing."""
    async with client.stream("GET", "/api/events") as stream:
        assert stream.status_code == 200
        task_status.started()
        async for _ in stream.aiter_raw():
            pass


async def test_a_client_that_stops_reading_is_dropped_and_gives_back_its_stream(
    tmp_path: Path,
) -> None:
    dirs, corpus = _index(tmp_path)
    async with _gateway(dirs) as (running, client, feed), AsyncExitStack() as held:
        reader = await held.enter_async_context(client.stream("GET", "/api/events"))
        lines = reader.aiter_lines()
        stalled = await held.enter_async_context(await _stalled_stream(running.endpoint.port))
        with trio.fail_after(120):
            assert (await read_events(lines, lambda event, _: event == "ready"))[0][1]["changes"]
            async with trio.open_nursery() as readers:
                # This caller now holds every stream it may, the stalled one among them.
                for _ in range(MAX_LISTENS - 2):
                    await readers.start(_read_and_discard, client)
                assert (await client.get("/api/events")).status_code == 429
                await wait_until(lambda: feed.following)
                for i in range(BURST):
                    (corpus / f"burst-{i:03d}-{'x' * 120}.md").write_text(f"# Burst {i}\n")
                synced = await client.post("/api/sync", json={"collection": "notes"})
                assert synced.status_code == 200, synced.text
                # The reading client hears every change of the burst.
                heard: set[str] = set()

                def all_heard(event: str, data: Any) -> bool:
                    if event == "change" and data["kind"] == "create":
                        heard.add(data["current"]["relPath"])
                    return len(heard) == BURST

                await read_events(lines, all_heard)
                assert len(heard) == BURST
                # The stalled client's share of the cap comes back once it is dropped
                # (at the write deadline), while the gateway keeps serving others.
                while True:
                    assert (await client.get("/api/health")).status_code == 200
                    opened = await held.enter_async_context(client.stream("GET", "/api/events"))
                    if opened.status_code == 200:
                        break
                    assert opened.status_code == 429
                    await trio.sleep(0.1)
                readers.cancel_scope.cancel()
            # Its connection was closed for not reading: what the socket still held
            # drains, then EOF (a live stream would never end here).
            with trio.fail_after(20):
                await drain_until_closed(stalled)
            metrics = (await client.get("/api/resident/metrics")).json()
            assert metrics["refusals"].get("write-timeout", 0) == 1


async def _open_until_refused(
    client: httpx.AsyncClient, held: AsyncExitStack
) -> list[AsyncIterator[str]]:
    """Open this caller's whole share of event streams (each past ``ready``), see a 429 past it."""
    streams = []
    for _ in range(MAX_LISTENS):
        opened = await held.enter_async_context(client.stream("GET", "/api/events"))
        assert opened.status_code == 200
        lines = opened.aiter_lines()
        assert [event for event, _ in await read_events(lines, lambda e, _: e == "ready")] == [
            "ready"
        ]
        streams.append(lines)
    refused = await client.get("/api/events")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "TOO_MANY_STREAMS"
    return streams


async def test_streams_end_at_their_lifetime_with_an_end_event_and_give_back_their_share(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    """Trio's clock stands still here: no stream may end before the test jumps it past
    the lifetime, however long opening the whole share takes on a busy machine."""
    dirs, _ = _index(tmp_path)
    with real_time_limit():
        await _end_at_lifetime_and_reconnect(dirs, mock_clock)


async def _end_at_lifetime_and_reconnect(dirs: Dirs, mock_clock: trio.testing.MockClock) -> None:
    """Open the caller's whole share; none ends before 1 s, all end at it and come back."""
    async with _gateway(dirs, stream_lifetime=1.0, stream_keepalive=0.2) as (_, client, _):
        async with AsyncExitStack() as held:
            streams = await _open_until_refused(client, held)
            await idle_for(mock_clock, 0.9)
            async with client.stream("GET", "/api/events") as early:
                assert early.status_code == 429  # none has ended yet
            await idle_for(mock_clock, 0.2)
            for lines in streams:
                events = await read_events(lines, lambda event, _: event == "end")
                assert events[-1] == ("end", {"reason": "lifetime"})
                assert [line async for line in lines if line] == []  # then it closes
        # The caller reconnects: every share came back, and so do the shares of
        # streams the client closes itself, round after round.
        for _ in range(3):
            async with AsyncExitStack() as held:
                await _open_until_refused(client, held)


async def test_a_listen_stream_completes_at_its_lifetime(tmp_path: Path) -> None:
    dirs, _ = _index(tmp_path)
    listen = rpc("subscriptions/listen", modern_params(notifications={}), "listen")
    headers = modern_headers("subscriptions/listen")
    async with _gateway(dirs, stream_lifetime=1.0, stream_keepalive=0.2) as (running, client, _):
        with trio.fail_after(60):
            async with client.stream("POST", running.url, headers=headers, json=listen) as stream:
                assert stream.status_code == 200
                messages = [
                    json.loads(line[6:])
                    async for line in stream.aiter_lines()
                    if line.startswith("data: ")
                ]
    assert messages[0]["method"] == "notifications/subscriptions/acknowledged"
    assert messages[-1]["id"] == "listen" and "result" in messages[-1]
