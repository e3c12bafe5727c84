"""The index follows the folder: a resident's watcher against real editors' ways of writing.

Each test runs a :class:`~gno_trio.watch.FolderWatcher` over an opened engine
in this process (the same watcher ``serve``, ``daemon`` and ``mcp`` run),
writes files the way editors and tools do, and waits (generously, no timing
asserted) until a search says what a user would see. One test feeds the
watcher its own events to stand in for an event queue that overflowed and
a watch that had to restart.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from gno_trio.config import Config
from gno_trio.config.dirs import Dirs
from gno_trio.engine import BackgroundEmbedder, CaptureRequest, Engine, SearchRequest
from gno_trio.engine.store import lease
from gno_trio.runtime import Runtime
from gno_trio.watch import FolderWatcher
from gno_trio.watch.source import Changes, polling_reason
from tests.conftest import write_corpus
from tests.support.stepped_clock import QueueProbe

WAIT_S = 30.0


def _search(engine: Engine, query: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = engine.search.lexical(SearchRequest(query=query, limit=20))[
        "results"
    ]
    return results


async def _until(check: Callable[[], bool], what: str) -> None:
    with trio.move_on_after(WAIT_S):
        while not await trio.to_thread.run_sync(check):
            await trio.sleep(0.05)
        return
    raise AssertionError(f"not within {WAIT_S} s: {what}")


def _uris(engine: Engine, query: str) -> list[str]:
    return [hit["uri"] for hit in _search(engine, query)]


def _journal(engine: Engine) -> list[tuple[str, str | None, str | None]]:
    """The change journal since the start: (kind, current uri, previous uri) per change."""
    found = engine.documents.changes(since="2000-01-01T00:00:00Z", limit=1000)["changes"]
    return [
        (c["kind"], (c["current"] or {}).get("uri"), (c["previous"] or {}).get("uri"))
        for c in found
    ]


@pytest.fixture
def notes(engine: Engine, tmp_path: Path) -> Path:
    root = write_corpus(
        tmp_path / "notes",
        {
            "a.md": "# Alpha\n\nThe first note about apricots.\n",
            "b.md": "# Beta\n\nA second note about bananas.\n",
            "folder/c.md": "# Gamma\n\nA note about cherries in a folder.\n",
        },
    )
    engine.collections.add(str(root), name="notes")
    engine.sync()
    return root


Body = Callable[[Engine, FolderWatcher], Awaitable[None]]


async def _watching(engine: Engine, body: Body, **options: Any) -> FolderWatcher:
    runtime = Runtime(engine=engine)
    watcher = FolderWatcher(runtime, survey_seconds=0.2, **options)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher.run)
        await _until(lambda: watcher.book.active == {"notes"}, "the watch started")
        await body(engine, watcher)
        nursery.cancel_scope.cancel()
    runtime.jobs.close()
    return watcher


def _documents(engine: Engine) -> int:
    return int(engine.index.status()["totalDocuments"])


async def test_editor_saves_update_the_one_document(engine: Engine, notes: Path) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        count = _documents(engine)
        journaled = len(_journal(engine))

        # VS Code / Obsidian / our own writers: a temporary file renamed over the note.
        (notes / ".gno-tmp-a.md").write_text("# Alpha\n\nNow about avocados.\n")
        os.replace(notes / ".gno-tmp-a.md", notes / "a.md")
        await _until(lambda: _uris(engine, "avocados") == ["gno://notes/a.md"], "atomic save")

        # vim: a swap file, the 4913 probe, the note moved to a backup, a new file written.
        (notes / ".b.md.swp").write_text("swap zucchini")
        (notes / "4913").write_text("")
        (notes / "4913").unlink()
        os.replace(notes / "b.md", notes / "b.md~")
        (notes / "b.md").write_text("# Beta\n\nNow about blueberries.\n")
        (notes / "b.md~").unlink()
        (notes / ".b.md.swp").unlink()
        await _until(lambda: _uris(engine, "blueberries") == ["gno://notes/b.md"], "vim save")

        # Emacs: a lock file beside the note, then an in-place write.
        (notes / ".#a.md").write_text("lock quinces")
        (notes / "a.md").write_text("# Alpha\n\nIn place about almonds.\n")
        await _until(lambda: _uris(engine, "almonds") == ["gno://notes/a.md"], "in-place write")
        (notes / ".#a.md").unlink()

        # None of the scratch files became a document, and no save made a second one.
        assert _uris(engine, "zucchini") == [] and _uris(engine, "quinces") == []
        assert _documents(engine) == count
        assert watcher.book.events_ignored > 0
        # Each save was an update of its document: none was removed and created anew.
        kinds = {kind for kind, _, _ in _journal(engine)[journaled:]}
        assert kinds == {"update"}

    await _watching(engine, body)


async def test_delete_rename_and_folder_move(engine: Engine, notes: Path) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        journaled = len(_journal(engine))

        (notes / "a.md").unlink()
        await _until(lambda: _uris(engine, "apricots") == [], "a deleted note leaves search")

        os.replace(notes / "b.md", notes / "renamed.md")
        await _until(lambda: _uris(engine, "bananas") == ["gno://notes/renamed.md"], "rename")

        shutil.move(notes / "folder", notes / "moved")
        await _until(lambda: _uris(engine, "cherries") == ["gno://notes/moved/c.md"], "move")
        # Renamed and moved notes keep their documents (links, chunks and vectors with them).
        assert _journal(engine)[journaled:] == [
            ("inactivate", "gno://notes/a.md", "gno://notes/a.md"),
            ("rename", "gno://notes/renamed.md", "gno://notes/b.md"),
            ("rename", "gno://notes/moved/c.md", "gno://notes/folder/c.md"),
        ]

        # A folder dropped in whole (its files were never named one by one).
        staged = write_corpus(notes.parent / "staging", {"x/d.md": "# Delta\n\nDates.\n"})
        shutil.move(staged / "x", notes / "dropped")
        await _until(lambda: _uris(engine, "dates") == ["gno://notes/dropped/d.md"], "drop-in")

    await _watching(engine, body)


async def test_excluded_and_git_paths_never_trigger_work(engine: Engine, notes: Path) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        journaled = len(_journal(engine))
        (notes / ".git").mkdir()
        (notes / ".git" / "HEAD.md").write_text("# Head\n\nrefs of figs\n")
        (notes / "node_modules").mkdir()
        (notes / "node_modules" / "pkg.md").write_text("# Pkg\n\nfigs again\n")
        (notes / "note.md~").write_text("figs backup")
        # A real note last: once it is indexed, the others were seen and passed over.
        (notes / "real.md").write_text("# Real\n\nGrapes.\n")
        await _until(lambda: _uris(engine, "grapes") == ["gno://notes/real.md"], "real note")
        assert _uris(engine, "figs") == []
        assert {uri for _, uri, _ in _journal(engine)[journaled:]} == {"gno://notes/real.md"}
        assert watcher.book.events_ignored >= 3

    await _watching(engine, body)


async def test_an_exclude_rule_added_at_run_time_is_followed(engine: Engine, notes: Path) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        restarted = watcher.book.full_syncs

        def exclude_drafts(config: Config) -> Config:
            (notes_entry,) = config.collections
            drafts = attrs.evolve(notes_entry, exclude=(*notes_entry.exclude, "drafts"))
            return attrs.evolve(config, collections=(drafts,))

        await trio.to_thread.run_sync(lambda: engine.update_config(exclude_drafts))
        # The watch starts again under the new rules (and syncs the collection once).
        await _until(lambda: watcher.book.full_syncs > restarted, "the watch restarted")
        journaled, ignored = len(_journal(engine)), watcher.book.events_ignored
        (notes / "drafts").mkdir()
        (notes / "drafts" / "wip.md").write_text("# Draft\n\nKumquats unfinished.\n")
        (notes / "kept.md").write_text("# Kept\n\nKumquats for real.\n")
        await _until(lambda: _uris(engine, "kumquats") == ["gno://notes/kept.md"], "kept note")
        assert {uri for _, uri, _ in _journal(engine)[journaled:]} == {"gno://notes/kept.md"}
        assert watcher.book.events_ignored > ignored  # the draft cost no work

    await _watching(engine, body)


async def test_notes_written_through_our_own_tools_are_not_synced_twice(
    engine: Engine, notes: Path
) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        request = CaptureRequest(collection="notes", content="Raspberries.", title="Captured")
        done = await trio.to_thread.run_sync(lambda: engine.notes.capture(request))
        assert _uris(engine, "raspberries") == [done["uri"]]  # indexed by the capture itself
        await _until(lambda: watcher.book.idle_batches >= 1, "the watcher saw the capture")
        assert watcher.book.syncs == 0 and watcher.book.events_seen >= 1
        assert [kind for kind, uri, _ in _journal(engine) if uri == done["uri"]] == ["create"]

    await _watching(engine, body)


async def test_vectors_follow_the_lexical_update(engine: Engine, notes: Path) -> None:
    """Lexical first, vectors next: the resident's embedder picks up what the watch synced,
    and an edit landing while it embeds the previous one is embedded too."""

    def backlog() -> int:
        return sum(waiting for _, waiting in engine.vectors.counts().values())

    def nearest(query: str) -> list[str]:
        found = engine.search.vector(SearchRequest(query=query, limit=1))["results"]
        return [hit["uri"] for hit in found]

    # The embedder looks by itself only once an hour here: the watcher's bell wakes it.
    embedder = BackgroundEmbedder(engine.vectors, poll_seconds=3600, wake_seconds=3600)

    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        await _until(lambda: backlog() == 0, "the corpus embedded")
        kayak = notes / "kayak.md"
        kayak.write_text("# Kayaking\n\nPaddle a kayak along the coast.\n")
        await _until(lambda: _uris(engine, "kayak") == ["gno://notes/kayak.md"], "lexical")
        kayak.write_text("# Climbing\n\nClimb the rock face roped to a partner.\n")
        await _until(
            lambda: (
                backlog() == 0
                and nearest("scaling a cliff with a rope") == ["gno://notes/kayak.md"]
            ),
            "the second edit's vectors",
        )

    embedder.start()
    try:
        await _watching(engine, body, on_written=embedder.nudge)
    finally:
        embedder.close()


async def test_an_overflow_or_a_restarted_watch_syncs_the_collection_once(
    engine: Engine, notes: Path
) -> None:
    """Events the watch never delivered are found by one sync of the whole collection."""
    feed_send, feed_receive = trio.open_memory_channel[Changes | Exception](10)

    async def fake_source(root: Path, polling: bool, stop: trio.Event) -> AsyncIterator[Changes]:
        yield set()  # the watch is up
        async for item in feed_receive:
            if isinstance(item, Exception):
                raise item
            yield item

    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        # Written behind the watch's back: no event names it.
        (notes / "unseen.md").write_text("# Unseen\n\nKiwis.\n")
        root = str(Path(os.path.realpath(notes)))
        await feed_send.send({(1, root)})  # the root itself: "look again" (an overflow)
        await _until(lambda: _uris(engine, "kiwis") == ["gno://notes/unseen.md"], "rescan")
        assert watcher.book.full_syncs == 1

        (notes / "unseen2.md").write_text("# Unseen too\n\nLimes.\n")
        await feed_send.send(OSError(28, "inotify watch limit reached"))
        await _until(lambda: _uris(engine, "limes") == ["gno://notes/unseen2.md"], "restart")
        assert watcher.book.full_syncs == 2
        assert "notes" in watcher.book.polling  # it polls now, and says so
        assert "inotify watch limit" in watcher.book.report()["pollingCollections"][0]["reason"]

    await _watching(engine, body, source=fake_source)


async def test_a_file_that_cannot_be_indexed_is_listed_and_the_watch_goes_on(
    engine: Engine, notes: Path
) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        (notes / "broken.pdf").write_bytes(b"%PDF-1.4 this is no pdf at all")
        await _until(
            lambda: any(e["relPath"] == "broken.pdf" for e in watcher.book.report()["errors"]),
            "the broken file listed",
        )
        (notes / "after.md").write_text("# After\n\nMangoes.\n")
        await _until(lambda: _uris(engine, "mangoes") == ["gno://notes/after.md"], "goes on")

        def published() -> bool:  # what every process and the CLI read, a moment later
            watched = engine.index.watcher()
            return (
                watched.get("role") == "watching"
                and watched["activeCollections"] == ["notes"]
                and any(e["relPath"] == "broken.pdf" and e["message"] for e in watched["errors"])
                and engine.index.status()["background"]["watcher"] == watched
            )

        await _until(published, "status lists it")

    await _watching(engine, body)


def test_without_a_watching_resident_the_watcher_is_idle(engine: Engine, notes: Path) -> None:
    watched = engine.index.watcher()
    status = engine.index.status()
    assert watched["activeCollections"] == [] and "role" not in watched
    assert watched["lastSyncAt"] == status["lastUpdated"] is not None
    assert status["background"]["watcher"] == watched


async def test_a_root_that_vanishes_is_reported_and_followed_again(
    engine: Engine, notes: Path
) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        away = notes.parent / "away"
        os.replace(notes, away)
        await _until(lambda: "notes" in watcher.book.failed, "the missing root reported")
        (away / "meanwhile.md").write_text("# Meanwhile\n\nPapayas.\n")
        os.replace(away, notes)
        await _until(lambda: watcher.book.active == {"notes"}, "the watch resumed")
        await _until(lambda: _uris(engine, "papayas") == ["gno://notes/meanwhile.md"], "synced")

    await _watching(engine, body)


async def test_collections_added_and_removed_at_run_time(
    engine: Engine, notes: Path, tmp_path: Path
) -> None:
    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        more = write_corpus(tmp_path / "more", {"m.md": "# More\n\nNectarines.\n"})
        await trio.to_thread.run_sync(lambda: engine.collections.add(str(more), name="more"))
        await _until(lambda: watcher.book.active == {"notes", "more"}, "the new watch")
        await _until(lambda: _uris(engine, "nectarines") == ["gno://more/m.md"], "first sync")
        (more / "n.md").write_text("# Next\n\nOranges.\n")
        await _until(lambda: _uris(engine, "oranges") == ["gno://more/n.md"], "followed")

        await trio.to_thread.run_sync(lambda: engine.collections.remove("more"))
        await _until(lambda: watcher.book.active == {"notes"}, "the watch stopped")

    await _watching(engine, body)


async def test_a_second_resident_follows_and_takes_over(dirs: Dirs, notes: Path) -> None:
    """Two residents of one data directory: one watches, the other takes over when it stops."""
    first = Engine.open(dirs=dirs)
    second = Engine.open(dirs=dirs)
    try:
        one = FolderWatcher(Runtime(engine=first), survey_seconds=0.2)
        two = FolderWatcher(Runtime(engine=second), survey_seconds=0.2, follow_retry_seconds=0.2)
        first_scope = trio.CancelScope()

        async def run_first() -> None:
            with first_scope:
                await one.run()

        async with trio.open_nursery() as outer:
            outer.start_soon(run_first)
            await _until(lambda: one.book.active == {"notes"}, "the first watches")
            outer.start_soon(two.run)
            await _until(lambda: two.book.role == "following", "the second follows")
            (notes / "seen.md").write_text("# Seen\n\nPears.\n")
            await _until(lambda: _uris(second, "pears") == ["gno://notes/seen.md"], "shared")
            assert two.book.syncs == 0  # it saw the first one's sync through the store
            first_scope.cancel()  # the first resident stops: its watch lease goes with it
            await _until(lambda: two.book.active == {"notes"}, "the second takes over")
            (notes / "later.md").write_text("# Later\n\nQuinoa.\n")
            await _until(lambda: _uris(first, "quinoa") == ["gno://notes/later.md"], "followed")
            outer.cancel_scope.cancel()
    finally:
        first.close()
        second.close()


async def test_polling_follows_too_and_says_why(engine: Engine, notes: Path) -> None:
    config = engine.location.config_path
    config.write_text(config.read_text(encoding="utf-8") + "watch:\n  polling: true\n")

    async def body(engine: Engine, watcher: FolderWatcher) -> None:
        reasons = watcher.book.report()["pollingCollections"]
        assert reasons == [{"collection": "notes", "reason": "watch.polling is set in the config"}]
        (notes / "polled.md").write_text("# Polled\n\nQuinces.\n")
        await _until(lambda: _uris(engine, "quinces") == ["gno://notes/polled.md"], "polled")

    await _watching(engine, body)


def test_network_file_systems_are_polled(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "/dev/sda1 / ext4 rw 0 0\nserver:/export /mnt/shared nfs4 rw 0 0\n"
        "//nas/notes /mnt/shared/smb cifs rw 0 0\n"
    )

    def reason(path: str) -> str | None:
        return polling_reason(Path(path), forced=False, mounts_file=mounts)

    assert "nfs4" in (reason("/mnt/shared/notes") or "")
    assert "cifs" in (reason("/mnt/shared/smb/a") or "")  # the innermost mount decides
    assert reason("/home/me/notes") is None
    assert reason("/mnt/sharedother") is None


def test_a_change_indexed_by_the_writer_the_watch_waited_for_is_not_synced_again(
    engine: Engine, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's sync waits for the write lease while a capture-like writer holds it,
    writes its file and indexes it; then finds nothing left to do."""
    import threading

    probe = QueueProbe()
    monkeypatch.setattr(lease, "time", probe)
    outcome: list[object] = []
    with engine.writing() as held:
        (notes / "written.md").write_text("# Written\n\nBy a writer holding the lease.\n")
        waiting = threading.Thread(
            target=lambda: outcome.append(
                engine.sync_changed("notes", ["written.md"], wait_seconds=60)
            )
        )
        waiting.start()
        assert probe.queued.wait(60)  # it checked (work to do) and queues for the lease
        engine.sync_paths("notes", ["written.md"], lease=held)
    waiting.join(timeout=60)
    assert outcome == [None]
    assert _uris(engine, "writer") == ["gno://notes/written.md"]
