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

import dataclasses
import json
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gno_trio.config import DEFAULT_EXCLUDES
from gno_trio.engine.ingest.chunker import Chunk, chunk_text
from gno_trio.engine.ingest.convert import Converted
from gno_trio.engine.ingest.documents import records
from gno_trio.engine.ingest.documents.reasons import TOO_LARGE
from gno_trio.engine.ingest.documents.runner import ConversionJob, ConversionRunner
from gno_trio.engine.ingest.frontmatter import DocumentMeta, extract_meta
from gno_trio.engine.ingest.walker import FoundFile, admits, walk
from gno_trio.engine.memory.projection import project as project_memory
from gno_trio.engine.store import fulltext
from gno_trio.engine.store import journal as journal
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.uris import docid_for, make_uri, sha256_hex
from gno_trio.errors import GnoError

ProgressFn = Callable[[int, int, str], None]
_BATCH = 200
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
    # Files not indexed because of their type (listed in status as "skipped").
    skipped: int = 0
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
            "skipped": self.skipped,
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


def _prepare(found: FoundFile, data: bytes, converted: Converted) -> _Prepared:
    meta = extract_meta(
        converted.markdown, found.rel_path, frontmatter=has_frontmatter(converted.mime)
    )
    return _Prepared(
        found=found,
        source_hash=sha256_hex(data),
        docid=docid_for(data),
        converted=converted,
        meta=meta,
        mirror_hash=sha256_hex(converted.markdown),
    )


def _read(found: FoundFile, limit: int) -> bytes:
    # The conversion limit decides "too large to read" too: such a file costs a stat.
    if found.size > limit:
        raise GnoError(TOO_LARGE, f"{found.rel_path}: {found.size:,} bytes (limit {limit:,})")
    try:
        with open(found.abs_path, "rb") as handle:
            return handle.read(limit + 1)
    except OSError as exc:
        raise GnoError(
            "READ_ERROR", f"Cannot read {found.rel_path}: {exc.strerror or exc}"
        ) from exc


ChunkTick = Callable[[int, int], None]
"""``(chunks written, chunks in the document)``: progress while one large mirror is stored."""
_TICK_EVERY = 256


def _store_content(
    conn: sqlite3.Connection, prepared: _Prepared, tick: ChunkTick | None = None
) -> None:
    markdown = prepared.converted.markdown
    inserted = conn.execute(
        "INSERT OR IGNORE INTO content(mirror_hash, markdown, line_count) VALUES (?, ?, ?)",
        (prepared.mirror_hash, markdown, markdown.count("\n") + 1),
    ).rowcount
    if not inserted:
        return
    _insert_chunks(
        conn,
        prepared.mirror_hash,
        body_chunks(markdown, prepared.meta, code=prepared.converted.is_code),
        prepared.converted.language,
        tick,
    )


def has_frontmatter(mime: str) -> bool:
    """Whether documents of this source type carry a frontmatter block (Markdown does)."""
    return mime == "text/markdown"


def body_chunks(markdown: str, meta: DocumentMeta, *, code: bool) -> list[Chunk]:
    """The chunks of a mirror's text after its frontmatter, addressed in the whole text.

    Chunks are what snippets, line anchors and embeddings are made of; the
    frontmatter is metadata (indexed in its own fields), so no snippet ever
    shows a ``---`` block. Only Markdown has frontmatter (see
    :func:`has_frontmatter`): a YAML file's ``---`` is content. Positions
    and line numbers still count from the top of the mirror, so
    ``get(ref, fromLine=line)`` lands where a hit points.
    """
    if meta.body_start_line <= 1:  # no frontmatter block was taken off
        return chunk_text(markdown, code=code)
    offset = len(markdown) - len(meta.body)
    skipped_lines = markdown.count("\n", 0, offset)
    return [
        dataclasses.replace(
            chunk,
            pos=chunk.pos + offset,
            start_line=chunk.start_line + skipped_lines,
            end_line=chunk.end_line + skipped_lines,
        )
        for chunk in chunk_text(markdown[offset:], code=code)
    ]


