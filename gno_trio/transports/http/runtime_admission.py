"""Handles on the resident runtime, so shutdown can refuse new work and wait for the last."""

from __future__ import annotations

import trio

from nurseries import Draining


class RuntimeAdmission:
    """Handles on the resident runtime: one per dispatch, none once it is closing.

    The transport capacity gate already bounds and queues requests; this is
    the runtime's own count of who is using it, so shutdown can refuse new
    work (503) and wait for the last handle before the engine closes. Taking
    a handle is synchronous (a counter), so it costs no scheduler round trip.
    """

    __slots__ = ("_idle", "active", "closing", "limit", "refused")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self.refused = 0
        self.closing = False
        self._idle: trio.Event | None = None

    def __enter__(self) -> None:
        if self.closing or self.active >= self.limit:
            self.refused += 1
            raise Draining("the resident runtime is closing")
        self.active += 1

    def __exit__(self, *exc_info: object) -> None:
        self.active -= 1
        if self.active == 0 and self._idle is not None:
            self._idle.set()

    async def drain(self, timeout: float) -> bool:
        """Refuse new handles; wait up to ``timeout`` seconds for the last one to go."""
        self.closing = True
        if self.active:
            self._idle = trio.Event()
            with trio.move_on_after(timeout):
                await self._idle.wait()
        return self.active == 0


__all__ = ["RuntimeAdmission"]
