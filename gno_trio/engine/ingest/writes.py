"""The writes of a sync: one document's rows, its text and chunks, its full-text entries.

Every function here runs inside the caller's transaction and changes the
rows of one document (or one file's record) and nothing else, so the apply
step (:mod:`.apply`) can group them into batches of any size. The text of a
mirror is stored once (``content``); its chunks are ranges of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gno_trio.engine import journal
from gno_trio.engine.docmeta import DocumentMeta
from gno_trio.engine.ingest.chunker import Chunk, byte_ranges
from gno_trio.engine.ingest.documents import records
from gno_trio.engine.ingest.documents.reasons import LISTED_WARNINGS, parse_warning
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.memory_projection import project as project_memory
from gno_trio.engine.ingest.prepare import Prepared, body_chunks, has_frontmatter
from gno_trio.engine.ingest.spec import CollectionSpec, SyncReport, mtime_iso
from gno_trio.engine.ingest.walker import FoundFile
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView, fts5_ranks_documents
from gno_trio.engine.uris import make_uri
from gno_trio.errors import GnoError

FRONTMATTER_INVALID = "FRONTMATTER_INVALID"

ChunkTick = Callable[[int, int], None]
"""``(chunks written, chunks in the document)``: progress while one large mirror is stored."""
_TICK_EVERY = 256


def store_content(
    conn: Connection,
    prepared: Prepared,
    tick: ChunkTick | None = None,
    pending: fulltext.PendingRows | None = None,
) -> None:
    """Store a mirror once, its chunks as ranges into it, and index the chunks."""
    markdown = prepared.converted.markdown
    if not SQLITE_STORES.mirrors(conn).add(prepared.mirror_hash, markdown):
        return
    insert_chunks(
        conn,
        prepared.mirror_hash,
        markdown,
        list(prepared.chunks)
        if prepared.chunks is not None
        else body_chunks(markdown, prepared.meta, code=prepared.converted.is_code),
        prepared.converted.language,
        tick,
        pending,
    )


def insert_chunks(
    conn: Connection,
    mirror_hash: str,
    markdown: str,
    chunks: list[Chunk],
    language: str | None,
    tick: ChunkTick | None = None,
    pending: fulltext.PendingRows | None = None,
) -> None:
    """A mirror's chunks (of its text ``markdown``), as ranges of it, and their full-text
    entries (queued in ``pending``)."""
    mirrors = SQLITE_STORES.mirrors(conn)
    # Byte ranges count UTF-8 bytes: a file storing its text otherwise (an index
    # created as UTF-16 elsewhere) places its chunks by characters only.
    utf8 = pending.text_is_utf8 if pending is not None else None
    if utf8 is None:
        utf8 = SQLITE_STORES.chunks(conn).text_is_utf8()
        if pending is not None:
            pending.text_is_utf8 = utf8
    places: list[tuple[int, int] | None] = (
        list(byte_ranges(markdown, chunks)) if utf8 else [None] * len(chunks)
    )
    for chunk, byte_range in zip(chunks, places, strict=True):
        chunk_id = mirrors.add_chunk(
            mirror_hash,
            chunk.seq,
            chunk.pos,
            len(chunk.text),
            byte_range,
            chunk.start_line,
            chunk.end_line,
            language,
            chunk.token_count,
        )
        fulltext.index_chunk(conn, chunk_id, chunk.text, mirror_hash, pending)
        if tick is not None and chunk.seq % _TICK_EVERY == _TICK_EVERY - 1:
            tick(chunk.seq + 1, len(chunks))


def _write_structure(
    conn: Connection, doc_id: int, meta: DocumentMeta, *, fresh: bool = False
) -> None:
    """A document's tags, links and typed edges (``fresh``: a new row, nothing to replace)."""
    SQLITE_STORES.tags(conn).replace_from_text(doc_id, meta.tags, fresh=fresh)
    SQLITE_STORES.links(conn).replace(doc_id, meta.links, meta.relations, fresh=fresh)


