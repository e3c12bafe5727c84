"""The one object a server process builds at startup and passes down.

It owns the opened engine and the identity of this server instance, and it
is the only bridge from async code to the synchronous engine: every engine
call runs in a worker thread with its own pooled connection, and a
cancelled request interrupts that connection's running SQLite statement
instead of letting it run to completion.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import trio

from gno_trio.engine.api import Engine

T = TypeVar("T")


class _Abandoned(Exception):
    """The request was cancelled before its thread started: skip the work."""


@dataclass(eq=False)
class Runtime:
    engine: Engine
    write_enabled: bool = False
    tool_profile: str = "full"
    instance_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    limiter: trio.CapacityLimiter = field(default_factory=lambda: trio.CapacityLimiter(8))

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` in a worker thread; cancellation interrupts SQLite.

        On cancellation the thread is abandoned after ``interrupt()``; it gives
        its connection back to the pool itself once the interrupted statement
        has unwound, so a connection is never shared by two threads.
        """
        pool = self.engine.pool
        conn = pool.acquire()
        abandoned = False

        def in_thread() -> T:
            try:
                if abandoned:
                    raise _Abandoned
                return work(conn)
            finally:
                pool.release(conn)

        try:
            return await trio.to_thread.run_sync(
                in_thread, abandon_on_cancel=True, limiter=self.limiter
            )
        except trio.Cancelled:
            abandoned = True
            conn.interrupt()
            raise