def _insert_chunks(
    conn: sqlite3.Connection,
    mirror_hash: str,
    chunks: list[Chunk],
    language: str | None,
    tick: ChunkTick | None = None,
) -> None:
    for chunk in chunks:
        cur = conn.execute(
            """INSERT INTO content_chunks(mirror_hash, seq, pos, text, start_line, end_line,
                   language, token_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                mirror_hash,
                chunk.seq,
                chunk.pos,
                chunk.text,
                chunk.start_line,
                chunk.end_line,
                language,
                chunk.token_count,
            ),
        )
        conn.execute(
            "INSERT INTO chunks_fts(rowid, text, mirror_hash) VALUES (?, ?, ?)",
            (cur.lastrowid, chunk.text, mirror_hash),
        )
        if tick is not None and chunk.seq % _TICK_EVERY == _TICK_EVERY - 1:
            tick(chunk.seq + 1, len(chunks))
        if tick is not None and chunk.seq % _TICK_EVERY == _TICK_EVERY - 1:
            tick(chunk.seq + 1, len(chunks))


def _write_structure(conn: sqlite3.Connection, doc_id: int, meta: DocumentMeta) -> None:
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


def _fts_upsert(conn: sqlite3.Connection, doc_id: int, rel_path: str, meta: DocumentMeta) -> None:
    fulltext.index_document(conn, doc_id, filepath=rel_path, title=meta.title, body=meta.body)


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
        "conversion_warnings_json": records.warnings_json(p.converted.warnings),
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
    tick: ChunkTick | None = None,
) -> int:
    """Insert or update one document row with its content, FTS and structure."""
    _store_content(conn, prepared, tick)
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
    _write_structure(conn, doc_id, prepared.meta)
    _fts_upsert(conn, doc_id, prepared.found.rel_path, prepared.meta)
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
    *,
    judged: tuple[FoundFile, str] | None = None,
    unsupported: bool = False,
) -> None:
    """Record why a file is not indexed (see :mod:`.ingest.documents.records`).

    With ``judged`` (the file as seen, and the conversion policy) the record
    holds until the file or the policy changes; without, the file is tried
    again on the next sync (a read error may be passing).
    """
    found, policy = judged if judged is not None else (None, None)
    records.save(
        conn,
        spec.name,
        rel_path,
        error,
        at=at,
        unsupported=unsupported,
        size=found.size if found else None,
        mtime_ns=found.mtime_ns if found else None,
        policy=policy,
    )
    if unsupported:
        report.skipped += 1
        return
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


def _shielded(rel_path: str, unlisted: set[str]) -> bool:
    """Whether a path lies in (or is) an entry the walk could not list.

    Such files were not *seen*, but that does not mean they are gone: a
    permission glitch on one folder must not soft-delete everything in it.
    """
    if "." in unlisted:
        return True
    return any(rel_path == p or rel_path.startswith(p + "/") for p in unlisted)


def inactivate(conn: sqlite3.Connection, row: sqlite3.Row, observed_at: str) -> None:
    conn.execute(
        "UPDATE documents SET active = 0, indexed_at = ? WHERE id = ?", (observed_at, row["id"])
    )
    fulltext.remove_document(conn, int(row["id"]))
    previous = journal.snapshot(row)
    current = dict(previous, active=False)
    journal.record(conn, "inactivate", row["collection"], observed_at, previous, current, {})


def sync_collection(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    *,
    progress: ProgressFn | None = None,
    only: set[str] | None = None,
    runner: ConversionRunner | None = None,
) -> SyncReport:
    """Bring the index in line with the files of one collection.

    ``only`` limits the sync to the given relative paths (used after a
    capture or a remembered fact: one file, no walk, no soft-deletes).
    Conversions go through ``runner`` (documents in its worker processes);
    without one, a runner with the default limits is used for this sync.
    """
    if runner is None:
        with ConversionRunner() as own:
            return sync_collection(conn, spec, progress=progress, only=only, runner=own)
    started = time.perf_counter()
    report = SyncReport(collection=spec.name)
    walk_errors: list[tuple[str, OSError]] = []
    if only is None:
        files = list(
            walk(
                spec.path,
                pattern=spec.pattern,
                include=spec.include,
                exclude=spec.exclude,
                on_error=lambda rel, exc: walk_errors.append((rel, exc)),
            )
        )
    else:
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
    if only is None:
        rows = conn.execute("SELECT * FROM documents WHERE collection = ?", (spec.name,))
    else:  # a one-file sync (capture, remember) reads just its own rows
        rows = conn.execute(
            "SELECT * FROM documents WHERE collection = ? AND rel_path IN "
            "(SELECT value FROM json_each(?))",
            (spec.name, json.dumps(sorted(only))),
        )
    existing = {row["rel_path"]: row for row in rows}
    observed_at = now_iso()
    total = len(files)
    seen: set[str] = set()
    fresh: list[_Prepared] = []  # new paths, resolved after deletions (renames)
    conn.execute("BEGIN IMMEDIATE")
    try:
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
        judged = records.load(conn, spec.name)
        policy = records.policy_fingerprint(runner.limits)

        def to_convert() -> Iterator[ConversionJob]:
            """The files whose bytes must be converted; the others cost a stat or a read."""
            for index, found in enumerate(files, 1):
                report.scanned += 1
                seen.add(found.rel_path)
                row = existing.get(found.rel_path)
                if progress is not None:
                    progress(index, total, found.rel_path)
                if (
                    row is not None
                    and row["active"]
                    and row["source_size"] == found.size
                    and row["source_mtime_ns"] == found.mtime_ns
                    and row["last_error_code"] is None
                ):
                    report.unchanged += 1
                    continue
                record = judged.get(found.rel_path)
                if records.still_valid(record, found.size, found.mtime_ns, policy):
                    assert record is not None
                    _relist(report, record)  # judged before, unchanged since: a stat
                    continue
                try:
                    data = _read(found, runner.limits.max_bytes)
                except GnoError as error:
                    judge = (found, policy) if error.code == TOO_LARGE else None
                    _record_error(
                        conn, spec, found.rel_path, error, row, report, observed_at, judged=judge
                    )
                    continue
                if row is not None and _same_bytes(conn, spec, row, found, data, observed_at):
                    if row["active"]:
                        report.unchanged += 1
                    else:
                        report.reactivated += 1
                    continue
                yield ConversionJob(found.rel_path, data, key=(index, found, row))

        def file_progress(job: ConversionJob, done: int, units: int) -> None:
            """Keep the bar moving inside one big file (pages, sheets, slides)."""
            if progress is not None:
                index, found, _ = job.key
                progress(index, total, f"{found.rel_path} ({done}/{units})")

        def chunk_progress(index: int, rel_path: str) -> ChunkTick | None:
            """Keep the bar moving while a large mirror's chunks are written."""
            if progress is None:
                return None
            report_to = progress
            return lambda done, chunks: report_to(
                index, total, f"{rel_path} (chunk {done}/{chunks})"
            )

        written = 0
        for outcome in runner.run(to_convert(), on_progress=file_progress, ordered=True):
            _, found, row = outcome.job.key
            if outcome.error is not None:
                _record_error(
                    conn,
                    spec,
                    found.rel_path,
                    outcome.error,
                    row,
                    report,
                    observed_at,
                    judged=(found, policy),
                    unsupported=outcome.unsupported,
                )
                continue
            assert outcome.converted is not None
            prepared = _prepare(found, outcome.job.data, outcome.converted)
            if row is None:
                fresh.append(prepared)
                continue
            kind = "update" if row["active"] else "reactivate"
            write_document(
                conn,
                spec,
                prepared,
                row,
                kind=kind,
                observed_at=observed_at,
                tick=chunk_progress(outcome.job.key[0], found.rel_path),
            )
            _note_warnings(report, prepared)
            if kind == "update":
                report.updated += 1
            else:
                report.reactivated += 1
            written += 1
            if written % _BATCH == 0:
                conn.execute("COMMIT")
                conn.execute("BEGIN IMMEDIATE")
        unlisted = {rel for rel, _ in walk_errors}
        vanished = (
            []
            if only is not None
            else [
                row
                for rel, row in existing.items()
                if rel not in seen and row["active"] and not _shielded(rel, unlisted)
            ]
        )
        by_hash: dict[str, list[sqlite3.Row]] = {}
        for row in vanished:
            by_hash.setdefault(row["source_hash"], []).append(row)
        renamed_ids: set[int] = set()
        for prepared in fresh:
            _note_warnings(report, prepared)
            candidates = by_hash.get(prepared.source_hash)
            if candidates:
                old = candidates.pop(0)
                renamed_ids.add(int(old["id"]))
                _rename(conn, spec, prepared, old, observed_at)
                report.renamed += 1
            else:
                write_document(
                    conn,
                    spec,
                    prepared,
                    None,
                    kind="create",
                    observed_at=observed_at,
                    tick=chunk_progress(total, prepared.found.rel_path),
                )
                report.added += 1
        for row in vanished:
            if int(row["id"]) not in renamed_ids:
                inactivate(conn, row, observed_at)
                report.removed += 1
        if only is None:
            conn.execute(
                "DELETE FROM ingest_errors WHERE collection = ? AND rel_path NOT IN "
                "(SELECT value FROM json_each(?))",
                (spec.name, json.dumps(sorted(seen | {e["relPath"] for e in report.errors}))),
            )
            conn.execute(
                "UPDATE collections SET last_synced_at = ? WHERE name = ?", (observed_at, spec.name)
            )
        collect_garbage(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    report.duration_ms = (time.perf_counter() - started) * 1000
    return report


def _same_bytes(
    conn: sqlite3.Connection,
    spec: CollectionSpec,
    row: sqlite3.Row,
    found: FoundFile,
    data: bytes,
    at: str,
) -> bool:
    """A touched file whose bytes did not change: refresh its stat, reactivate it if needed."""
    if row["source_hash"] != sha256_hex(data) or not row["mirror_hash"]:
        return False
    conn.execute(
        """UPDATE documents SET source_size = ?, source_mtime = ?,
               source_mtime_ns = ?, last_error_code = NULL,
               last_error_message = NULL, last_error_at = NULL
           WHERE id = ?""",
        (found.size, _mtime_iso(found.mtime_ns), found.mtime_ns, row["id"]),
    )
    conn.execute(
        "DELETE FROM ingest_errors WHERE collection = ? AND rel_path = ?",
        (spec.name, found.rel_path),
    )
    if not row["active"]:
        _reactivate(conn, spec, row, at)
    return True


def _relist(report: SyncReport, record: sqlite3.Row) -> None:
    """Report a file whose earlier verdict still holds, without reading it again."""
    if record["unsupported"]:
        report.skipped += 1
    else:
        report.errors.append(
            {"relPath": record["rel_path"], "code": record["code"], "message": record["message"]}
        )


def _reactivate(conn: sqlite3.Connection, spec: CollectionSpec, row: sqlite3.Row, at: str) -> None:
    conn.execute("UPDATE documents SET active = 1, indexed_at = ? WHERE id = ?", (at, row["id"]))
    markdown_row = conn.execute(
        "SELECT markdown FROM content WHERE mirror_hash = ?", (row["mirror_hash"],)
    ).fetchone()
    if markdown_row is not None:
        meta = extract_meta(
            markdown_row[0], row["rel_path"], frontmatter=has_frontmatter(row["source_mime"])
        )
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
    _write_structure(conn, int(old["id"]), prepared.meta)
    _fts_upsert(conn, int(old["id"]), prepared.found.rel_path, prepared.meta)
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


def collect_garbage(conn: sqlite3.Connection) -> None:
    """Drop mirrors (and their chunks) that no document row refers to any more."""
    orphans = [
        row[0]
        for row in conn.execute(
            "SELECT mirror_hash FROM content WHERE mirror_hash NOT IN "
            "(SELECT mirror_hash FROM documents WHERE mirror_hash IS NOT NULL)"
        )
    ]
    for mirror_hash in orphans:
        _drop_chunks(conn, mirror_hash)
        conn.execute("DELETE FROM content WHERE mirror_hash = ?", (mirror_hash,))


_RECHUNK_FLAG = "rechunk_frontmatter"


def finish_upgrades(conn: sqlite3.Connection) -> None:
    """Work a migration left for code: redo the chunks of mirrors that begin with frontmatter.

    Migration 010 took the frontmatter out of chunks; mirrors chunked before
    it are chunked again here, once (the flag it set is cleared in the same
    transaction), and documents whose only author is their capture source
    get it as their author. Their vectors, if any, are dropped with their old chunks:
    the text they were computed from is gone. Only mirrors whose text starts
    with ``---`` can change, so this touches few rows on most indexes.
    """
    if not _upgrade_pending(conn):
        return
    with write_transaction(conn):
        if not _upgrade_pending(conn):  # another process finished it meanwhile
            return
        has_vectors = (
            conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'content_vectors'"
            ).fetchone()
            is not None
        )
        rows = conn.execute(
            "SELECT c.mirror_hash, c.markdown, "
            "(SELECT MIN(d.source_mime = 'text/markdown') FROM documents d "
            " WHERE d.mirror_hash = c.mirror_hash) AS markdown_only, "
            "(SELECT language FROM content_chunks k WHERE k.mirror_hash = c.mirror_hash "
            " ORDER BY seq LIMIT 1) AS language "
            "FROM content c WHERE substr(c.markdown, 1, 3) = '---' "
            "OR substr(c.markdown, 1, 4) = ?",
            ("\ufeff---",),
        ).fetchall()
        for row in rows:
            markdown = str(row["markdown"])
            if not row["markdown_only"]:
                continue  # chunked from the top before and after
            meta = extract_meta(markdown, "upgrade.md")
            if meta.body_start_line <= 1:
                continue
            mirror_hash = row["mirror_hash"]
            if meta.author:  # a captured note's source author counts as its author now
                for (doc_id,) in conn.execute(
                    "SELECT id FROM documents WHERE mirror_hash = ? AND author IS NULL",
                    (mirror_hash,),
                ).fetchall():
                    conn.execute(
                        "UPDATE documents SET author = ? WHERE id = ?", (meta.author, doc_id)
                    )
                    fulltext.refresh_metadata(conn, int(doc_id))
            _drop_chunks(conn, mirror_hash)
            if has_vectors:
                conn.execute("DELETE FROM content_vectors WHERE mirror_hash = ?", (mirror_hash,))
            _insert_chunks(
                conn, mirror_hash, body_chunks(markdown, meta, code=False), row["language"]
            )
        conn.execute("DELETE FROM schema_meta WHERE key = ?", (_RECHUNK_FLAG,))


def _upgrade_pending(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute("SELECT 1 FROM schema_meta WHERE key = ?", (_RECHUNK_FLAG,)).fetchone()
        is not None
    )


def _drop_chunks(conn: sqlite3.Connection, mirror_hash: str) -> None:
    for chunk_id, text in conn.execute(
        "SELECT id, text FROM content_chunks WHERE mirror_hash = ?", (mirror_hash,)
    ).fetchall():
        conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rowid, text, mirror_hash) "
            "VALUES ('delete', ?, ?, ?)",
            (chunk_id, text, mirror_hash),
        )
    conn.execute("DELETE FROM content_chunks WHERE mirror_hash = ?", (mirror_hash,))
