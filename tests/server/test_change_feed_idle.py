"""The change feed reads the journal only while somebody listens.

It exists in every serving process (the REST event stream listens to it), so
an idle one must cost nothing: no engine call while nobody listens, which is
what lets a resident at rest give its memory back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import trio
import trio.testing

from gno_trio.runtime import Runtime
from gno_trio.server.change_feed import ChangeFeed


class _Journal:
    """A runtime stand-in whose engine answers change pages and counts the calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.entries: list[Mapping[str, Any]] = []
        self.engine = self
        self.documents = self

    def changes(self, *, since: str | None = None, limit: int) -> Mapping[str, Any]:
        latest = str(len(self.entries))
        fresh = [] if since is None else self.entries[int(since) :][:limit]
        return {
            "changes": fresh,
            "page": {"latestCursor": latest, "cursorExpired": False},
        }

    async def run(self, work: Callable[[], Any]) -> Any:
        self.calls += 1
        return work()


async def test_the_feed_reads_nothing_while_nobody_listens_and_hears_after_a_join(
    autojump_clock: trio.testing.MockClock,
) -> None:
    journal = _Journal()
    feed = ChangeFeed(cast(Runtime, journal), poll_seconds=0.5)
    heard: list[Sequence[Mapping[str, Any]]] = []

    async def deliver(entries: Sequence[Mapping[str, Any]]) -> None:
        heard.append(entries)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run)
        await trio.sleep(60)
        assert journal.calls == 0
        stop = await feed.listen(deliver, lambda: None)
        await trio.sleep(1)
        journal.entries.append({"id": "1", "kind": "create"})
        await trio.sleep(2)
        assert heard == [[{"id": "1", "kind": "create"}]]
        stop()
        await trio.sleep(1)
        calls = journal.calls
        await trio.sleep(60)
        assert journal.calls == calls
        nursery.cancel_scope.cancel()


class _SlowFirstRead(_Journal):
    """A journal whose first read (where the journal ends) waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.release = trio.Event()

    async def run(self, work: Callable[[], Any]) -> Any:
        self.calls += 1
        if self.calls == 1:
            await self.release.wait()
        return work()


async def test_a_change_journaled_as_soon_as_a_listener_joined_is_heard(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Joining returns once the reader holds its place: a stream says ``ready`` after it,
    so a change its client makes right then is news, not history it never hears."""
    journal = _SlowFirstRead()
    feed = ChangeFeed(cast(Runtime, journal), poll_seconds=0.5)
    heard: list[Sequence[Mapping[str, Any]]] = []

    async def deliver(entries: Sequence[Mapping[str, Any]]) -> None:
        heard.append(entries)

    async def let_the_first_read_go() -> None:
        await trio.sleep(1)
        journal.release.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run)
        nursery.start_soon(let_the_first_read_go)
        await feed.listen(deliver, lambda: None)
        journal.entries.append({"id": "1", "kind": "create"})
        await trio.sleep(2)
        assert heard == [[{"id": "1", "kind": "create"}]]
        nursery.cancel_scope.cancel()
