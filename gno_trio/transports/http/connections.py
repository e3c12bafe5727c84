"""Connections: hypercorn's HTTP protocol on trio, with an accept loop and writes that end.

hypercorn's own trio worker leaves two holes a hostile or merely broken client
can use to pin the server, so the gateway runs hypercorn's connection handler
(:class:`hypercorn.trio.tcp_server.TCPServer`) under its own loop instead:

* **Writes have a deadline.** hypercorn shields every socket write from
  cancellation, so a client that stops reading would hold its request (and
  the admission slots behind it) forever. Here each 64 KiB of an answer, and
  each SSE event, must be taken by the client within ``write_timeout``
  seconds; otherwise the connection is closed, the application sees
  ``http.disconnect`` and its slots come back. What the socket's buffer
  takes at once (a whole small answer, nearly always) is handed to the
  kernel directly: no deadline can pass there, so it needs neither the
  deadline's scope nor a trip through the scheduler, which together cost
  more than the rest of a small answer's write.
* **accept backs off when descriptors run out.** trio's listener loop logs a
  traceback every 100 ms while ``accept`` fails with ``EMFILE``; here the
  loop waits with a growing pause (up to one second) and logs once per
  episode, and once more when it accepts again. Pending connections wait in
  the kernel's backlog meanwhile.

* **HTTP/1.1 only.** hypercorn would switch a connection to HTTP/2 on the
  h2 preface (prior knowledge) or on ``Upgrade: h2c``. MCP's Streamable HTTP
  needs nothing HTTP/2 offers (one request per POST, SSE for streams), and an
  h2 stream whose client grants no flow-control window never reaches a socket
  write, so no write deadline could free the admission slots such streams
  hold. Here the preface (any request line that is not HTTP/1.0 or 1.1) is
  answered ``505 HTTP Version Not Supported`` and the connection closed, and
  ``Upgrade: h2c`` is ignored (RFC 9110 lets a server ignore ``Upgrade``):
  the request is answered in HTTP/1.1.

* **A request hears its client hang up without a task of its own.**
  hypercorn tells an application that its client left only by an
  ``http.disconnect`` message in the request's receive queue, so the
  application would need a second task per request reading that queue. Here
  the message also fires the request's :class:`DisconnectHook` (in the
  scope's extensions under :data:`DISCONNECT_EXTENSION`), which cancels the
  work at once: spawning and cancelling a watcher task was half of what the
  gateway itself spent on a small request.

Idle keep-alive connections are closed by hypercorn after its
``keep_alive_timeout``; a client that sent ``Connection: close`` has its
connection closed after the answer.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import h11
import hypercorn.config
import trio
from hypercorn.events import Closed, Event, RawData
from hypercorn.protocol import ProtocolWrapper
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState, H11SendableEvent
from hypercorn.utils import wrap_app

logger = logging.getLogger("gno_trio.transports.http")

WRITE_CHUNK: Final = 64 * 1024
"""The unit of progress a write deadline applies to."""

HTTP_VERSIONS: Final = frozenset({b"1.0", b"1.1"})
"""The request-line versions served; anything else (the h2 preface included) gets 505."""
_VERSION_NOT_SUPPORTED: Final = 505

_CAPACITY_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
_FIRST_PAUSE: Final = 0.05
_MAX_PAUSE: Final = 1.0


class PatientListener(trio.abc.Listener[trio.SocketStream]):
    """A socket listener whose ``accept`` waits out descriptor exhaustion instead of failing.

    ``starved_episodes`` counts how often accepting stopped for lack of
    descriptors (or memory); each episode is logged once.
    """

    def __init__(self, inner: trio.SocketListener) -> None:
        self._inner = inner
        self.starved = False
        self.starved_episodes = 0

    async def accept(self) -> trio.SocketStream:
        pause = _FIRST_PAUSE
        while True:
            try:
                stream = await self._inner.accept()
            except OSError as exc:
                if exc.errno not in _CAPACITY_ERRNOS:
                    raise
                if not self.starved:
                    self.starved = True
                    self.starved_episodes += 1
                    logger.warning(
                        "cannot accept connections: %s (%s); waiting for connections to close",
                        errno.errorcode.get(exc.errno or 0, "?"),
                        os.strerror(exc.errno or 0),
                    )
                await trio.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
                continue
            if self.starved:
                self.starved = False
                logger.warning("accepting connections again")
            return stream

    async def aclose(self) -> None:
        await self._inner.aclose()


DISCONNECT_EXTENSION: Final = "gno.disconnect"
"""The scope extension holding a request's :class:`DisconnectHook` (absent under other servers)."""


