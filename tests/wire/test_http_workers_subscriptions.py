"""``serve --workers 2 --subscriptions``: a session's subscriptions hold on every worker.

A 2025-11-25 client subscribes with a POST that one worker answers and
listens on a GET stream that the other worker serves; an edit on disk must
still reach it as ``notifications/resources/updated``, and an unsubscribe
answered by the stream's worker must silence it. A 2026-07-28
``subscriptions/listen`` stream is one request, so whichever worker takes
it delivers to it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio

from gno_trio.protocol.subscriptions import MAX_LISTENS, SUBSCRIPTION_ID_KEY
from tests.support.gateway_process import NOTE, gateway_process, notes_index
from tests.support.http_gateway_support import (
    LEGACY,
    initialize_body,
    legacy_headers,
    modern_headers,
    modern_params,
    rpc,
)

UPDATED = "notifications/resources/updated"
LIST_CHANGED = "notifications/resources/list_changed"
WAIT_S = 60.0


async def _worker_of(client: httpx.AsyncClient, base: str) -> int:
    pid: int = (await client.get(base + "/api/resident/metrics")).json()["worker"]["pid"]
    return pid


@asynccontextmanager
async def client_on(base: str, *, avoid: int | None = None) -> AsyncIterator[tuple[int, Any]]:
    """A client whose one kept-alive connection reaches a worker other than ``avoid``.

    Its requests reuse that connection (so that worker) until a stream on it
    is abandoned; the caller's first request after this is the one that counts.
    """
    for _ in range(64):
        client = httpx.AsyncClient(limits=httpx.Limits(max_connections=1), timeout=WAIT_S)
        pid = await _worker_of(client, base)
        try:
            if pid != avoid:
                yield pid, client
                return
        finally:
            await client.aclose()
    raise AssertionError("the kernel never handed a connection to the other worker")


async def _post(client: httpx.AsyncClient, url: str, session: str, body: dict[str, Any]) -> Any:
    answer = await client.post(url, headers=legacy_headers(session), json=body)
    assert answer.status_code in (200, 202), answer.text
    return answer.json() if answer.status_code == 200 else None


class Stream:
    """The JSON-RPC messages one SSE response carried, in order, waited on with a bound."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self._changed = trio.Event()

    async def read(self, response: httpx.Response) -> None:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                self.seen.append(json.loads(line.removeprefix("data:")))
                self._changed.set()
                self._changed = trio.Event()

    async def until(self, method: str, after: int = 0, within: float = WAIT_S) -> int:
        """The position of the first ``method`` heard at or after ``after``."""
        with trio.move_on_after(within):
            while True:
                for index in range(after, len(self.seen)):
                    if self.seen[index].get("method") == method:
                        return index
                await self._changed.wait()
        raise AssertionError(f"{method} not heard within {within} s; heard {self.seen}")


async def _edit_until_heard(notes: Path, stream: Stream) -> int:
    """Edit the note until its update is heard (the watch and the stream start on their own)."""
    for edit in range(20):
        (notes / "alpha.md").write_text(f"# Alpha\n\nEdit number {edit}.\n", encoding="utf-8")
        try:
            return await stream.until(UPDATED, within=WAIT_S / 10)
        except AssertionError:
            continue
    raise AssertionError(f"no update heard; heard {stream.seen}")


async def test_a_subscription_made_on_one_worker_is_heard_on_the_others_get_stream(
    tmp_path: Path,
) -> None:
    notes = notes_index(tmp_path)
    args = ("serve", "--workers", "2", "--subscriptions", "--no-embed")
    async with gateway_process(tmp_path, *args) as announced:
        url = announced["url"]
        base = url.removesuffix("/mcp")
        stream = Stream()
        with trio.fail_after(WAIT_S * 4):
            async with client_on(base) as (subscriber, first):
                opened = await first.post(url, headers=legacy_headers(), json=initialize_body())
                session = opened.headers["mcp-session-id"]
                await _post(first, url, session, rpc("notifications/initialized", None, None))
                subscribed = await _post(
                    first, url, session, rpc("resources/subscribe", {"uri": NOTE}, 2)
                )
                assert subscribed["result"] == {}
                assert await _worker_of(first, base) == subscriber  # all of it through one worker
            async with (
                client_on(base, avoid=subscriber) as (listener, second),
                client_on(base, avoid=subscriber) as (_, third),
                second.stream(
                    "GET",
                    url,
                    headers={
                        "accept": "text/event-stream",
                        "mcp-session-id": session,
                        "mcp-protocol-version": LEGACY,
                    },
                ) as response,
                trio.open_nursery() as nursery,
            ):
                assert listener != subscriber and response.status_code == 200
                nursery.start_soon(stream.read, response)
                edited = await _edit_until_heard(notes, stream)
                assert stream.seen[edited]["params"] == {"uri": NOTE}

                # Unsubscribing through the stream's worker silences the note there too.
                left = await _post(
                    third, url, session, rpc("resources/unsubscribe", {"uri": NOTE}, 3)
                )
                assert left["result"] == {}
                assert await _worker_of(third, base) == listener
                heard = len(stream.seen)
                (notes / "alpha.md").write_text("# Alpha\n\nLast words.\n", encoding="utf-8")
                (notes / "beta.md").write_text("# Beta\n\nA new note.\n", encoding="utf-8")
                added = await stream.until(LIST_CHANGED, heard)
                later = [message.get("method") for message in stream.seen[heard : added + 1]]
                assert UPDATED not in later, stream.seen
                nursery.cancel_scope.cancel()


