"""The connection an engine call runs on: taken by the engine, bound for the whole call.

Surfaces hold no connection. An engine method asks its kernel for one
(:meth:`~gno_trio.engine.kernel.EngineKernel.connection`), which is the
connection already bound to the running call when there is one, else a
pooled connection bound for the block: every statement of one call, however
many engine modules it passes through, runs on one connection (and so can
read one snapshot), and a nested method never opens a second one by
accident. A module that needs a connection of its own beside the call's (a
receipt written while a read snapshot is open) takes it from the pool
directly.

An async caller runs a call through a :class:`CallSlot`: the worker thread
takes the pooled connection when it starts (so queued calls hold none),
binds it for the call, and gives it back when the call ends, whatever its
outcome; the caller, cancelled, calls :meth:`CallSlot.cancel`, which
interrupts the statement running on the call's connection. The binding is a
context variable, so it is the calling thread's alone.

A call may also run statements on another database (team mode's PostgreSQL
store): each connection it borrows there is registered with the call
(:func:`interruptible`) while it is lent, so the same cancel stops a
statement running there too.
"""

from __future__ import annotations

import contextlib
import enum
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

from gno_trio.engine.store.database import ConnectionPool

T = TypeVar("T")

_bound: ContextVar[tuple[ConnectionPool, sqlite3.Connection] | None] = ContextVar(
    "gno_trio_bound_connection", default=None
)
_running: ContextVar[CallSlot | None] = ContextVar("gno_trio_call_slot", default=None)


@contextlib.contextmanager
def bound_connection(pool: ConnectionPool) -> Iterator[sqlite3.Connection]:
    """The connection bound to the running call, else one of ``pool`` bound for the block.

    A binding serves only the pool it came from: a call on one index that
    reads another (``?index=`` refs) reads it through the other's own pool.
    """
    binding = _bound.get()
    if binding is not None and binding[0] is pool:
        yield binding[1]
        return
    with pool.connection() as owned:
        token = _bound.set((pool, owned))
        try:
            yield owned
        finally:
            _bound.reset(token)


class CallAbandoned(Exception):
    """The call was cancelled before its thread started: the work is skipped."""


@contextlib.contextmanager
def interruptible(stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, cancelling the running call also calls ``stop``.

    ``stop`` ends a statement on a connection of another database that the
    block holds; it is called from another thread, and never once the block
    is over (the block's end waits for a ``stop`` in progress), so it cannot
    reach a statement of the connection's next user. Outside a call it is
    never called. A call already cancelled takes no further connection:
    ``CallAbandoned``.
    """
    slot = _running.get()
    if slot is None:
        yield
        return
    stopper = _Stopper(stop)
    slot.add(stopper)
    try:
        yield
    finally:
        stopper.retire()
        slot.remove(stopper)


class _Stopper:
    """One connection a call holds on another database, and whether it still does."""

    __slots__ = ("_live", "_lock", "_stop")

    def __init__(self, stop: Callable[[], None]) -> None:
        self._stop = stop
        self._lock = threading.Lock()
        self._live = True

    def fire(self) -> None:
        """Run ``stop`` in a thread of its own (it may wait on the network)."""
        threading.Thread(target=self._fire, name="gno-trio-cancel", daemon=True).start()

    def _fire(self) -> None:
        with self._lock:
            if self._live:
                self._stop()

    def retire(self) -> None:
        with self._lock:
            self._live = False


class _Phase(enum.Enum):
    PENDING = "pending"  # the worker thread has not started the work yet
    RUNNING = "running"  # the work holds the connection
    DONE = "done"  # the connection is (being) handed back by whoever owned it last


class CallSlot:
    """One engine call's pooled connection, and who must give it back.

    The connection is taken by the worker thread itself, so only calls that
    run hold a connection: a burst of queued requests waits for its threads
    without opening one connection each. The thread and a cancelling caller
    then race for that connection: the thread may not have started, may be
    mid-statement, or may just have finished and released it. The lock makes
    each of those a single decision, so the connection is returned exactly
    once and :meth:`cancel` only ever interrupts the statement it was meant
    for, never a later user's.
    """

    __slots__ = ("_cancelled", "_conn", "_lock", "_phase", "_pool", "_stoppers")

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._phase = _Phase.PENDING
        self._cancelled = False
        self._stoppers: list[_Stopper] = []

    def run(self, work: Callable[[], T]) -> T:
        """Worker thread: ``work()`` on the call's own connection, given back afterwards.

        Raises :class:`CallAbandoned` without running ``work`` when the call
        was cancelled before its thread got here.
        """
        conn = self._start()
        token = _bound.set((self._pool, conn))
        running = _running.set(self)
        try:
            return work()
        finally:
            _running.reset(running)
            _bound.reset(token)
            self._finish()

    def cancel(self) -> None:
        """The awaiting caller is gone.

        Not started: the thread, if it ever runs, sees this and does nothing.
        Running: the statement is interrupted (and any the call runs on
        another database, see :func:`interruptible`), and the thread releases
        the connection once it has unwound. Done: nothing is left to do.
        """
        with self._lock:
            self._cancelled = True
            if self._phase is _Phase.PENDING:
                self._phase = _Phase.DONE
            elif self._phase is _Phase.RUNNING and self._conn is not None:
                # Under the lock, so the thread cannot hand the connection to a
                # new user between this check and the interrupt.
                self._conn.interrupt()
                for stopper in self._stoppers:
                    stopper.fire()

    def add(self, stopper: _Stopper) -> None:
        with self._lock:
            if self._cancelled:
                raise CallAbandoned
            self._stoppers.append(stopper)

    def remove(self, stopper: _Stopper) -> None:
        with self._lock:
            self._stoppers.remove(stopper)

    def _start(self) -> sqlite3.Connection:
        with self._lock:
            if self._phase is not _Phase.PENDING:
                raise CallAbandoned
            conn = self._pool.acquire()
            self._conn = conn
            self._phase = _Phase.RUNNING
        return conn

    def _finish(self) -> None:
        with self._lock:
            self._phase = _Phase.DONE
            conn, self._conn = self._conn, None
        if conn is not None:
            self._pool.release(conn)


__all__ = ["CallAbandoned", "CallSlot", "bound_connection", "interruptible"]
