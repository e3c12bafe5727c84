"""Incremental sync of one collection from disk into the index.

Unchanged files (same size and mtime) cost a ``stat`` only; files whose bytes
hash the same as before cost a read but no re-parse. Files that vanished are
soft-deleted (``active = 0``) and come back as "reactivate" when they
reappear; a vanished file whose bytes show up under a new path in the same
sync is recorded as a rename. Every change is appended to the metadata-only
change journal. A file that fails to read or convert is recorded with its
error and never aborts the sync; a file that was indexed before keeps its
last good content.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence, Set
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gno_trio.config import DEFAULT_EXCLUDES
from gno_trio.engine.ingest import convert as converters
from gno_trio.engine.ingest.chunker import chunk_text
from gno_trio.engine.ingest.convert import Converted, convert, converter_for
from gno_trio.engine.ingest.frontmatter import DocumentMeta, extract_meta
from gno_trio.engine.ingest.plan import RenameBook, StoredDoc, SyncPlan, decide, stored_documents
from gno_trio.engine.ingest.walker import FoundFile, admits, walk
from gno_trio.engine.memory.projection import project as project_memory
from gno_trio.engine.store import journal as journal
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.uris import docid_for, make_uri, sha256_hex
from gno_trio.errors import GnoError

ProgressFn = Callable[[int, int, str], None]
# A sync commits after this many written documents or characters of text,
# whichever comes first: memory stays bounded however large the collection,
# and an interrupted sync loses at most one batch.
BATCH_DOCS = 500
BATCH_CHARS = 8_000_000
FRONTMATTER_INVALID = "FRONTMATTER_INVALID"


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    """What sync needs to know about a collection (mirrors the config entry)."""

    name: str
    path: Path
    pattern: str = "**/*"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    language_hint: str | None = None
    egress_policy: str = "local_only"
    memory_managed: bool = False


@dataclass(slots=True)
class SyncReport:
    collection: str
    scanned: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    renamed: int = 0
    removed: int = 0
    reactivated: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    # Indexed anyway, but something in the file deserves the user's attention
    # (today: frontmatter that could not be parsed).
    warnings: list[dict[str, str]] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def changed(self) -> int:
        """Documents whose indexed content or presence this sync changed."""
        return self.added + self.updated + self.renamed + self.removed + self.reactivated

    def as_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "scanned": self.scanned,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "renamed": self.renamed,
            "removed": self.removed,
            "reactivated": self.reactivated,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "durationMs": round(self.duration_ms, 1),
        }


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _mtime_iso(mtime_ns: int) -> str:
    stamp = datetime.fromtimestamp(mtime_ns / 1e9, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A converted, parsed and chunked file, ready to be written."""

    found: FoundFile
    source_hash: str
    docid: str
    converted: Converted
    meta: DocumentMeta
    mirror_hash: str


_COLLECTION_COLUMNS = (
    "path",
    "pattern",
    "include_json",
    "exclude_json",
    "language_hint",
    "egress_policy",
    "memory_managed",
)


def collection_columns(spec: CollectionSpec) -> dict[str, Any]:
    """The ``collections`` row a spec should have (besides name and timestamps)."""
    return {
        "path": os.fspath(spec.path),
        "pattern": spec.pattern,
        "include_json": json.dumps(list(spec.include)),
        "exclude_json": json.dumps(list(spec.exclude)),
        "language_hint": spec.language_hint,
        "egress_policy": spec.egress_policy,
        "memory_managed": int(spec.memory_managed),
    }


def collection_row_matches(row: sqlite3.Row, spec: CollectionSpec) -> bool:
    return all(row[k] == v for k, v in collection_columns(spec).items())


