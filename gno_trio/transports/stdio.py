"""MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, served with trio.

One reader task frames lines (:class:`~gno_trio.protocol.framing.LineBuffer`),
decodes them, admits requests through the sans-IO
:class:`~gno_trio.protocol.connection.StdioConnection`, and starts one task per
request in the connection's nursery, answered by the rule HTTP shares
(:func:`~gno_trio.transports.answering.answer`). Lines are never interleaved: a line goes
straight to a stdout pipe only when nothing is queued or being written ahead of
it (one non-blocking ``write``, with no task switch between the check and the
write); otherwise it queues for the one writer task, which also takes whatever
part of a line the pipe did not accept, ahead of anything queued later. A
request is cancelled by cancelling its own scope, and because a response is
sent from inside that scope, a cancelled request can never produce a response
line.

Shutdown: stdin EOF or SIGTERM/SIGINT stops reading; every request already
read is still answered, each bounded by its own deadline
(:mod:`~gno_trio.transports.deadlines`: past it, a ``-32000`` error answers
it); a second signal cancels them all. Queued lines then get
``drain_timeout`` seconds to reach the client; the function returns 0.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Mapping
from typing import Any, Final

import trio

from gno_trio.protocol.connection import INITIALIZE, StdioConnection
from gno_trio.protocol.errors import (
    INVALID_REQUEST,
    ProtocolError,
    internal_error,
)
from gno_trio.protocol.framing import Framed, LineBuffer, LineTooLong
from gno_trio.protocol.jsonrpc import (
    DecodeFailure,
    Notification,
    Request,
    RequestId,
    Response,
    decode_line,
    encode_answer,
    encode_error,
    encode_notification,
)
from gno_trio.protocol.names import CANCELLED_NOTIFICATION
from gno_trio.protocol.subscriptions import (
    LISTEN_LIFETIME_SECONDS,
    MAX_LISTENS,
    SUBSCRIPTIONS_LISTEN,
    ListenFilter,
    ResourceSubscriptions,
    too_many_listens,
)
from gno_trio.protocol.versions import Era
from gno_trio.server.context import RequestContext
from gno_trio.server.dispatch import McpApp
from gno_trio.transports.answering import answer
from gno_trio.transports.deadlines import ANSWER_DEADLINE_SECONDS, InFlightDeadlines
from gno_trio.transports.stdio_streams import process_streams
from nurseries.bytebudget import ByteBudget

logger = logging.getLogger("gno_trio.transports.stdio")

DEFAULT_MAX_LINE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_DRAIN_TIMEOUT: Final = 10.0
_READ_CHUNK: Final = 64 * 1024
_OUTBOX_SIZE: Final = 256
MAX_IN_FLIGHT: Final = 32
"""Requests served at once; the next one is not read until one finishes (pipe backpressure)."""
OUTBOX_BYTES: Final = 32 * 1024 * 1024
"""Answer bytes waiting for a client that is slow to read stdout; producers wait beyond it."""


class _Listen:
    """An open ``subscriptions/listen`` stream: its filter and the scope of its lifetime timer."""

    __slots__ = ("filter", "timer")

    def __init__(self, listen_filter: ListenFilter) -> None:
        self.filter = listen_filter
        self.timer = trio.CancelScope()


class _InFlight:
    """A running request: the scope a client cancellation cancels, and its context."""

    __slots__ = ("cancellable", "context", "scope")

    def __init__(self, *, cancellable: bool) -> None:
        self.scope = trio.CancelScope()
        self.cancellable = cancellable
        self.context: RequestContext | None = None


def _cancel_target(params: Mapping[str, Any] | None) -> RequestId | None:
    request_id = params.get("requestId") if params is not None else None
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return request_id
    return None


def _error_line(request_id: RequestId | None, code: int, message: str) -> bytes:
    return encode_error(request_id, {"code": code, "message": message})


class _StdioServer:
    """One connection's tasks: a reader, a writer, one task per request, a signal watcher."""

    def __init__(
        self,
        app: McpApp,
        stdin: trio.abc.ReceiveStream,
        stdout: trio.abc.SendStream,
        *,
        max_line_bytes: int,
        session_id: str,
        drain_timeout: float,
        answer_deadline: float,
    ) -> None:
        self._app = app
        self._stdin = stdin
        self._stdout = stdout
        # A file descriptor to write lines to directly (None: every line goes through the writer).
        self._stdout_fd = stdout.fileno() if isinstance(stdout, trio.lowlevel.FdStream) else None
        self._max_line_bytes = max_line_bytes
        self._session_id = session_id
        self._drain_timeout = drain_timeout
        self._deadlines = InFlightDeadlines(answer_deadline)
        self._connection = StdioConnection(
            legacy_methods=app.legacy_methods, modern_methods=app.modern_methods
        )
        # Open listen streams by request id; they hold no request slot.
        self._listens: dict[RequestId, _Listen] = {}
        self._services: trio.Nursery | None = None
        # Offered only with subscriptions switched on (--subscriptions).
        self._subscriptions = ResourceSubscriptions() if app.subscriptions else None
        self._in_flight: dict[RequestId, _InFlight] = {}
        self._outbox, self._outbox_reader = trio.open_memory_channel[bytes](_OUTBOX_SIZE)
        self._outbox_bytes = ByteBudget(OUTBOX_BYTES)
        self._slots = trio.Semaphore(MAX_IN_FLIGHT)
        self._requests: trio.Nursery | None = None
        self._everything = trio.CancelScope()
        self._writer_done = trio.Event()

    async def run(self, *, handle_signals: bool) -> None:
        feed = self._app.change_feed if self._app.subscriptions else None
        stop_listening = (
            await feed.listen(self._deliver_changes, self._stop_notifying)
            if feed is not None
            else None
        )
        try:
            await self._serve(handle_signals=handle_signals)
        finally:
            if stop_listening is not None:
                stop_listening()

    async def _serve(self, *, handle_signals: bool) -> None:
        with self._everything:
            async with trio.open_nursery() as services:
                self._services = services
                services.start_soon(self._write_loop)
                reading = trio.CancelScope()
                if handle_signals:
                    await services.start(self._watch_signals, reading)
                async with self._outbox, trio.open_nursery() as requests:
                    self._requests = requests
                    with reading:
                        await self._read_loop()
                    # Input is over: every listen stream ends gracefully.
                    await self._complete_listens()
                    # Input is over: each request read so far runs until its own deadline.
                    self._deadlines.arm_all()
                # The outbox is closed: the writer flushes what is queued, then ends.
                with trio.move_on_after(self._drain_timeout):
                    await self._writer_done.wait()
                services.cancel_scope.cancel()

    # -- reading -----------------------------------------------------------------------

    async def _read_loop(self) -> None:
        framing = LineBuffer(self._max_line_bytes)
        while True:
            try:
                chunk = await self._stdin.receive_some(_READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                chunk = b""
            if not chunk:
                break
            for event in framing.feed(chunk):
                await self._handle(event)
        last = framing.finish()
        if last is not None:
            await self._handle(last)

    async def _handle(self, event: Framed) -> None:
        if isinstance(event, LineTooLong):
            logger.warning("dropped an input line longer than %d bytes", self._max_line_bytes)
            await self._emit(
                _error_line(
                    None,
                    INVALID_REQUEST,
                    f"Message exceeds the {self._max_line_bytes}-byte line limit",
                )
            )
            return
        message = decode_line(event)
        try:
            if isinstance(message, Request):
                await self._start_request(message)
            elif isinstance(message, Notification):
                self._on_notification(message)
            elif isinstance(message, DecodeFailure):
                await self._emit(_error_line(message.id, message.code, message.message))
            elif isinstance(message, Response):
                logger.debug(
                    "dropped a response to id %r: this server sends no requests", message.id
                )
        except Exception:
            # A safety net, never the plan: one message must not end the connection.
            logger.exception("an input message could not be handled")
            if isinstance(message, Request):
                await self._emit(encode_error(message.id, internal_error().to_error_object()))

    async def _emit(self, line: bytes) -> None:
        """Send one line: at once when nothing waits ahead of it, else through the writer.

        A cancelled caller raises here instead of sending. Queued lines stay
        within the outbox's byte budget.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._write_now(line):
            return
        await self._outbox_bytes.acquire(len(line))
        try:
            await self._outbox.send(line)
        except BaseException:
            self._outbox_bytes.release(len(line))
            raise

    def _write_now(self, line: bytes) -> bool:
        """Write ``line`` to a stdout file descriptor now; False when it must queue instead.

        Only when no byte is queued or being written (then this line is next in
        order), and without waiting: a pipe that is full refuses the line, which
        then queues; a pipe that takes part of it leaves the rest to the writer,
        which sends it before anything queued after it. A broken pipe queues the
        line too, so the writer meets the error and stops the server.
        """
        fd = self._stdout_fd
        if fd is None or self._outbox_bytes.held:
            return False
        try:
            written = os.write(fd, line)
        except OSError:
            return False
        if written < len(line):
            rest = line[written:]
            held = self._outbox_bytes.try_acquire(len(rest))
            assert held, "nothing is held, so any line fits"
            self._outbox.send_nowait(rest)
        return True

    # -- requests ----------------------------------------------------------------------

    async def _start_request(self, request: Request) -> None:
        # Waiting here stops reading stdin: a flooding client meets its own pipe's limit.
        try:
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            await self._slots.acquire()
        try:
            started = await self._admit_and_start(request)
        except BaseException:
            self._slots.release()
            raise
        if not started:
            self._slots.release()

    async def _admit_and_start(self, request: Request) -> bool:
        """Start ``request``'s task (it owns the slot from then on); False if refused."""
        if request.id in self._in_flight or request.id in self._listens:
            await self._emit(
                _error_line(request.id, INVALID_REQUEST, "Request id is already in use")
            )
            return False
        try:
            admission = self._connection.admit(request.method, request.params)
        except ProtocolError as exc:
            await self._emit(encode_error(request.id, exc.to_error_object()))
            return False
        if admission.method == SUBSCRIPTIONS_LISTEN:
            await self._open_listen(request)
            return False  # a stream, not a request: it gives its slot back at once
        # The spec forbids cancelling initialize; its answer is always sent.
        entry = _InFlight(cancellable=request.method != INITIALIZE)
        self._in_flight[request.id] = entry
        context = RequestContext.from_admission(
            admission,
            session_id=self._session_id,
            request_id=request.id,
            send_notification=self._send_notification,
            subscriptions=self._subscriptions,
        )
        entry.context = context
        assert self._requests is not None
        self._requests.start_soon(self._serve_request, request, entry, context)
        return True

    async def _serve_request(
        self, request: Request, entry: _InFlight, context: RequestContext
    ) -> None:
        try:
            # The request's own scope is its deadline's sending scope: a client's
            # cancellation and the drain's deadline both end it.
            with self._deadlines.track(entry.scope) as deadline, entry.scope:
                answered = await answer(self._app, request, context, deadline)
                # Sent from inside the request's scope: once the client has
                # cancelled, this raises instead of committing a response.
                await self._emit(answered.line)
        finally:
            context.finish()
            del self._in_flight[request.id]
            self._slots.release()

    async def _send_notification(self, method: str, params: Mapping[str, Any]) -> None:
        await self._emit(encode_notification(method, params))

    async def _deliver_changes(self, entries: Any) -> None:
        """Tell the client about the changes it subscribed to or listens for."""
        subscriptions = self._subscriptions
        if self._connection.era is Era.MODERN:
            notices = [
                notice
                for listen in list(self._listens.values())
                for notice in listen.filter.notices(entries)
            ]
        elif subscriptions is not None and self._connection.legacy.initialized:
            notices = subscriptions.notices(entries)
        else:
            return
        for method, params in notices:
            await self._emit(encode_notification(method, params))

    async def _open_listen(self, request: Request) -> None:
        """Acknowledge a ``subscriptions/listen`` and keep it open (bounded in number and time)."""
        try:
            if len(self._listens) >= MAX_LISTENS:
                raise too_many_listens()
            listen = _Listen(ListenFilter(request.id, request.params))
        except ProtocolError as exc:
            await self._emit(encode_error(request.id, exc.to_error_object()))
            return
        method, params = listen.filter.acknowledgement()
        # The acknowledgement is queued before the stream can hear any change.
        await self._emit(encode_notification(method, params))
        self._listens[request.id] = listen
        assert self._services is not None
        self._services.start_soon(self._listen_lifetime, request.id, listen)

    async def _listen_lifetime(self, request_id: RequestId, listen: _Listen) -> None:
        with listen.timer:
            await trio.sleep(LISTEN_LIFETIME_SECONDS)
            if self._listens.get(request_id) is listen:
                del self._listens[request_id]
                await self._emit(encode_answer(request_id, listen.filter.completion()))

    async def _complete_listens(self) -> None:
        listens, self._listens = self._listens, {}
        for request_id, listen in listens.items():
            listen.timer.cancel()
            await self._emit(encode_answer(request_id, listen.filter.completion()))

    def _stop_notifying(self) -> None:
        # The client stopped reading stdout: it hears no more changes.
        self._subscriptions = None
        self._listens.clear()

    # -- notifications -----------------------------------------------------------------

    def _on_notification(self, notification: Notification) -> None:
        if notification.method == CANCELLED_NOTIFICATION:
            self._cancel(_cancel_target(notification.params))
            return
        self._connection.on_notification(notification.method)
        self._app.handle_notification(notification.method, notification.params)

    def _cancel(self, request_id: RequestId | None) -> None:
        # Unknown, finished or malformed targets are ignored silently, as the spec asks.
        listen = self._listens.pop(request_id, None) if request_id is not None else None
        if listen is not None:  # the client ends its listen stream: no answer is owed
            listen.timer.cancel()
            return
        entry = self._in_flight.get(request_id) if request_id is not None else None
        if entry is None or not entry.cancellable:
            return
        entry.scope.cancel()
        if entry.context is not None:
            entry.context.cancellation.cancel()

    # -- writing and signals -----------------------------------------------------------

    async def _write_loop(self) -> None:
        async with self._outbox_reader:
            async for line in self._outbox_reader:
                lines = [line]
                while True:
                    try:
                        lines.append(self._outbox_reader.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                try:
                    await self._stdout.send_all(b"".join(lines))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    logger.info("stdout closed by the client; stopping")
                    self._everything.cancel()
                    return
                finally:
                    self._outbox_bytes.release(sum(len(part) for part in lines))
        self._writer_done.set()

    async def _watch_signals(
        self,
        reading: trio.CancelScope,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """First signal: stop reading and drain. Second: cancel in-flight requests too."""
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            task_status.started()
            async for signum in signals:
                logger.info("received %s; shutting down", signal.Signals(signum).name)
                if reading.cancel_called and self._requests is not None:
                    self._requests.cancel_scope.cancel()
                reading.cancel()


async def serve_stdio(
    app: McpApp,
    *,
    stdin: trio.abc.ReceiveStream | None = None,
    stdout: trio.abc.SendStream | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    session_id: str | None = None,
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    answer_deadline: float = ANSWER_DEADLINE_SECONDS,
    handle_signals: bool | None = None,
) -> int:
    """Serve ``app`` over stdio until stdin ends or SIGTERM arrives; returns the exit status.

    ``stdin``/``stdout`` default to the process's own (stdout is then reserved for
    JSON-RPC: anything else printed goes to stderr). ``session_id`` is the memory
    session identity, by default the app's instance id. Signals are handled by
    default when running in the main thread. ``answer_deadline`` is each request's
    own deadline once input has ended; ``drain_timeout`` how long queued lines
    then get to reach the client.
    """
    if handle_signals is None:
        handle_signals = threading.current_thread() is threading.main_thread()
    try:
        async with process_streams(stdin, stdout) as (input_stream, output_stream):
            server = _StdioServer(
                app,
                input_stream,
                output_stream,
                max_line_bytes=max_line_bytes,
                session_id=session_id if session_id is not None else app.instance_id,
                drain_timeout=drain_timeout,
                answer_deadline=answer_deadline,
            )
            await server.run(handle_signals=handle_signals)
    except Exception:
        logger.exception("stdio transport failed")
        return 1
    return 0


__all__ = ["DEFAULT_MAX_LINE_BYTES", "serve_stdio"]
