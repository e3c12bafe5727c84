"""Connections: hypercorn's HTTP protocol on trio, with an accept loop and writes that end.

hypercorn's own trio worker leaves two holes a hostile or merely broken client
can use to pin the server, so the gateway runs hypercorn's connection handler
(:class:`hypercorn.trio.tcp_server.TCPServer`) under its own loop instead:

* **Writes have a deadline.** hypercorn shields every socket write from
  cancellation, so a client that stops reading would hold its request (and
  the admission slots behind it) forever. Here each 64 KiB of an answer, and
  each SSE event, must be taken by the client within ``write_timeout``
  seconds; otherwise the connection is closed, the application sees
  ``http.disconnect`` and its slots come back.
* **accept backs off when descriptors run out.** trio's listener loop logs a
  traceback every 100 ms while ``accept`` fails with ``EMFILE``; here the
  loop waits with a growing pause (up to one second) and logs once per
  episode, and once more when it accepts again. Pending connections wait in
  the kernel's backlog meanwhile.

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

import hypercorn.config
import trio
from hypercorn.events import Closed, Event, RawData
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app

logger = logging.getLogger("gno_trio.transports.http")

WRITE_CHUNK: Final = 64 * 1024
"""The unit of progress a write deadline applies to."""

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


class _DeadlineConnection(TCPServer):  # type: ignore[misc]
    """hypercorn's connection handler, except that socket writes give up after a deadline."""

    write_timeout: float = 10.0
    on_write_timeout: Callable[[], None] = staticmethod(lambda: None)

    async def protocol_send(self, event: Event) -> None:
        if not isinstance(event, RawData):
            await super().protocol_send(event)
            return
        async with self.send_lock:
            delivered = await self._send_before_deadline(event.data)
        if not delivered:
            await self.protocol.handle(Closed())

    async def _send_before_deadline(self, data: bytes) -> bool:
        """Write ``data``; False when the connection is gone or was closed for not reading."""
        view = memoryview(data)
        stream: trio.abc.Stream = self.stream
        try:
            for start in range(0, max(len(view), 1), WRITE_CHUNK):
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
    """Serve HTTP/1.1 (and h2) connections accepted on the listening ``sock`` until shutdown.

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


__all__ = ["WRITE_CHUNK", "PatientListener", "serve_connections"]
