"""Document changes, fanned out to the connections that listen for them.

The source is the engine's change journal, not the folder watch: every
writer lands there (this resident's watch, another resident holding the
write lease, ``update`` from a shell, our own write tools), so a listener
hears each change once whoever made it. One task reads the journal after
its cursor and hands each batch of entries to every listener. While nobody
listens it reads nothing at all (so an idle resident stays at rest); the
first listener wakes it, and it starts from the journal's end. A listener
that cannot take
a batch within the write deadline (a client that stopped reading) is
dropped: its ``dropped`` callback runs and it hears nothing more.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import trio

from gno_trio.runtime import Runtime

logger = logging.getLogger("gno_trio.changes")

POLL_SECONDS: Final = 0.5
"""How often the journal is read while somebody listens."""
WRITE_DEADLINE_SECONDS: Final = 10.0
"""How long one listener may take to accept one batch before it is dropped."""
JOIN_SECONDS: Final = 5.0
"""How long joining waits for the reader to hold its place in the journal."""
_BATCH: Final = 500

Entries = Sequence[Mapping[str, Any]]
Deliver = Callable[[Entries], Awaitable[None]]


@dataclass(slots=True)
class _Listener:
    deliver: Deliver
    dropped: Callable[[], None]


class ChangeFeed:
    """The journal reader of one serving process, and its listeners."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        poll_seconds: float = POLL_SECONDS,
        write_deadline: float = WRITE_DEADLINE_SECONDS,
    ) -> None:
        self._runtime = runtime
        self._poll_seconds = poll_seconds
        self._write_deadline = write_deadline
        self._listeners: dict[int, _Listener] = {}
        self._ids = itertools.count()
        self._cursor: str | None = None
        self._someone_listens = trio.Event()
        self._placed = trio.Event()

    @property
    def following(self) -> bool:
        """Whether the reader holds its place in the journal: a change journaled from
        now on reaches the listeners (false while nobody listens, and briefly after
        the first listener joins, until the journal's end is read)."""
        return self._cursor is not None

    def __len__(self) -> int:
        return len(self._listeners)

    async def listen(self, deliver: Deliver, dropped: Callable[[], None]) -> Callable[[], None]:
        """Hear every change journaled once this returns; returns the call that stops listening.

        The first listener wakes the reader, which then reads where the journal
        ends: joining waits for that (at most :data:`JOIN_SECONDS`, in case the
        journal cannot be read), so a change written right after a stream said
        it is ready is never taken for history.
        """
        key = next(self._ids)
        self._listeners[key] = _Listener(deliver, dropped)
        self._someone_listens.set()
        with trio.move_on_after(JOIN_SECONDS):
            await self._placed.wait()

        def stop() -> None:
            self._listeners.pop(key, None)
            self._quiet_if_unheard()

        return stop

    async def run(self) -> None:
        """Read the journal and fan it out until cancelled.

        While nobody listens it sleeps without reading; when the first listener
        joins it starts from the journal's end, so a new listener hears what
        changed after it joined, not the history.
        """
        while True:
            if not self._listeners:
                self._cursor = None
                self._placed = trio.Event()
                await self._someone_listens.wait()
            try:
                if self._cursor is None:
                    self._cursor = await self._latest()
                    self._placed.set()
                else:
                    entries = await self._read(self._cursor)
                    if entries:
                        await self._fan_out(entries)
            except Exception as exc:
                logger.warning("change journal not read: %s", exc)
            await trio.sleep(self._poll_seconds)

    async def _latest(self) -> str:
        engine = self._runtime.engine
        page = await self._runtime.run(lambda: engine.documents.changes(limit=1))
        return str(page["page"]["latestCursor"])

    async def _read(self, since: str) -> list[Mapping[str, Any]]:
        engine = self._runtime.engine
        page = await self._runtime.run(lambda: engine.documents.changes(since=since, limit=_BATCH))
        changes: list[Mapping[str, Any]] = list(page["changes"])
        meta = page["page"]
        if meta["cursorExpired"]:
            self._cursor = str(meta["latestCursor"])
        elif changes:
            self._cursor = str(changes[-1]["id"])
        return changes

    async def _fan_out(self, entries: Entries) -> None:
        # Side by side: one slow listener costs the others nothing.
        async with trio.open_nursery() as nursery:
            for key, listener in list(self._listeners.items()):
                nursery.start_soon(self._deliver, key, listener, entries)

    async def _deliver(self, key: int, listener: _Listener, entries: Entries) -> None:
        with trio.move_on_after(self._write_deadline) as scope:
            try:
                await listener.deliver(entries)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                scope.cancel()
        if scope.cancelled_caught:
            logger.info("a change listener did not keep up; dropped")
            self._listeners.pop(key, None)
            self._quiet_if_unheard()
            listener.dropped()

    def _quiet_if_unheard(self) -> None:
        if not self._listeners:
            self._someone_listens = trio.Event()


__all__ = ["ChangeFeed"]