class DisconnectHook:
    """Calls back, once, when the client of one request has gone.

    ``gone`` stays set once the ``http.disconnect`` arrived, so work that
    starts afterwards can tell at once. hypercorn also reports a disconnect
    right after the final body of a complete exchange; the callback decides
    whether that still matters.
    """

    __slots__ = ("gone", "on_gone")

    def __init__(self) -> None:
        self.gone = False
        self.on_gone: Callable[[], None] | None = None

    def fire(self) -> None:
        if self.gone:
            return
        self.gone = True
        if self.on_gone is not None:
            self.on_gone()


AppPut = Callable[[Any], Awaitable[None]]


class _HookedTaskGroup:
    """hypercorn's per-connection task group, giving each request a :class:`DisconnectHook`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def spawn_app(self, app: Any, config: Any, scope: Any, send: Any) -> AppPut:
        hook = DisconnectHook()
        scope.setdefault("extensions", {})[DISCONNECT_EXTENSION] = hook
        put: AppPut = await self._inner.spawn_app(app, config, scope, send)

        async def app_put(message: Any) -> None:
            if message["type"] == "http.disconnect":
                hook.fire()
            await put(message)

        return app_put

    def spawn(self, func: Callable[..., Any], *args: Any) -> None:
        self._inner.spawn(func, *args)


class _NotHttp11(Exception):
    """A request line of another HTTP version (``PRI * HTTP/2.0`` opens the h2 preface)."""


def _is_sized(response: h11.Response) -> bool:
    """Whether an answer's head carries its body's length (so the whole body follows it)."""
    return any(name == b"content-length" for name, _ in response.headers)


class _Http11Protocol(H11Protocol):  # type: ignore[misc]
    """hypercorn's HTTP/1.1 protocol, minus its switches to HTTP/2, writing a sized answer's
    head with its body.

    An answer with a ``Content-Length`` is sent whole at once (a JSON reply,
    an error, a 202), so its head waits for nothing by being held until its
    first piece of body or its end: one write per small answer instead of two.
    A streamed answer (an SSE stream, which may stay silent for minutes) has
    no length and its head goes out at once, as the client waits on it.
    """

    _held_head: bytes = b""

    async def _send_h11_event(self, event: H11SendableEvent) -> None:
        try:
            data = self.connection.send(event)
        except h11.LocalProtocolError:
            if self.connection.their_state != h11.ERROR:
                raise
            data = b""
        if isinstance(event, h11.Response) and _is_sized(event):
            self._held_head = data
            return
        if self._held_head:
            data, self._held_head = self._held_head + data, b""
        if data:  # not the empty end of a Content-Length answer
            await self.send(RawData(data=data))

    async def _check_protocol(self, event: h11.Request) -> None:
        # Called on each request line before a stream is made for it. hypercorn
        # would answer ``Upgrade: h2c`` with 101 here and take the preface as h2.
        if event.http_version not in HTTP_VERSIONS:
            raise _NotHttp11

    async def refuse_version(self) -> None:
        """Answer 505 (``Connection: close``) and close the connection."""
        await self._send_error_response(_VERSION_NOT_SUPPORTED)
        await self.send(Closed())


class _Http11Only:
    """Stands where hypercorn's :class:`ProtocolWrapper` would: every connection stays HTTP/1.1.

    hypercorn picks HTTP/2 for a TLS connection whose ALPN chose ``h2`` and
    switches to it from HTTP/1.1; here neither happens.
    """

    def __init__(self, wrapper: ProtocolWrapper) -> None:
        self._h11 = _Http11Protocol(
            wrapper.app,
            wrapper.config,
            wrapper.context,
            _HookedTaskGroup(wrapper.task_group),  # type: ignore[arg-type]  # spawns only
            wrapper.state,
            wrapper.ssl,
            wrapper.client,
            wrapper.server,
            wrapper.send,
        )

    async def initiate(self) -> None:
        await self._h11.initiate()

    async def handle(self, event: Event) -> None:
        try:
            await self._h11.handle(event)
        except _NotHttp11:
            await self._h11.refuse_version()


class _DeadlineConnection(TCPServer):  # type: ignore[misc]
    """hypercorn's connection handler: HTTP/1.1 only, and socket writes give up after a deadline."""

    write_timeout: float = 10.0
    on_write_timeout: Callable[[], None] = staticmethod(lambda: None)

    # Not a ProtocolWrapper, but what the handler calls of it: initiate and handle.
    @property  # type: ignore[override]
    def protocol(self) -> _Http11Only:
        return self._http11

    @protocol.setter
    def protocol(self, wrapper: ProtocolWrapper) -> None:
        # hypercorn builds its protocol wrapper per connection; it is replaced at once.
        self._http11 = _Http11Only(wrapper)

    async def protocol_send(self, event: Event) -> None:
        if not isinstance(event, RawData):
            await super().protocol_send(event)
            return
        if not event.data:  # the end of a Content-Length answer: nothing to write
            return
        async with self.send_lock:
            delivered = await self._send_before_deadline(event.data)
        if not delivered:
            await self.protocol.handle(Closed())

    async def _send_before_deadline(self, data: bytes) -> bool:
        """Write ``data``; False when the connection is gone or was closed for not reading."""
        stream: trio.SocketStream = self.stream  # type: ignore[assignment]  # never TLS here
        try:
            taken = os.write(stream.socket.fileno(), data)  # non-blocking: what fits now
        except BlockingIOError:
            taken = 0
        except OSError:  # reset, closed, or its descriptor already gone
            return False
        if taken == len(data):
            return True
        view = memoryview(data)[taken:]
        try:
            for start in range(0, len(view), WRITE_CHUNK):
                # Shielded like hypercorn's own write (a half-written frame would
                # corrupt the connection), but bounded by its own deadline.
                with trio.CancelScope(shield=True) as scope:
                    scope.deadline = trio.current_time() + self.write_timeout
                    await stream.send_all(view[start : start + WRITE_CHUNK])
                if scope.cancelled_caught:
                    self.on_write_timeout()
                    logger.info(
                        "closed a connection whose client took no data for %.1f s",
                        self.write_timeout,
                    )
                    with trio.CancelScope(shield=True):
                        await trio.aclose_forcefully(stream)
                    return False
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return False
        return True