def fts_upsert(
    conn: Connection,
    doc_id: int,
    rel_path: str,
    meta: DocumentMeta,
    *,
    memory_managed: bool,
    fresh: bool = False,
    pending: fulltext.PendingRows | None = None,
) -> None:
    """(Re)write a document's ``documents_fts`` row, if that index holds it (see ``pending``).

    Call it after the document's row and tags are written (the metadata
    fields are read from them). When tantivy ranks documents,
    ``documents_fts`` keeps only the documents of memory-managed
    collections; the tantivy index learns of every change through
    migration 12's triggers.
    """
    tantivy_ranks = (pending is not None and pending.queue_paused) or not fts5_ranks_documents(conn)
    if not memory_managed and tantivy_ranks:
        if not fresh:
            fulltext.remove_document(conn, doc_id)
        return
    fulltext.index_document(
        conn,
        doc_id,
        filepath=rel_path,
        title=meta.title,
        body=meta.body,
        fresh=fresh,
        pending=pending,
    )


def _doc_values(spec: CollectionSpec, p: Prepared, indexed_at: str) -> dict[str, Any]:
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
        "source_mtime": mtime_iso(p.found.mtime_ns),
        "source_mtime_ns": p.found.mtime_ns,
        "mirror_hash": p.mirror_hash,
        "converter_id": p.converted.converter_id,
        "converter_version": p.converted.converter_version,
        "conversion_warnings_json": (
            records.warnings_json(p.converted.warnings) if p.converted.warnings else "[]"
        ),
        "language": p.converted.language,
        "language_hint": spec.language_hint,
        "content_type": meta.content_type,
        "author": meta.author,
        "categories_json": json.dumps(list(meta.categories)) if meta.categories else "[]",
        "frontmatter_date": meta.date,
        "frontmatter_error": meta.frontmatter_error,
        "headings_json": json.dumps(list(meta.headings)),
        # The body (the text after the front matter) is a suffix of the mirror.
        "body_pos": len(p.converted.markdown) - len(meta.body),
        "active": 1,
        "last_error_code": None,
        "last_error_message": None,
        "last_error_at": None,
        "indexed_at": indexed_at,
    }


def write_document(
    conn: Connection,
    spec: CollectionSpec,
    prepared: Prepared,
    existing: RowView | None,
    *,
    kind: str,
    observed_at: str,
    tick: ChunkTick | None = None,
    pending: fulltext.PendingRows | None = None,
) -> int:
    """Insert or update one document row with its content, FTS and structure.

    Its full-text rows are queued in ``pending`` when one is given, and so is
    a new document for the document index (see :class:`.fulltext.PendingRows`).
    """
    store_content(conn, prepared, tick, pending)
    values = _doc_values(spec, prepared, observed_at)
    if pending is not None:  # a new row is queued for the document index without its triggers
        if existing is None and not spec.memory_managed:
            pending.pause_document_queue(conn)
        else:
            pending.resume(conn)
    rows = SQLITE_STORES.document_rows(conn)
    if existing is None:
        doc_id = rows.insert(values)
        if pending is not None:
            pending.new_document(doc_id)
        previous = None
        old_structure = None
    else:
        doc_id = int(existing["id"])
        previous = journal.snapshot(existing)
        old_structure = journal.stored_structure(SQLITE_STORES.journal(conn), existing)
        rows.update(doc_id, values)
    fresh = existing is None
    _write_structure(conn, doc_id, prepared.meta, fresh=fresh)
    fts_upsert(
        conn,
        doc_id,
        prepared.found.rel_path,
        prepared.meta,
        memory_managed=spec.memory_managed,
        fresh=fresh,
        pending=pending,
    )
    if not fresh or spec.memory_managed:  # a new row has no memory rows to clear
        project_memory(conn, doc_id, prepared.meta, managed=spec.memory_managed)
    current = journal.snapshot(values)
    delta = journal.structure_delta(old_structure, journal.structure_of(prepared.meta))
    SQLITE_STORES.journal(conn).append(kind, spec.name, observed_at, previous, current, delta)
    if not fresh:  # a path seen for the first time has no record to clear (the writer does)
        forget_record(conn, spec.name, prepared.found.rel_path)
    return doc_id


def forget_record(conn: Connection, collection: str, rel_path: str) -> None:
    SQLITE_STORES.ingest_records(conn).forget(collection, rel_path)