def upsert_collection(conn: sqlite3.Connection, spec: CollectionSpec) -> None:
    values = collection_columns(spec)
    columns = ", ".join(_COLLECTION_COLUMNS)
    updates = ", ".join(f"{c}=excluded.{c}" for c in _COLLECTION_COLUMNS)
    conn.execute(
        f"INSERT INTO collections(name, {columns}, created_at) "
        f"VALUES (?, {', '.join('?' for _ in _COLLECTION_COLUMNS)}, ?) "
        f"ON CONFLICT(name) DO UPDATE SET {updates}",
        (spec.name, *(values[c] for c in _COLLECTION_COLUMNS), now_iso()),
    )


def _prepare(found: FoundFile, data: bytes, source_hash: str) -> _Prepared:
    converted = convert(found.rel_path, data)
    meta = extract_meta(converted.markdown, found.rel_path)
    return _Prepared(
        found=found,
        source_hash=source_hash,
        docid=docid_for(data),
        converted=converted,
        meta=meta,
        mirror_hash=sha256_hex(converted.markdown),
    )


def _read(found: FoundFile) -> bytes:
    # Read the limit at call time: the converter module owns it, and one
    # number must decide both "too large to read" and "too large to convert".
    limit = converters.MAX_SOURCE_BYTES
    if found.size > limit:
        raise GnoError(
            "FILE_TOO_LARGE",
            f"{found.rel_path} is {found.size} bytes (limit {limit})",
        )
    try:
        with open(found.abs_path, "rb") as handle:
            return handle.read(limit + 1)
    except OSError as exc:
        raise GnoError(
            "READ_ERROR", f"Cannot read {found.rel_path}: {exc.strerror or exc}"
        ) from exc


