"""The folder watcher of a resident: the index follows the collection folders.

Every resident (``serve``, ``daemon``, ``mcp``) runs one, unless told not
to. Of all the residents of one data directory, the one holding the watch
lease (see the engine's ``watch_lease``) watches and syncs; the others
follow, see its work through the shared store, and try for the lease every
:data:`FOLLOW_RETRY_S`, so one takes over when the watcher goes away (with
one sync of every collection, whose changes nobody watched meanwhile).

The watching resident:

* surveys the configuration every :data:`SURVEY_S` (one ``stat`` of
  ``index.yml`` when nothing changed): a collection added at run time
  starts its watch (and gets one sync), a removed one stops, a root that
  vanished is reported as failed and its watch resumes, with one sync,
  when it is back;
* keeps one watch per root (:mod:`.source`), and hands each change to the
  engine's rules (scratch files, ``.git/``, the collection's excludes and
  gno-trio's own directories never count) before queueing its path;
* runs one sync at a time, collection by collection, of the paths queued
  since the last (the engine syncs named files alone and walks only for a
  folder moved as a whole, or the root); paths queued during a sync wait
  for the next, so a burst of edits costs a few syncs, not one per file;
  more than :data:`MAX_PENDING_PATHS` of one collection, or a watch that
  had to restart, collapse into one sync of the whole collection;
* waits for the write lease like any writer; when another writer keeps it
  past :data:`LEASE_WAIT_S` the paths stay queued and are tried again.

New chunks get their vectors from the resident's background embedder,
which the watcher rings after every sync that wrote documents (lexical
first, vectors next): a change that lands while it embeds is simply the
next backlog.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import trio

from gno_trio.engine import SyncReport, WatchedRoot, now_iso
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.watch.book import WatchBook
from gno_trio.watch.source import Source, polling_reason, watchfiles_source

logger = logging.getLogger("gno_trio.watch")

SURVEY_S: Final = 2.0
"""How often the watching resident looks at the configured collections and their roots."""
FOLLOW_RETRY_S: Final = 3.0
"""How often a following resident tries to take the watch over."""
PUBLISH_S: Final = 0.5
"""How often the report is written for the other processes, when it changed."""
LEASE_WAIT_S: Final = 1.0
"""How long one sync waits for the write lease before its paths are queued again."""
BUSY_RETRY_S: Final = 0.5
RESTART_S: Final = 2.0
"""Pause before a watch that failed starts again."""
MAX_PENDING_PATHS: Final = 5_000
"""Queued paths of one collection beyond which one sync of the collection does instead."""
WHOLE: Final = "."
"""A queued path meaning "sync the whole collection"."""


@dataclass(eq=False)
class _Watch:
    watched: WatchedRoot
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    stop: trio.Event = field(default_factory=trio.Event)

    def cancel(self) -> None:
        self.stop.set()  # the watch thread returns within its next step
        self.scope.cancel()


class FolderWatcher:
    """One resident's watcher (see the module docstring); :meth:`run` until cancelled."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        source: Source = watchfiles_source,
        catch_up: bool = False,
        survey_seconds: float = SURVEY_S,
        follow_retry_seconds: float = FOLLOW_RETRY_S,
        on_written: Callable[[], None] | None = None,
    ) -> None:
        """``catch_up``: sync every collection when the watch starts (changes made while
        no resident watched); a resident taking the watch over from another always does.
        ``on_written`` is called after each sync that wrote documents (the embedder's bell)."""
        self._runtime = runtime
        self._engine = runtime.engine
        self._source = source
        self._catch_up = catch_up
        self._survey_s = survey_seconds
        self._follow_s = follow_retry_seconds
        self._on_written = on_written
        self.book = WatchBook()
        self._watches: dict[str, _Watch] = {}
        self._wake = trio.Event()
        self._surveyed = False

    # -- the lease ------------------------------------------------------------------------

    def _try_lease(self) -> contextlib.ExitStack | None:
        held = contextlib.ExitStack()
        try:
            held.enter_context(self._engine.watch_lease())
        except GnoError:
            held.close()
            return None
        return held

    async def run(self) -> None:
        """Watch while this resident holds the watch lease; follow while another does."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._stop_threads_when_done)
            catch_up = self._catch_up
            while True:
                held = await trio.to_thread.run_sync(self._try_lease)
                if held is None:
                    self.book.role = "following"
                    await trio.sleep(self._follow_s)
                    catch_up = True  # whatever changed until we take over went unwatched
                    continue
                with held:
                    self.book.role = "watching"
                    logger.info("watching the collection folders")
                    await self._watch(catch_up)

    async def _stop_threads_when_done(self) -> None:
        try:
            await trio.sleep_forever()
        finally:
            for watch in self._watches.values():
                watch.stop.set()

    # -- watching ---------------------------------------------------------------------------

    async def _watch(self, catch_up: bool) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._sync_loop)
            nursery.start_soon(self._publish_loop)
            while True:
                await self._survey(nursery, catch_up)
                await trio.sleep(self._survey_s)

    async def _survey(self, nursery: trio.Nursery, catch_up: bool) -> None:
        """Start, restart and stop watches as the configuration and the roots say now."""
        try:
            roots = await trio.to_thread.run_sync(self._engine.watched_roots)
        except GnoError as error:
            logger.warning("watch survey failed: %s: %s", error.code, error.message)
            return
        book = self.book
        book.expected = [name for _, name, _ in roots]
        fresh = catch_up or self._surveyed  # a collection appearing later gets one sync
        for watched, name, refusal in roots:
            current = self._watches.get(name)
            if watched is None:
                book.failed[name] = refusal or "cannot be watched"
                self._drop(name)
                continue
            if current is not None and current.watched == watched:
                continue
            if current is not None:
                current.cancel()
            watch = _Watch(watched)
            self._watches[name] = watch
            back = name in book.failed
            nursery.start_soon(self._watch_one, watch, fresh or back or current is not None)
        for name in set(self._watches) - set(book.expected):
            self._drop(name)
            book.pending.pop(name, None)
        for name in set(book.failed) - set(book.expected):
            del book.failed[name]
        self._surveyed = True

    def _drop(self, name: str) -> None:
        """Stop the watch of ``name``, if any, and forget what status said of it."""
        watch = self._watches.pop(name, None)
        if watch is not None:
            watch.cancel()
        self.book.active.discard(name)
        self.book.polling.pop(name, None)

    async def _watch_one(self, watch: _Watch, sync_first: bool) -> None:
        """One root's watch; a watch that fails polls instead, or starts again, then syncs."""
        watched, name, book = watch.watched, watch.watched.collection, self.book
        engine = self._engine
        reason = await trio.to_thread.run_sync(
            lambda: polling_reason(watched.root, forced=engine.config.watch.polling)
        )
        if reason is not None:
            book.polling[name] = reason
        if sync_first:
            self._queue(name, WHOLE)
        with watch.scope:
            try:
                while not watch.stop.is_set():
                    try:
                        events = self._source(watched.root, name in book.polling, watch.stop)
                        async with contextlib.aclosing(events):  # type: ignore[type-var]
                            async for changes in events:
                                # The first group (maybe empty) says the watch is up.
                                book.active.add(name)
                                book.failed.pop(name, None)
                                self._take(watched, changes)
                        return
                    except (OSError, RuntimeError) as exc:
                        book.active.discard(name)
                        if name not in book.polling:
                            book.polling[name] = f"the system watch failed ({exc}); polling instead"
                        else:
                            book.failed[name] = f"the watch failed: {exc}"
                        logger.warning("watch of collection %s failed: %s", name, exc)
                        await trio.sleep(RESTART_S)
                        self._queue(name, WHOLE)  # what changed meanwhile was not seen
            finally:
                if self._watches.get(name) is watch:  # not replaced by a newer watch meanwhile
                    book.active.discard(name)
                    book.polling.pop(name, None)

    def _take(self, watched: WatchedRoot, changes: set[tuple[int, str]]) -> None:
        """Queue the paths of one group of changes that may matter."""
        book = self.book
        for _kind, path in changes:
            rel = watched.relevant(path)
            if rel is None:
                book.events_ignored += 1
                continue
            book.events_seen += 1
            book.last_event_at = now_iso()
            self._queue(watched.collection, rel)

    def _queue(self, name: str, rel: str) -> None:
        pending = self.book.pending.setdefault(name, set())
        if WHOLE in pending:
            return
        if rel == WHOLE or len(pending) >= MAX_PENDING_PATHS:
            pending.clear()
            rel = WHOLE
        pending.add(rel)
        self._wake.set()

    # -- syncing ----------------------------------------------------------------------------

    async def _sync_loop(self) -> None:
        book = self.book
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            while True:
                queued = sorted(name for name, paths in book.pending.items() if paths)
                if not queued:
                    break
                for name in queued:  # each queued collection once, then look again
                    paths = book.pending.pop(name, set())
                    if not paths:
                        continue
                    book.syncing = name
                    try:
                        await self._sync(name, paths)
                    finally:
                        book.syncing = None

    async def _sync(self, name: str, paths: set[str]) -> None:
        book = self.book
        engine = self._engine
        ordered = sorted(paths)

        def call() -> SyncReport | None:
            return engine.sync_changed(name, ordered, wait_seconds=LEASE_WAIT_S)

        try:
            report = await self._runtime.run(call)
        except GnoError as error:
            if error.code == "LOCKED":  # another writer: keep the paths, try again soon
                for rel in ordered:
                    self._queue(name, rel)
                await trio.sleep(BUSY_RETRY_S)
                return
            if error.code != "NOT_FOUND" or name in book.expected:
                book.error(name, WHOLE, error.code, error.message)
            return
        except Exception as exc:  # a sync must never end the watch
            logger.exception("watch-triggered sync of %s failed", name)
            book.error(name, WHOLE, "RUNTIME", str(exc))
            return
        if report is None:
            book.idle_batches += 1
            return
        book.syncs += 1
        if report.written and self._on_written is not None:
            self._on_written()
        if WHOLE in paths:
            book.full_syncs += 1
        book.last_sync_at = now_iso()
        book.last_sync = {
            "collection": name,
            "paths": len(paths),
            "changed": report.changed,
            "errors": len(report.errors),
            "durationMs": round(report.duration_ms, 1),
            "at": book.last_sync_at,
        }
        for failure in report.errors:
            book.error(
                name,
                failure.get("relPath", WHOLE),
                failure.get("code", "RUNTIME"),
                failure.get("message", ""),
            )

    # -- telling the other processes --------------------------------------------------------

    async def _publish_loop(self) -> None:
        last: dict[str, Any] | None = None
        while True:
            report = self.book.report()
            if report != last:
                try:
                    await trio.to_thread.run_sync(self._engine.publish_watch, report)
                    last = report
                except (GnoError, OSError) as exc:
                    logger.warning("watch report not written: %s", exc)
            await trio.sleep(PUBLISH_S)


__all__ = ["FolderWatcher"]
