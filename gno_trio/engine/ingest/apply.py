"""The last step of a sync: writing a plan's outcomes in bounded batches.

Each batch is its own transaction (at most :data:`BATCH_DOCS` written
documents or :data:`BATCH_CHARS` characters of text), so memory stays
bounded however large the collection, and an interrupted sync leaves a
consistent index that the next one carries on from. Vanished documents are
retired after every file was seen (a new file with a vanished document's
bytes is that document renamed), and mirrors the sync replaced are dropped
if nothing refers to them any more.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Generator, Sequence, Set

from gno_trio.engine.ingest import textpool, writes
from gno_trio.engine.ingest.documents import records
from gno_trio.engine.ingest.documents.runner import STALL_S, ConversionRunner
from gno_trio.engine.ingest.plan import RenameBook, StoredDoc, SyncPlan
from gno_trio.engine.ingest.prepare import (
    Item,
    Outcome,
    Prepared,
    Refused,
    Relisted,
    SameBytes,
    outcomes,
)
from gno_trio.engine.ingest.spec import (
    CollectionSpec,
    ProgressFn,
    SyncReport,
    now_iso,
    upsert_collection,
)
from gno_trio.engine.ingest.upkeep import collect_garbage, compacts_after
from gno_trio.engine.ingest.walker import FoundFile
from gno_trio.engine.kernel import IndexHooks
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.batches import Batches, out_of_space
from gno_trio.engine.store.database import Connection, RowView, StoreError
from gno_trio.errors import GnoError

BATCH_DOCS = 500
BATCH_CHARS = 8_000_000


class _Applier:
    """The state of one plan being written: its report, renames, replaced mirrors."""

    def __init__(
        self,
        conn: Connection,
        spec: CollectionSpec,
        plan: SyncPlan,
        report: SyncReport,
        runner: ConversionRunner,
        progress: ProgressFn | None,
        hooks: IndexHooks | None,
    ) -> None:
        self.conn = conn
        self.rows = SQLITE_STORES.document_rows(conn)
        self.hooks = hooks
        self.spec = spec
        self.plan = plan
        self.report = report
        self.runner = runner
        self.progress = progress
        self.observed_at = now_iso()
        self.renames = RenameBook(plan.vanished)
        self.replaced: set[str] = set()
        self.judged: dict[str, RowView] = {}
        self.pending = fulltext.PendingRows()
        self.converting: dict[str, float] = {}
        """Files a conversion worker holds silent past the stall time -> since when."""
        self.at = plan.unchanged
        """The progress count last reported: files done so far."""

    @functools.cached_property
    def policy(self) -> str:
        """The conversion policy a refusal is judged under (read only when a file is refused:
        it asks every converter library for its version)."""
        return records.policy_fingerprint(self.runner.limits)

    def run(
        self,
        walk_errors: Sequence[tuple[str, OSError]],
        not_files: Sequence[tuple[str, GnoError]],
        *,
        full: bool,
    ) -> None:
        conn, spec, plan = self.conn, self.spec, self.plan
        on_commit = None
        expected = _expected_active(conn, plan) if plan.to_read or self.hooks else 0
        if self.hooks is not None:
            self.hooks.before_writing(expected)
            on_commit = self.hooks.after_commit
        # A bulk sync (merged once at the end) writes its full-text rows unmerged meanwhile.
        self.pending.bulk = compacts_after(len(plan.to_read), expected)
        with Batches(
            conn,
            docs=BATCH_DOCS,
            chars=BATCH_CHARS,
            pending=self.pending,
            on_commit=on_commit,
            bulk=self.pending.bulk,
        ) as batch:
            upsert_collection(conn, spec)
            for rel, exc in walk_errors:
                error = GnoError("READ_ERROR", f"Cannot list {rel}: {exc.strerror or exc}")
                writes.record_error(conn, spec, rel, error, None, self.report, self.observed_at)
            for rel, error in not_files:  # listed as skipped: no fault, but never silent
                writes.record_error(
                    conn, spec, rel, error, None, self.report, self.observed_at, unsupported=True
                )
            self.judged = records.load(conn, spec.name)
            with contextlib.closing(self._outcomes()) as prepared:
                for index, found, row, outcome in prepared:
                    self.converting.pop(found.rel_path, None)
                    self.at = plan.unchanged + index
                    if self.progress is not None:
                        self.progress(self.at, plan.scanned, found.rel_path)
                    batch.count(self._one(index, found, row, outcome))
            self.pending.flush(conn)  # what follows deletes full-text rows
            for gone in self.renames.unclaimed():
                writes.inactivate(conn, self.rows.row(gone.id), self.observed_at)
                self.report.removed += 1
            if full:
                listed = {e["relPath"] for e in self.report.errors}
                listed.update(rel for rel, _ in not_files)
                _forget_records(conn, spec.name, plan.seen, listed)
                SQLITE_STORES.collections(conn).synced(spec.name, self.observed_at)
            collect_garbage(conn, self.replaced)

    def _outcomes(self) -> Generator[Item, None, None]:
        """The plan's files with what they turned out to be (prepared by workers if many)."""
        to_read = self.plan.to_read
        workers = textpool.worker_count(len(to_read))
        if workers:
            return textpool.pooled_outcomes(
                to_read, self.runner, self.judged, workers, on_progress=self._file_progress
            )
        return outcomes(to_read, self.runner, self.judged, on_progress=self._file_progress)

    def _file_progress(self, index: int, found: FoundFile, done: int, units: int) -> None:
        """Keep the bar moving inside one big file (pages, sheets, slides), and name the
        files a worker has held silent for a while (``units == 0``), with their time so far:
        the file last finished is not the one the sync is waiting for."""
        if self.progress is None:
            return
        now = time.monotonic()
        if units == 0:
            self.converting.setdefault(found.rel_path, now - STALL_S)
        item = f"{found.rel_path} ({done}/{units})" if units else ""
        slow = ", ".join(f"{rel} {now - since:.0f} s" for rel, since in self.converting.items())
        if slow:
            item = f"{item}; converting {slow}" if item else f"converting {slow}"
        # The count stays the files handed over: a worker may be ahead on a later file.
        self.progress(self.at, self.plan.scanned, item)

    def _chunk_tick(self, index: int, rel_path: str) -> writes.ChunkTick | None:
        """Keep the bar moving while a large mirror's chunks are written."""
        if self.progress is None:
            return None
        report_to, at, total = self.progress, self.plan.unchanged + index, self.plan.scanned
        return lambda done, chunks: report_to(at, total, f"{rel_path} (chunk {done}/{chunks})")

    def _one(self, index: int, found: FoundFile, row: StoredDoc | None, outcome: Outcome) -> int:
        """Bring one file's document up to date from its outcome; the text size written."""
        conn, spec, report, at = self.conn, self.spec, self.report, self.observed_at
        if row is not None or not isinstance(outcome, Prepared):
            self.pending.resume(conn)  # only creating a document may skip the index triggers
        if isinstance(outcome, Relisted):
            writes.relist(report, outcome.record)
            return 0
        if isinstance(outcome, Refused):
            judged = (found, self.policy) if outcome.judged else None
            doc_id = None if row is None else row.id
            writes.record_error(
                conn,
                spec,
                found.rel_path,
                outcome.error,
                doc_id,
                report,
                at,
                judged=judged,
                unsupported=outcome.unsupported,
            )
            return 0
        if isinstance(outcome, SameBytes):
            assert row is not None
            writes.refresh_stat(conn, spec, row.id, found)
            if row.active:
                report.unchanged += 1
            else:
                writes.reactivate(conn, spec, self.rows.row(row.id), at)
                report.reactivated += 1
            return 0
        self._write(index, found, row, outcome)
        return len(outcome.converted.markdown)

    def _write(
        self, index: int, found: FoundFile, row: StoredDoc | None, prepared: Prepared
    ) -> None:
        conn, spec, report, at = self.conn, self.spec, self.report, self.observed_at
        writes.note_warnings(report, prepared)
        tick = self._chunk_tick(index, found.rel_path)
        if row is None:
            old = self.renames.claim(prepared.source_hash)
            if old is not None:
                self.pending.resume(conn)
                full_old = self.rows.row(old.id)
                if full_old["mirror_hash"]:
                    self.replaced.add(full_old["mirror_hash"])
                writes.rename(conn, spec, prepared, full_old, at, self.pending)
                report.renamed += 1
            else:
                writes.write_document(
                    conn,
                    spec,
                    prepared,
                    None,
                    kind="create",
                    observed_at=at,
                    tick=tick,
                    pending=self.pending,
                )
                report.added += 1
            if found.rel_path in self.judged:  # refused before, indexed now
                writes.forget_record(conn, spec.name, found.rel_path)
            return
        existing = self.rows.row(row.id)
        if existing["mirror_hash"]:
            self.replaced.add(existing["mirror_hash"])
        kind = "update" if row.active else "reactivate"
        writes.write_document(
            conn,
            spec,
            prepared,
            existing,
            kind=kind,
            observed_at=at,
            tick=tick,
            pending=self.pending,
        )
        if kind == "update":
            report.updated += 1
        else:
            report.reactivated += 1