def _store_content(conn: sqlite3.Connection, prepared: _Prepared) -> None:
    """Store a mirror once, its chunks as ranges into it, and index the chunks."""
    markdown = prepared.converted.markdown
    inserted = conn.execute(
        "INSERT OR IGNORE INTO content(mirror_hash, markdown, line_count) VALUES (?, ?, ?)",
        (prepared.mirror_hash, markdown, markdown.count("\n") + 1),
    ).rowcount
    if not inserted:
        return
    chunks = chunk_text(markdown, code=prepared.converted.is_code)
    language = prepared.converted.language
    for chunk in chunks:
        cur = conn.execute(
            """INSERT INTO content_chunks(mirror_hash, seq, pos, length, start_line, end_line,
                   language, token_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                prepared.mirror_hash,
                chunk.seq,
                chunk.pos,
                len(chunk.text),
                chunk.start_line,
                chunk.end_line,
                language,
                chunk.token_count,
            ),
        )
        conn.execute(
            "INSERT INTO chunks_fts(rowid, text, mirror_hash) VALUES (?, ?, ?)",
            (cur.lastrowid, chunk.text, prepared.mirror_hash),
        )


def _write_structure(
    conn: sqlite3.Connection, doc_id: int, meta: DocumentMeta, *, fresh: bool = False
) -> None:
    """A document's tags, links and typed edges (``fresh``: a new row, nothing to replace)."""
    if not fresh:
        conn.execute("DELETE FROM doc_tags WHERE doc_id = ? AND source = 'frontmatter'", (doc_id,))
        conn.execute("DELETE FROM doc_links WHERE doc_id = ?", (doc_id,))
        conn.execute("DELETE FROM doc_edges WHERE src_doc_id = ?", (doc_id,))
    conn.executemany(
        "INSERT OR IGNORE INTO doc_tags(doc_id, tag, source) VALUES (?, ?, 'frontmatter')",
        [(doc_id, tag) for tag in meta.tags],
    )
    conn.executemany(
        """INSERT INTO doc_links(doc_id, kind, target, collection, heading, display, line, col)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        [
            (doc_id, ln.kind, ln.target, ln.collection, ln.heading, ln.display, ln.line, ln.col)
            for ln in meta.links
        ],
    )
    conn.executemany(
        "INSERT INTO doc_edges(src_doc_id, edge_type, target) VALUES (?, ?, ?)",
        [(doc_id, edge_type, target) for edge_type, target in meta.relations],
    )


def _fts_upsert(
    conn: sqlite3.Connection,
    doc_id: int,
    rel_path: str,
    meta: DocumentMeta,
    *,
    fresh: bool = False,
) -> None:
    if not fresh:
        conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
    conn.execute(
        "INSERT INTO documents_fts(rowid, filepath, title, body) VALUES (?, ?, ?, ?)",
        (doc_id, rel_path, meta.title, meta.body),
    )


def _doc_values(spec: CollectionSpec, p: _Prepared, indexed_at: str) -> dict[str, Any]:
    meta = p.meta
    return {
        "collection": spec.name,
        "rel_path": p.found.rel_path,
        "docid": p.docid,
        "uri": make_uri(spec.name, p.found.rel_path),
        "title": meta.title,
        "source_hash": p.source_hash,
        "source_mime": p.converted.mime,
        "source_ext": p.converted.ext,
        "source_size": p.found.size,
        "source_mtime": _mtime_iso(p.found.mtime_ns),
        "source_mtime_ns": p.found.mtime_ns,
        "mirror_hash": p.mirror_hash,
        "converter_id": p.converted.converter_id,
        "converter_version": p.converted.converter_version,
        "language": p.converted.language,
        "language_hint": spec.language_hint,
        "content_type": meta.content_type,
        "author": meta.author,
        "categories_json": json.dumps(list(meta.categories)),
        "frontmatter_date": meta.date,
        "frontmatter_error": meta.frontmatter_error,
        "headings_json": json.dumps(list(meta.headings)),
        "active": 1,
        "last_error_code": None,
        "last_error_message": None,
        "last_error_at": None,
        "indexed_at": indexed_at,
    }


def write_document(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    prepared: _Prepared,
    existing: sqlite3.Row | None,
    *,
    kind: str,
    observed_at: str,
) -> int:
    """Insert or update one document row with its content, FTS and structure."""
    _store_content(conn, prepared)
    values = _doc_values(spec, prepared, observed_at)
    if existing is None:
        columns = ", ".join(values)
        placeholders = ", ".join("?" for _ in values)
        cur = conn.execute(
            f"INSERT INTO documents({columns}) VALUES ({placeholders})", tuple(values.values())
        )
        doc_id = int(cur.lastrowid or 0)
        previous = None
        old_structure = None
    else:
        doc_id = int(existing["id"])
        previous = journal.snapshot(existing)
        old_structure = journal.stored_structure(conn, existing)
        assignments = ", ".join(f"{k} = ?" for k in values)
        conn.execute(f"UPDATE documents SET {assignments} WHERE id = ?", (*values.values(), doc_id))
    fresh = existing is None
    _fts_upsert(conn, doc_id, prepared.found.rel_path, prepared.meta, fresh=fresh)
    _write_structure(conn, doc_id, prepared.meta, fresh=fresh)
    if not fresh or spec.memory_managed:  # a new row has no memory rows to clear
        project_memory(conn, doc_id, prepared.meta, managed=spec.memory_managed)
    current = journal.snapshot_values(values)
    delta = journal.structure_delta(old_structure, journal.structure_of(prepared.meta))
    journal.record(conn, kind, spec.name, observed_at, previous, current, delta)
    conn.execute(
        "DELETE FROM ingest_errors WHERE collection = ? AND rel_path = ?",
        (spec.name, prepared.found.rel_path),
    )
    return doc_id


def _record_error(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    rel_path: str,
    error: GnoError,
    existing: sqlite3.Row | None,
    report: SyncReport,
    at: str,
) -> None:
    conn.execute(
        """INSERT INTO ingest_errors(collection, rel_path, code, message, at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(collection, rel_path) DO UPDATE SET code=excluded.code,
               message=excluded.message, at=excluded.at""",
        (spec.name, rel_path, error.code, error.message, at),
    )
    if existing is not None:
        conn.execute(
            """UPDATE documents SET last_error_code = ?, last_error_message = ?, last_error_at = ?
               WHERE id = ?""",
            (error.code, error.message, at, existing["id"]),
        )
    report.errors.append({"relPath": rel_path, "code": error.code, "message": error.message})


def _note_warnings(report: SyncReport, prepared: _Prepared) -> None:
    if prepared.meta.frontmatter_error:
        report.warnings.append(
            {
                "relPath": prepared.found.rel_path,
                "code": FRONTMATTER_INVALID,
                "message": prepared.meta.frontmatter_error,
            }
        )


def inactivate(conn: sqlite3.Connection, row: sqlite3.Row, observed_at: str) -> None:
    conn.execute(
        "UPDATE documents SET active = 0, indexed_at = ? WHERE id = ?", (observed_at, row["id"])
    )
    conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (row["id"],))
    previous = journal.snapshot(row)
    current = dict(previous, active=False)
    journal.record(conn, "inactivate", row["collection"], observed_at, previous, current, {})


def found_files(
    spec: CollectionSpec, only: set[str] | None
) -> tuple[list[FoundFile], list[tuple[str, OSError]]]:
    """The files on disk (all, or the ``only`` paths), and the folders the walk could not list."""
    walk_errors: list[tuple[str, OSError]] = []
    if only is None:
        files = list(
            walk(
                spec.path,
                pattern=spec.pattern,
                include=spec.include,
                exclude=spec.exclude,
                supported=lambda rel: converter_for(rel) is not None,
                on_error=lambda rel, exc: walk_errors.append((rel, exc)),
            )
        )
        return files, walk_errors
    files = []
    for rel in sorted(only):
        # The same rules as the walk: no escaping the root, no symlinks
        # (a link's target may lie outside it), nothing the collection's
        # pattern, include or exclude would leave out.
        if not admits(
            rel,
            pattern=spec.pattern,
            include=spec.include,
            exclude=spec.exclude,
            supported=lambda r: converter_for(r) is not None,
        ):
            continue
        abs_path = spec.path / rel
        try:
            st = abs_path.lstat()
            if any(p.is_symlink() for p in abs_path.parents if spec.path in p.parents):
                continue
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        files.append(FoundFile(rel, os.fspath(abs_path), st.st_size, st.st_mtime_ns))
    return files, walk_errors


def sync_collection(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    *,
    progress: ProgressFn | None = None,
    only: set[str] | None = None,
) -> SyncReport:
    """Bring the index in line with the files of one collection.

    ``only`` limits the sync to the given relative paths (used after a
    capture or a remembered fact: one file, no walk, no soft-deletes).
    Deciding (:func:`plan.decide`) reads the walk and the stored rows
    only; applying writes the plan in bounded batches, each its own
    transaction, so an interrupted sync leaves a consistent index and the
    next one carries on from what was committed.
    """
    started = time.perf_counter()
    files, walk_errors = found_files(spec, only)
    stored = stored_documents(conn, spec.name, None if only is None else sorted(only))
    plan = decide(files, stored, unlisted=[rel for rel, _ in walk_errors], partial=only is not None)
    report = SyncReport(collection=spec.name)
    apply_plan(
        conn, spec, plan, report, walk_errors=walk_errors, progress=progress, full=only is None
    )
    report.duration_ms = (time.perf_counter() - started) * 1000
    return report


class _Batches:
    """Write transactions of bounded size: commit after ``docs`` documents or ``chars`` of text."""

    def __init__(self, conn: sqlite3.Connection, *, docs: int, chars: int) -> None:
        self._conn = conn
        self._docs_limit = docs
        self._chars_limit = chars
        self._docs = 0
        self._chars = 0

    def __enter__(self) -> _Batches:
        self._conn.execute("BEGIN IMMEDIATE")
        return self

    def count(self, chars: int) -> None:
        self._docs += 1
        self._chars += chars
        if self._docs >= self._docs_limit or self._chars >= self._chars_limit:
            self._conn.execute("COMMIT")
            self._conn.execute("BEGIN IMMEDIATE")
            self._docs = self._chars = 0

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if error is None:
            self._conn.execute("COMMIT")
        elif self._conn.in_transaction:
            self._conn.execute("ROLLBACK")


def _full_row(conn: sqlite3.Connection, doc_id: int) -> sqlite3.Row:
    row: sqlite3.Row = conn.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return row


def apply_plan(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    plan: SyncPlan,
    report: SyncReport,
    *,
    walk_errors: Sequence[tuple[str, OSError]] = (),
    progress: ProgressFn | None = None,
    full: bool = True,
) -> None:
    """Carry out a plan: read, convert and write each file to read, then retire the vanished."""
    observed_at = now_iso()
    report.scanned = plan.scanned
    report.unchanged = plan.unchanged
    renames = RenameBook(plan.vanished)
    replaced: set[str] = set()
    try:
        _apply_batches(
            conn,
            spec,
            plan,
            report,
            renames,
            replaced,
            observed_at,
            walk_errors=walk_errors,
            progress=progress,
            full=full,
        )
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_FULL":
            raise
        done = report.added + report.updated + report.renamed + report.reactivated
        raise GnoError(
            "RUNTIME",
            f"The disk is full (or the index reached its size limit) while indexing "
            f"{spec.name}; the documents of the batches already written are kept "
            f"(about {done - done % BATCH_DOCS} of {len(plan.to_read)} to index). Free some "
            f"space and run the sync again: it carries on from there.",
        ) from exc


def _apply_batches(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    plan: SyncPlan,
    report: SyncReport,
    renames: RenameBook,
    replaced: set[str],
    observed_at: str,
    *,
    walk_errors: Sequence[tuple[str, OSError]],
    progress: ProgressFn | None,
    full: bool,
) -> None:
    with _Batches(conn, docs=BATCH_DOCS, chars=BATCH_CHARS) as batch:
        upsert_collection(conn, spec)
        for rel, exc in walk_errors:
            _record_error(
                conn,
                spec,
                rel,
                GnoError("READ_ERROR", f"Cannot list {rel}: {exc.strerror or exc}"),
                None,
                report,
                observed_at,
            )
        # closing(): if a write fails, the helper thread stops before the error leaves
        with contextlib.closing(_prepared_ahead(plan.to_read)) as prepared:
            for index, (found, row, outcome) in enumerate(prepared, 1):
                if progress is not None:
                    progress(plan.unchanged + index, plan.scanned, found.rel_path)
                batch.count(
                    _apply_one(
                        conn, spec, found, row, outcome, renames, report, observed_at, replaced
                    )
                )
        for row in renames.unclaimed():
            inactivate(conn, _full_row(conn, row.id), observed_at)
            report.removed += 1
        if full:
            _forget_errors(conn, spec.name, plan.seen | {e["relPath"] for e in report.errors})
            conn.execute(
                "UPDATE collections SET last_synced_at = ? WHERE name = ?", (observed_at, spec.name)
            )
        collect_garbage(conn, replaced)


def _forget_errors(conn: sqlite3.Connection, collection: str, keep: Set[str]) -> None:
    """Drop the ingest errors of paths this sync no longer has (read few rows, not all paths)."""
    stale = [
        (collection, rel)
        for (rel,) in conn.execute(
            "SELECT rel_path FROM ingest_errors WHERE collection = ?", (collection,)
        )
        if rel not in keep
    ]
    conn.executemany("DELETE FROM ingest_errors WHERE collection = ? AND rel_path = ?", stale)


@dataclass(frozen=True, slots=True)
class _SameBytes:
    """The file's bytes hash as indexed: only its stat columns need refreshing."""


@dataclass(frozen=True, slots=True)
class _Failed:
    error: GnoError


_Outcome = _Prepared | _SameBytes | _Failed


def _read_and_prepare(found: FoundFile, row: StoredDoc | None) -> _Outcome:
    """Everything about one file that needs no database: read, hash, convert, parse, chunk.

    Pure with respect to the index, so it runs ahead of the writer in a
    helper thread (see :func:`_prepared_ahead`).
    """
    try:
        data = _read(found)
        source_hash = sha256_hex(data)
        if row is not None and row.source_hash == source_hash and row.has_mirror:
            return _SameBytes()
        return _prepare(found, data, source_hash)
    except GnoError as error:
        return _Failed(error)


# Files prepared ahead of the writer: enough to keep it busy, few enough
# that memory stays small (each holds one file's text and its chunks).
PREPARE_AHEAD = 16


def _prepared_ahead(
    items: Sequence[tuple[FoundFile, StoredDoc | None]],
) -> Generator[tuple[FoundFile, StoredDoc | None, _Outcome], None, None]:
    """Each item with its outcome, in order, prepared in a helper thread.

    Reading and parsing are Python; the writer's work is mostly inside
    SQLite, which lets go of the interpreter lock while it runs, so the two
    overlap on a second core. At most ``PREPARE_AHEAD`` outcomes wait; when
    the writer stops early (an error), files not yet started are dropped.
    """
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gno-prepare")
    pending: deque[tuple[FoundFile, StoredDoc | None, Future[_Outcome]]] = deque()
    upcoming = iter(items)
    try:
        for found, row in upcoming:
            pending.append((found, row, pool.submit(_read_and_prepare, found, row)))
            if len(pending) >= PREPARE_AHEAD:
                break
        while pending:
            found, row, outcome = pending.popleft()
            following = next(upcoming, None)
            if following is not None:
                pending.append((*following, pool.submit(_read_and_prepare, *following)))
            yield found, row, outcome.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _apply_one(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    found: FoundFile,
    row: StoredDoc | None,
    outcome: _Outcome,
    renames: RenameBook,
    report: SyncReport,
    observed_at: str,
    replaced: set[str],
) -> int:
    """Bring one file's document up to date from its outcome; returns the text size written."""
    if isinstance(outcome, _Failed):
        existing = None if row is None else _full_row(conn, row.id)
        _record_error(conn, spec, found.rel_path, outcome.error, existing, report, observed_at)
        return 0
    if isinstance(outcome, _SameBytes):
        assert row is not None
        conn.execute(
            """UPDATE documents SET source_size = ?, source_mtime = ?,
                   source_mtime_ns = ?, last_error_code = NULL,
                   last_error_message = NULL, last_error_at = NULL
               WHERE id = ?""",
            (found.size, _mtime_iso(found.mtime_ns), found.mtime_ns, row.id),
        )
        conn.execute(
            "DELETE FROM ingest_errors WHERE collection = ? AND rel_path = ?",
            (spec.name, found.rel_path),
        )
        if row.active:
            report.unchanged += 1
        else:
            _reactivate(conn, spec, _full_row(conn, row.id), observed_at)
            report.reactivated += 1
        return 0
    prepared = outcome
    _note_warnings(report, prepared)
    if row is None:
        old = renames.claim(prepared.source_hash)
        if old is not None:
            full_old = _full_row(conn, old.id)
            if full_old["mirror_hash"]:
                replaced.add(full_old["mirror_hash"])
            _rename(conn, spec, prepared, full_old, observed_at)
            report.renamed += 1
        else:
            write_document(conn, spec, prepared, None, kind="create", observed_at=observed_at)
            report.added += 1
    else:
        existing = _full_row(conn, row.id)
        if existing["mirror_hash"]:
            replaced.add(existing["mirror_hash"])
        kind = "update" if row.active else "reactivate"
        write_document(conn, spec, prepared, existing, kind=kind, observed_at=observed_at)
        if kind == "update":
            report.updated += 1
        else:
            report.reactivated += 1
    return len(prepared.converted.markdown)


def _reactivate(conn: sqlite3.Connection, spec: CollectionSpec, row: sqlite3.Row, at: str) -> None:
    conn.execute("UPDATE documents SET active = 1, indexed_at = ? WHERE id = ?", (at, row["id"]))
    markdown_row = conn.execute(
        "SELECT markdown FROM content WHERE mirror_hash = ?", (row["mirror_hash"],)
    ).fetchone()
    if markdown_row is not None:
        meta = extract_meta(markdown_row[0], row["rel_path"])
        _fts_upsert(conn, int(row["id"]), row["rel_path"], meta)
    previous = journal.snapshot(row)
    journal.record(conn, "reactivate", spec.name, at, previous, dict(previous, active=True), {})


def _rename(
    conn: sqlite3.Connection, spec: CollectionSpec, prepared: _Prepared, old: sqlite3.Row, at: str
) -> None:
    """The same bytes moved to a new path: keep the row (and its id), move it."""
    previous = journal.snapshot(old)
    values = _doc_values(spec, prepared, at)
    assignments = ", ".join(f"{k} = ?" for k in values)
    conn.execute(f"UPDATE documents SET {assignments} WHERE id = ?", (*values.values(), old["id"]))
    _store_content(conn, prepared)
    _fts_upsert(conn, int(old["id"]), prepared.found.rel_path, prepared.meta)
    _write_structure(conn, int(old["id"]), prepared.meta)
    project_memory(conn, int(old["id"]), prepared.meta, managed=spec.memory_managed)
    journal.record(conn, "rename", spec.name, at, previous, journal.snapshot_values(values), {})


# A sync that changed at least this share of the active documents (an initial
# index, a bulk import) merges the full-text indexes afterwards.
_COMPACT_SHARE = 8


def compact_full_text(conn: sqlite3.Connection, changed: int) -> bool:
    """Merge each full-text index into one segment after a large sync.

    FTS5 appends a segment per batch of writes and merges them only lazily;
    every query then looks each term up in every segment (measured here: 3
    segments instead of 1 cost a search a fifth more in its chunk lookups).
    Merging rewrites the whole index (0.1 s for 350 pages), so it is only
    worth it when a large share of the documents changed at once.
    """
    if changed <= 0:
        return False
    active = int(conn.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0])
    if changed * _COMPACT_SHARE < active:
        return False
    with write_transaction(conn):
        for table in ("documents_fts", "chunks_fts"):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    return True


def collect_garbage(conn: sqlite3.Connection, candidates: Iterable[str] | None = None) -> None:
    """Drop mirrors (and their chunks) that no document row refers to any more.

    ``candidates`` limits the check to mirrors a sync replaced; None checks
    every mirror (after a collection is removed).
    """
    if candidates is None:
        orphans = [
            row[0]
            for row in conn.execute(
                "SELECT mirror_hash FROM content WHERE mirror_hash NOT IN "
                "(SELECT mirror_hash FROM documents WHERE mirror_hash IS NOT NULL)"
            )
        ]
    else:
        orphans = [
            mirror
            for mirror in sorted(candidates)
            if conn.execute(
                "SELECT 1 FROM documents WHERE mirror_hash = ? LIMIT 1", (mirror,)
            ).fetchone()
            is None
        ]
    for mirror_hash in orphans:
        conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rowid, text, mirror_hash) "
            "SELECT 'delete', id, text, mirror_hash FROM chunk_texts WHERE mirror_hash = ?",
            (mirror_hash,),
        )
        conn.execute("DELETE FROM content_chunks WHERE mirror_hash = ?", (mirror_hash,))
        conn.execute("DELETE FROM content WHERE mirror_hash = ?", (mirror_hash,))
