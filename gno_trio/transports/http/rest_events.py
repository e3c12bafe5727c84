"""``GET /api/events``: server-sent job progress and document changes.

Events (each ``data`` one JSON object):

* ``ready``: first, says what the stream carries (``changes`` is false when the
  gateway has no change feed);
* ``job``: a job's status (``gno_job_status``'s answer) whenever it changed,
  the final one included;
* ``change``: one entry of the change journal (``gno_changes``'s shape) as
  the folder watch, a sync or a write tool records it;
* ``end``: last, when the server ends the stream, with its ``reason``:
  ``lifetime`` (the stream lived its time: open a new one) or ``draining``
  (the gateway is stopping). A stream its client left, or stopped reading,
  just ends.

The stream is bounded like the 2026-07-28 listen stream: it holds no capacity
or runtime slot while it waits (a runtime handle only for each quick job
poll), at most :data:`MAX_LISTENS` per caller identity (on all workers), a
server-side lifetime, a bounded queue (a burst waits in it for a client that
reads; a client that stops reading loses its connection at the socket write
deadline, and with it the stream and its share), and it ends when the
gateway drains or the client hangs up.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec
import trio

from gno_trio.protocol.errors import ProtocolError
from gno_trio.transports.http.rest_wire import api_error, request_context
from gno_trio.transports.http.sse_outbox import SseOutbox
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import SSE_HEADERS, Refused, boundary_reply
from nurseries import Draining

logger = logging.getLogger("gno_trio.transports.http")

JOB_POLL_SECONDS: Final = 1.0
"""How often a stream looks at the jobs (one quick in-memory read)."""
_encoder = msgspec.json.Encoder()


def sse(event: str, data: Mapping[str, Any]) -> bytes:
    """One named SSE event with a JSON ``data`` line."""
    return b"event: " + event.encode("ascii") + b"\ndata: " + _encoder.encode(data) + b"\n\n"


_RECENT: Final = 20
"""Finished jobs one look reads (a poll sees every job that ends between two looks)."""


class _Jobs:
    """What this stream last said about each job, to send only what changed.

    Jobs that had finished before the stream opened are never reported; every
    later one is, until its final status has been sent.
    """

    def __init__(self, call: HttpCall) -> None:
        self._call = call
        self._context = request_context(call)
        self._said: dict[str, bytes] = {}
        self._settled: set[str] | None = None
        self.served = "gno_list_jobs" in call.state.app.tools

    async def _result(self, tool: str, arguments: dict[str, Any]) -> Mapping[str, Any] | None:
        state = self._call.state
        with state.readers:
            try:
                result = await state.app.run_tool(tool, arguments, self._context)
            except ProtocolError:
                return None
        return None if result.is_error else result.structured

    async def changed(self) -> list[bytes]:
        """The ``job`` events since the last look (raises ``Draining`` once the runtime closes)."""
        listing = await self._result("gno_list_jobs", {"limit": _RECENT})
        if listing is None:
            return []
        active = [job["jobId"] for job in listing.get("active", ())]
        finished = [job["jobId"] for job in listing.get("recent", ())]
        if self._settled is None:
            self._settled = set(finished)
        events: list[bytes] = []
        for job_id in dict.fromkeys([*active, *finished]):
            if job_id in self._settled:
                continue
            status = await self._result("gno_job_status", {"jobId": job_id})
            if status is None:
                continue
            encoded = sse("job", status)
            if self._said.get(job_id) != encoded:
                self._said[job_id] = encoded
                events.append(encoded)
            if status.get("status") != "running":
                self._settled.add(job_id)
                self._said.pop(job_id, None)
        self._settled.intersection_update([*active, *finished])  # bounded by the listing
        return events


async def serve(call: HttpCall) -> None:
    """Take a per-identity share, then stream until the lifetime, a drain or the client ends it."""
    state = call.state
    book = state.event_streams
    identity = call.exchange.caller.identity
    if state.listens.closing.is_set() or state.supervisor.closed:
        raise Refused(boundary_reply(503, "draining"))
    share = await book.take(identity)
    if share is None:
        raise Refused(
            api_error(
                429,
                "TOO_MANY_STREAMS",
                f"At most {book.per_identity} event streams per caller",
                headers=((b"retry-after", b"5"),),
            )
        )
    try:
        await _stream(call)
    finally:
        await book.give_back(identity, share)


async def _stream(call: HttpCall) -> None:
    state = call.state
    send = call.exchange.send
    feed = state.app.change_feed
    jobs = _Jobs(call)
    outbox = SseOutbox()
    drained = trio.Event()
    gone = trio.Event()

    async def deliver(entries: Sequence[Mapping[str, Any]]) -> None:
        for entry in entries:
            await outbox.put(sse("change", entry))

    async def poll_jobs() -> None:
        while True:
            try:
                for chunk in await jobs.changed():
                    await outbox.put(chunk)
            except Draining:
                drained.set()
                return
            await trio.sleep(JOB_POLL_SECONDS)

    async def hang_up() -> None:
        while (await call.exchange.receive())["type"] != "http.disconnect":
            pass
        gone.set()

    headers = [*SSE_HEADERS, (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    stop = await feed.listen(deliver, outbox.dropped.set) if feed is not None else (lambda: None)
    try:
        ready = {"changes": feed is not None, "jobs": jobs.served}
        await send({"type": "http.response.body", "body": sse("ready", ready), "more_body": True})
        await outbox.pump(
            send,
            keepalive=state.settings.stream_keepalive,
            lifetime=state.settings.stream_lifetime,
            ends=(state.listens.closing, drained, gone),
            beside=(hang_up, poll_jobs) if jobs.served else (hang_up,),
        )
    finally:
        stop()
    last = b""
    if not (gone.is_set() or outbox.dropped.is_set()):
        draining = state.listens.closing.is_set() or drained.is_set()
        last = sse("end", {"reason": "draining" if draining else "lifetime"})
    await send({"type": "http.response.body", "body": last, "more_body": False})


__all__ = ["JOB_POLL_SECONDS", "serve", "sse"]