def rename(
    conn: Connection,
    spec: CollectionSpec,
    prepared: Prepared,
    old: RowView,
    at: str,
    pending: fulltext.PendingRows | None = None,
) -> None:
    """The same bytes moved to a new path: keep the row (and its id), move it."""
    previous = journal.snapshot(old)
    values = _doc_values(spec, prepared, at)
    SQLITE_STORES.document_rows(conn).update(int(old["id"]), values)
    store_content(conn, prepared, pending=pending)
    _write_structure(conn, int(old["id"]), prepared.meta)
    fts_upsert(
        conn,
        int(old["id"]),
        prepared.found.rel_path,
        prepared.meta,
        memory_managed=spec.memory_managed,
        pending=pending,
    )
    project_memory(conn, int(old["id"]), prepared.meta, managed=spec.memory_managed)
    SQLITE_STORES.journal(conn).append(
        "rename", spec.name, at, previous, journal.snapshot(values), {}
    )


def refresh_stat(conn: Connection, spec: CollectionSpec, doc_id: int, found: FoundFile) -> None:
    """A touched file whose bytes did not change: store its new size and mtime, clear its error."""
    SQLITE_STORES.document_rows(conn).refresh_stat(
        doc_id, found.size, mtime_iso(found.mtime_ns), found.mtime_ns
    )
    forget_record(conn, spec.name, found.rel_path)


def reactivate(conn: Connection, spec: CollectionSpec, row: RowView, at: str) -> None:
    SQLITE_STORES.document_rows(conn).set_active(int(row["id"]), True, at)
    if spec.memory_managed or fts5_ranks_documents(conn):
        markdown = SQLITE_STORES.documents(conn).mirror(row["mirror_hash"])
        if markdown is not None:
            meta = extract_meta(
                markdown, row["rel_path"], frontmatter=has_frontmatter(row["source_mime"])
            )
            fts_upsert(
                conn, int(row["id"]), row["rel_path"], meta, memory_managed=spec.memory_managed
            )
    previous = journal.snapshot(row)
    SQLITE_STORES.journal(conn).append(
        "reactivate", spec.name, at, previous, dict(previous, active=True), {}
    )


def inactivate(conn: Connection, row: RowView, observed_at: str) -> None:
    SQLITE_STORES.document_rows(conn).set_active(int(row["id"]), False, observed_at)
    fulltext.remove_document(conn, int(row["id"]))
    previous = journal.snapshot(row)
    current = dict(previous, active=False)
    SQLITE_STORES.journal(conn).append(
        "inactivate", row["collection"], observed_at, previous, current, {}
    )


def record_error(
    conn: Connection,
    spec: CollectionSpec,
    rel_path: str,
    error: GnoError,
    existing_id: int | None,
    report: SyncReport,
    at: str,
    *,
    judged: tuple[FoundFile, str] | None = None,
    unsupported: bool = False,
) -> None:
    """Record why a file is not indexed (see :mod:`.ingest.documents.records`).

    With ``judged`` (the file as seen, and the conversion policy) the record
    holds until the file or the policy changes; without, the file is tried
    again on the next sync (a read error may be passing). A document indexed
    before keeps its last good content and carries the error.
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
    if existing_id is not None:
        SQLITE_STORES.document_rows(conn).record_error(existing_id, error.code, error.message, at)
    report.errors.append({"relPath": rel_path, "code": error.code, "message": error.message})


def relist(report: SyncReport, record: RowView) -> None:
    """Report a file whose earlier verdict still holds, without reading it again."""
    if record["unsupported"]:
        report.skipped += 1
    else:
        report.errors.append(
            {"relPath": record["rel_path"], "code": record["code"], "message": record["message"]}
        )
        report.standing.add(record["rel_path"])


def note_warnings(report: SyncReport, prepared: Prepared) -> None:
    """What the user should know about a document just indexed (it is indexed all the same).

    A broken frontmatter block, and a converter warning of a code in
    :data:`.reasons.LISTED_WARNINGS` (an encoding that was guessed).
    """
    for text in prepared.converted.warnings:
        item = parse_warning(text)
        if item["code"] in LISTED_WARNINGS:
            report.warnings.append({"relPath": prepared.found.rel_path, **item})
    if prepared.meta.frontmatter_error:
        report.warnings.append(
            {
                "relPath": prepared.found.rel_path,
                "code": FRONTMATTER_INVALID,
                "message": prepared.meta.frontmatter_error,
            }
        )