AsgiApp = Callable[[Any, Any, Any], Awaitable[None]]


async def serve_connections(
    app: AsgiApp,
    config: hypercorn.config.Config,
    sock: socket.socket,
    *,
    write_timeout: float,
    shutdown_trigger: Callable[[], Awaitable[object]],
    on_write_timeout: Callable[[], None] = lambda: None,
    task_status: trio.TaskStatus[PatientListener] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve HTTP/1.1 connections accepted on the listening ``sock`` until shutdown.

    After ``shutdown_trigger`` returns, no connection is accepted; idle ones
    close at once, busy ones get ``config.graceful_timeout`` seconds.
    """
    wrapped = wrap_app(app, config.wsgi_max_body_size, "asgi")
    context = WorkerContext(None)
    state = ConnectionState({})
    listener = PatientListener(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))

    def connection(stream: trio.SocketStream) -> _DeadlineConnection:
        # hypercorn annotates the stream as SSL; plain sockets are what it gets here too.
        handler = _DeadlineConnection(wrapped, config, context, state, stream)  # type: ignore[arg-type]
        handler.write_timeout = write_timeout
        handler.on_write_timeout = on_write_timeout
        return handler

    async with trio.open_nursery() as connections:
        try:
            async with trio.open_nursery() as accepting:
                accepting.start_soon(
                    partial(
                        trio.serve_listeners, connection, [listener], handler_nursery=connections
                    )
                )
                task_status.started(listener)
                await shutdown_trigger()
                accepting.cancel_scope.cancel()
        finally:
            await context.terminated.set()
            connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout


__all__ = [
    "DISCONNECT_EXTENSION",
    "WRITE_CHUNK",
    "DisconnectHook",
    "PatientListener",
    "serve_connections",
]
