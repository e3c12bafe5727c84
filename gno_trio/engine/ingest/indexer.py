"""An opened index that indexes: collections reconciled with ``index.yml``, synced, re-read.

:class:`IndexingKernel` adds ``reconcile``, ``sync`` and ``sync_paths`` to the
kernel. Every writer that changes what is indexed comes through them: the
engine's own (the ingest face builds on this class), the writers that index
the one file they just wrote (:mod:`.written`, the memory service). The rules:

* Everything runs under the write lease
  (:meth:`~gno_trio.engine.kernel.EngineKernel.writing`); a caller holding it
  passes its :class:`~gno_trio.engine.store.lease.HeldLease` along.
* A sync first brings the database's collections in line with the config
  (:meth:`~IndexingKernel.reconcile`), then syncs each collection whose root may still be
  indexed (a refused root is that collection's error, never the whole sync's).
* The document index (tantivy, when it ranks) follows every batch a sync
  commits, and a file indexed by :meth:`~IndexingKernel.sync_paths` is searchable when it
  returns, even while the caller keeps the lease for more writes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Container, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gno_trio.config import Collection
from gno_trio.engine import journal
from gno_trio.engine.ingest import pending
from gno_trio.engine.ingest.roots import checked_root
from gno_trio.engine.ingest.spec import CollectionSpec, ProgressFn, SyncReport
from gno_trio.engine.ingest.upkeep import compact_full_text
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store.database import StoreError, write_transaction
from gno_trio.engine.store.lease import HeldLease
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.ingest.documents.runner import ConversionRunner
    from gno_trio.engine.ingest.watching import WatchedRoot

logger = logging.getLogger("gno_trio.engine")


def spec_for(collection: Collection) -> CollectionSpec:
    """The sync engine's view of a configured collection."""
    return CollectionSpec(
        name=collection.name,
        path=Path(collection.path),
        pattern=collection.pattern,
        include=tuple(collection.include),
        exclude=tuple(collection.exclude),
        language_hint=collection.language_hint,
        egress_policy=collection.effective_egress_policy,
        memory_managed=bool(collection.memory_managed),
    )