def apply_plan(
    conn: Connection,
    spec: CollectionSpec,
    plan: SyncPlan,
    report: SyncReport,
    runner: ConversionRunner,
    *,
    walk_errors: Sequence[tuple[str, OSError]] = (),
    not_files: Sequence[tuple[str, GnoError]] = (),
    progress: ProgressFn | None = None,
    full: bool = True,
    hooks: IndexHooks | None = None,
) -> None:
    """Carry out a plan: read, convert and write each file to read, then retire the vanished."""
    report.scanned = plan.scanned
    report.unchanged = plan.unchanged
    try:
        _Applier(conn, spec, plan, report, runner, progress, hooks).run(
            walk_errors, not_files, full=full
        )
    except StoreError as exc:
        if not out_of_space(exc):
            raise
        done = report.written
        raise GnoError(
            "RUNTIME",
            f"The disk is full (or the index reached its size limit) while indexing "
            f"{spec.name}; the documents of the batches already written are kept "
            f"(about {done - done % BATCH_DOCS} of {len(plan.to_read)} to index). Free some "
            f"space and run the sync again: it carries on from there.",
        ) from exc


def _expected_active(conn: Connection, plan: SyncPlan) -> int:
    """About how many active documents the index holds once the plan is written."""
    active = SQLITE_STORES.counts(conn).active_documents()
    new = plan.to_read.new_files()
    return active + new - len(plan.vanished)


def _forget_records(conn: Connection, collection: str, seen: Set[str], listed: Set[str]) -> None:
    """Drop the records of paths this sync no longer has (read few rows, not all paths)."""
    records = SQLITE_STORES.ingest_records(conn)
    stale = [rel for rel in records.paths(collection) if rel not in seen and rel not in listed]
    records.forget_paths(collection, stale)