async def test_listen_streams_hear_changes_on_every_worker(tmp_path: Path) -> None:
    notes = notes_index(tmp_path)
    args = ("serve", "--workers", "2", "--subscriptions", "--no-embed")
    body = rpc(
        "subscriptions/listen",
        modern_params(notifications={"resourceSubscriptions": [NOTE]}),
        "listen",
    )
    async with gateway_process(tmp_path, *args) as announced:
        url = announced["url"]
        base = url.removesuffix("/mcp")
        streams = [Stream(), Stream()]
        with trio.fail_after(WAIT_S * 4):
            async with (
                client_on(base) as (one, first),
                client_on(base, avoid=one) as (_, second),
                first.stream(
                    "POST", url, headers=modern_headers("subscriptions/listen"), json=body
                ) as on_one,
                second.stream(
                    "POST", url, headers=modern_headers("subscriptions/listen"), json=body
                ) as on_other,
                trio.open_nursery() as nursery,
            ):
                for stream, response in zip(streams, (on_one, on_other), strict=True):
                    nursery.start_soon(stream.read, response)
                    ack = await stream.until("notifications/subscriptions/acknowledged")
                    assert stream.seen[ack]["params"]["notifications"] == {
                        "resourceSubscriptions": [NOTE]
                    }
                await _edit_until_heard(notes, streams[0])
                for stream in streams:
                    heard = stream.seen[await stream.until(UPDATED)]
                    assert heard["params"]["uri"] == NOTE
                    assert heard["params"]["_meta"][SUBSCRIPTION_ID_KEY] == "listen"
                nursery.cancel_scope.cancel()


async def test_one_get_stream_per_session_holds_across_workers(tmp_path: Path) -> None:
    """A second GET stream is 409 on the other worker too (else it would hear everything twice)."""
    notes_index(tmp_path)
    args = ("serve", "--workers", "2", "--subscriptions", "--no-embed", "--no-watch")
    stream_headers = {"accept": "text/event-stream", "mcp-protocol-version": LEGACY}
    async with gateway_process(tmp_path, *args) as announced:
        url = announced["url"]
        base = url.removesuffix("/mcp")
        with trio.fail_after(WAIT_S * 4):
            async with client_on(base) as (holder, first):
                opened = await first.post(url, headers=legacy_headers(), json=initialize_body())
                session = opened.headers["mcp-session-id"]
                await _post(first, url, session, rpc("notifications/initialized", None, None))
                headers = {**stream_headers, "mcp-session-id": session}
                async with first.stream("GET", url, headers=headers) as held:
                    assert held.status_code == 200
                    async with (
                        client_on(base, avoid=holder) as (other, second),
                        second.stream("GET", url, headers=headers) as refused,
                    ):
                        assert other != holder
                        assert refused.status_code == 409  # not a second stream on this worker
                        body = json.loads(await refused.aread())
                        assert body["error"]["message"] == (
                            "A GET stream is already open for this session"
                        )
            # Once the first stream is gone, another worker may open one.
            for _ in range(100):
                async with (
                    client_on(base, avoid=holder) as (_, third),
                    third.stream("GET", url, headers=headers) as again,
                ):
                    if again.status_code == 200:
                        break
                    assert again.status_code == 409  # the old one is still closing
                await trio.sleep(0.1)
            else:
                raise AssertionError("the ended stream's claim was never let go")


async def test_the_listen_cap_per_caller_counts_every_worker(tmp_path: Path) -> None:
    """16 listen streams split over two workers are the caller's share: a 17th is refused."""
    notes_index(tmp_path)
    args = ("serve", "--workers", "2", "--subscriptions", "--no-embed", "--no-watch")
    body = rpc("subscriptions/listen", modern_params(notifications={}), "listen")
    headers = modern_headers("subscriptions/listen")
    async with gateway_process(tmp_path, *args) as announced:
        url = announced["url"]
        base = url.removesuffix("/mcp")
        with trio.fail_after(WAIT_S * 4):
            async with AsyncExitStack() as streams, trio.open_nursery() as nursery:
                pids: list[int] = []
                for index in range(MAX_LISTENS):
                    avoid = pids[-1] if index % 2 and pids else None
                    pid, client = await streams.enter_async_context(client_on(base, avoid=avoid))
                    response = await streams.enter_async_context(
                        client.stream("POST", url, headers=headers, json=body)
                    )
                    assert response.status_code == 200
                    stream = Stream()
                    nursery.start_soon(stream.read, response)
                    await stream.until("notifications/subscriptions/acknowledged")
                    pids.append(pid)
                assert len(set(pids)) == 2  # shared by both workers
                for worker in set(pids):  # the 17th is refused on either worker
                    async with client_on(base, avoid=next(p for p in pids if p != worker)) as (
                        pid,
                        client,
                    ):
                        assert pid == worker
                        async with client.stream("POST", url, headers=headers, json=body) as no:
                            kind = no.headers.get("content-type", "")
                            assert not kind.startswith("text/event-stream"), "a 17th stream"
                            refused = json.loads(await no.aread())
                        assert refused["error"]["data"] == {"maxListens": MAX_LISTENS}
                nursery.cancel_scope.cancel()