class IndexingKernel(EngineKernel):
    """The kernel and the indexing every writer above it runs (see the module docstring)."""

    def _heal_at_open(self) -> None:
        super()._heal_at_open()
        self.finish_marked_writes()

    def finish_marked_writes(self) -> None:
        """Index the notes a killed capture or remember left unindexed (see :mod:`.pending`).

        Runs when an index opens, only while the write lease is free (a
        running writer's marker is its own), and syncs each marked collection.
        """
        left = pending.left_behind(self.location)
        if not left:
            return
        with contextlib.suppress(GnoError), self.lease(wait_seconds=0) as held:
            configured = {collection.name for collection in self.config.collections}
            for marker, name in left:
                if name in configured:
                    try:
                        self.sync([name], lease=held)
                    except (GnoError, StoreError, OSError) as exc:
                        logger.warning(
                            "an interrupted write in %s is not indexed yet: %s", name, exc
                        )
                        continue
                with contextlib.suppress(FileNotFoundError):
                    marker.unlink()

    def reconcile(
        self, *, lease: HeldLease | None = None, expected: Container[str] = ()
    ) -> dict[str, Any]:
        """Bring the database's collections in line with ``index.yml``; what changed.

        A collection added to or edited in the file gets its row; one deleted
        from the file leaves search, reads and links (its documents are
        soft-deleted, journaled). When the file is missing nothing is
        removed: a vanished config is not a request to empty the index.
        Every change is logged as a warning, except those of the collections
        in ``expected`` (the ones the calling writer itself just changed).
        """
        # The writers (rows, sync, conversion) load with the first write, not with every open.
        from gno_trio.engine.ingest.collection_rows import reconcile_collections

        with self.writing(lease):
            config = self.config
            exists = self.location.config_path.exists()
            with self.pool.connection() as conn:
                changes = reconcile_collections(
                    conn, [spec_for(c) for c in config.collections], drop_missing=exists
                )
        for name in changes["added"]:
            if name not in expected:
                logger.warning("index.yml: collection %s added to the index", name)
        for name in changes["updated"]:
            if name not in expected:
                logger.warning("index.yml: collection %s settings applied to the index", name)
        for entry in changes["removed"]:
            if entry["collection"] in expected:
                continue
            logger.warning(
                "index.yml: collection %s removed from the index (%d documents inactive)",
                entry["collection"],
                entry["documents"],
            )
        return changes

    def sync(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: ProgressFn | None = None,
        lease: HeldLease | None = None,
        wait_seconds: float | None = None,
    ) -> list[SyncReport]:
        """Bring the index in line with the files of ``names`` (every collection by default).

        Runs under the write lease (``LOCKED`` after ``wait_seconds``), after
        reconciling the collections with the config.
        """
        from gno_trio.engine.ingest.sync import sync_collection

        with self.writing(lease, wait_seconds=wait_seconds) as held:
            self.reconcile(lease=held)
            targets = (
                [self.collection(n) for n in names] if names else list(self.config.collections)
            )
            reports = []
            with (
                self.connection() as c,
                self._conversion_runner() as runner,
                self._document_indexing(c, self.config.search.backend) as indexing,
            ):
                for collection in targets:
                    try:
                        checked_root(collection.path, self.location.dirs)
                    except GnoError as error:
                        report = SyncReport(collection=collection.name)
                        report.errors.append(
                            {"relPath": ".", "code": error.code, "message": error.message}
                        )
                        reports.append(report)
                        continue
                    spec = spec_for(collection)
                    reports.append(
                        sync_collection(c, spec, progress=progress, runner=runner, hooks=indexing)
                    )
                with contextlib.suppress(StoreError), write_transaction(c):
                    journal.prune(self.stores.journal(c))
                with contextlib.suppress(StoreError):  # an optimisation: never fails a sync
                    compact_full_text(c, sum(report.changed for report in reports))
            return reports

    def sync_paths(
        self,
        name: str,
        rel_paths: Sequence[str],
        *,
        lease: HeldLease | None = None,
    ) -> SyncReport:
        """Index just these files of one collection (after a write through gno-trio).

        The files are searchable when this returns, even while the caller
        keeps the lease for more writes.
        """
        from gno_trio.engine.ingest.sync import sync_collection

        with self.writing(lease):
            collection = self.collection(name)
            with self.connection() as c, self._conversion_runner() as runner:
                report = sync_collection(
                    c, spec_for(collection), only=set(rel_paths), runner=runner
                )
            self.catch_up_documents(prune=True)
            return report

    def watch_lease(self) -> contextlib.AbstractContextManager[HeldLease]:
        """The data directory's watch lease (``LOCKED`` at once while another resident holds it)."""
        from gno_trio.engine.ingest.watch_report import watch_lease

        return watch_lease(self.location.dirs.data)

    def publish_watch(self, report: dict[str, Any]) -> None:
        """Tell every process serving this data directory what the watcher is doing."""
        from gno_trio.engine.ingest.watch_report import publish

        publish(self.location.dirs.data, report)

    def watched_roots(self) -> list[tuple[WatchedRoot | None, str, str | None]]:
        """Every configured collection as a watcher sees it now: ``(root, name, refusal)``.

        ``root`` is None and ``refusal`` says why when the root may not be
        indexed now (gone, unreadable, refused); gno-trio's own directories
        are never looked at inside a root.
        """
        from gno_trio.engine.ingest.watching import watched_root

        dirs = self.location.dirs
        found: list[tuple[WatchedRoot | None, str, str | None]] = []
        for collection in self.config.collections:
            try:
                checked_root(collection.path, dirs)
            except GnoError as error:
                found.append((None, collection.name, f"{error.code}: {error.message}"))
                continue
            own = (dirs.data, dirs.cache, dirs.config)
            found.append((watched_root(spec_for(collection), own), collection.name, None))
        return found

    def sync_changed(
        self,
        name: str,
        rel_paths: Sequence[str],
        *,
        wait_seconds: float | None = None,
    ) -> SyncReport | None:
        """Index what changed under one collection's root, as a watcher reported it.

        Paths naming files are synced alone (a vanished one retired, one
        renamed among them keeps its document, links and vectors); a folder
        created, moved or removed as a whole, or the root itself (``"."``),
        costs a sync of the collection (a walk, whose unchanged files cost a
        ``stat``). None when there is nothing to do: no path can be one of its
        documents, or each is indexed as it is on disk (a file gno-trio wrote
        and indexed itself), found without taking the write lease.
        """
        from gno_trio.engine.ingest.sync import named_work, sync_named
        from gno_trio.engine.ingest.watching import settle, watched_root

        collection = self.collection(name)
        spec = spec_for(collection)
        with self.connection() as c:
            settled = settle(c, watched_root(spec, ()), rel_paths)
            if not settled.walk and not (settled.files and named_work(c, spec, set(settled.files))):
                return None
        with self.writing(wait_seconds=wait_seconds) as held:
            if settled.walk:
                return self.sync([collection.name], lease=held)[0]
            checked_root(collection.path, self.location.dirs)
            with self.connection() as c, self._conversion_runner() as runner:
                report = sync_named(c, spec, set(settled.files), runner=runner)
            if report is None:
                return None  # the writer we waited for indexed them (a capture)
            self.catch_up_documents(prune=True)
            return report

    def _conversion_runner(self) -> ConversionRunner:
        """Conversion workers for one sync, bounded as ``conversion:`` in index.yml says.

        Workers start only when a document needs converting, and stop with
        the sync: an idle server keeps no converter processes.
        """
        from gno_trio.engine.ingest.documents.limits import limits_from_settings
        from gno_trio.engine.ingest.documents.runner import ConversionRunner

        settings = self.config.conversion
        return ConversionRunner(limits_from_settings(settings), workers=settings.workers)


__all__ = ["IndexingKernel", "spec_for"]
