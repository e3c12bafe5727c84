"""Keeping the tantivy document index in line with SQLite: the writer side.

After each SQLite commit the :class:`Feeder` applies the change queue
(``doc_index_pending``) to tantivy and commits it with a stamp recording the
queue position reached (see :mod:`.store` for why the stamp makes a crash
between the two commits harmless); an index that is missing, unreadable or of
another generation is rebuilt from SQLite into a temporary directory renamed
into place. Callers hold the gno-trio write lease.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from typing import Final

import tantivy

from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.prepare import has_frontmatter
from gno_trio.engine.search.docindex import analysis
from gno_trio.engine.search.docindex.store import (
    FTS5,
    READERS,
    TANTIVY,
    Opened,
    State,
    base_dir,
    database_path,
    open_index,
    state,
)
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, write_transaction
from gno_trio.engine.store.document_index import FeedRow
from gno_trio.errors import GnoError

logger = logging.getLogger("gno_trio.engine")

WRITER_HEAP_BYTES: Final = 24_000_000
"""Indexing memory of the one writer thread (tantivy flushes a segment when it is full).

Since a sync commits only every :data:`COMMIT_EVERY` documents the buffer
does fill up; 24 MB instead of 48 kept a 100,000-document build's peak
memory 70 MiB lower (smaller segments, smaller merges) at no measured cost
in time on 10,000 documents.
"""
_FETCH: Final = 256
"""Documents read from SQLite per statement while feeding the index."""
COMMIT_EVERY: Final = 10_000
"""Documents a sync hands the writer between two tantivy commits.

Tantivy indexes what it is fed on its own thread; a commit waits until it
has caught up. Committing after every SQLite batch made the sync wait for
tantivy twenty times per 10,000 documents (a third of the indexing time);
committing every this many documents lets tantivy index while the sync
reads, parses and stores the next files. Until a commit, searches do not
see what was fed since the last one (the sync's lease release commits).
"""


def _body(markdown: str | None, rel_path: str, mime: str | None) -> str:
    """The text after the frontmatter (only Markdown has one), from the whole mirror."""
    if markdown is None:
        return ""
    return extract_meta(markdown, rel_path, frontmatter=has_frontmatter(mime or "")).body


def _split(joined: str | None) -> list[str]:
    return [part for part in (joined or "").split("\x1f") if part]


def _document(row: FeedRow, text: Callable[[str], str]) -> tantivy.Document:
    """The tantivy document of a :data:`~gno_trio.engine.store.document_index.FeedRow`
    (``text``: see ``analyzed_text``)."""
    doc_id, _, collection, rel_path, uri, title, body, markdown = row[:8]
    tags, categories, author_key, language_key, date = row[8:13]
    # The searchable metadata, as engine/store/fulltext.py writes it for FTS5.
    author_text, tags_text, categories_text = row[13:16]
    if body is None:  # indexed before body positions were stored
        body = _body(markdown, rel_path, row[16])
    document = tantivy.Document(
        filepath=text(rel_path),
        title=text(title),
        body=text(body),
        author=text(author_text),
        tags=text(tags_text),
        categories=text(categories_text),
        collection=collection,
        uri=uri,
        tag=_split(tags),
        category=_split(categories),
        author_key=author_key,
        language_key=language_key,
    )
    document.add_integer(analysis.ID_FIELD, int(doc_id))
    if date is not None:
        document.add_float(analysis.DATE_KEY, float(date))
    return document


def _feed(
    writer: tantivy.IndexWriter, conn: Connection, doc_ids: Sequence[int], tokenizer: str
) -> None:
    """Replace these documents in the index with what SQLite holds (active ones only)."""
    text = analysis.analyzed_text(tokenizer)
    index = SQLITE_STORES.document_index(conn)
    for start in range(0, len(doc_ids), _FETCH):
        part = list(doc_ids[start : start + _FETCH])
        for doc_id in part:
            writer.delete_documents_by_term(analysis.ID_FIELD, doc_id)
        for row in index.feed_rows(part):
            if row[1]:
                writer.add_document(_document(row, text))


def _stamp_document(position: int, generation: str) -> tantivy.Document:
    stamp = tantivy.Document(generation=analysis.stamped_generation(generation))
    stamp.add_integer(analysis.ID_FIELD, analysis.STAMP_ID)
    stamp.add_integer(analysis.STAMP_FIELD, position)
    return stamp


def _write_stamp(writer: tantivy.IndexWriter, position: int, generation: str) -> None:
    writer.delete_documents_by_term(analysis.ID_FIELD, analysis.STAMP_ID)
    writer.add_document(_stamp_document(position, generation))


class Feeder:
    """The writer side for one index: applies the queue after commits, rebuilds when needed.

    Holds one tantivy writer (and its lock on the directory) from the first
    change to :meth:`close`, so a long sync pays for it once. Callers hold
    the gno-trio write lease.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._base = base_dir(database_path(conn))
        self._opened: Opened | None = None
        self._writer: tantivy.IndexWriter | None = None
        self._fed: int | None = None
        """Queue position handed to the writer and not committed yet (None: nothing)."""
        self._uncommitted = 0

    def catch_up(self, *, prune: bool = True) -> bool:
        """Apply every queued change past the index's stamp and commit; True if anything changed.

        A missing or unreadable index is rebuilt. ``prune`` drops applied
        queue rows from SQLite (writers only: a reader healing the index at
        open writes nothing to the database).
        """
        return self._advance(commit=True, prune=prune)

    def feed(self) -> bool:
        """Hand the writer what SQLite queued since the last call (after a sync's batch).

        Commits once :data:`COMMIT_EVERY` documents are waiting; otherwise
        tantivy indexes them in the background until the next commit.
        """
        return self._advance(commit=False, prune=True)

    def _advance(self, *, commit: bool, prune: bool) -> bool:
        now = state(self._conn)
        if now.mode != TANTIVY or now.generation is None:
            return False
        opened = self._usable(now)
        if opened is None:
            self._rebuild(now.generation, now.tokenizer)
            changed = True
        else:
            held = opened.position if self._fed is None else self._fed
            changed = held < now.position or (commit and self._fed is not None)
            if changed:
                self._apply(opened, now, commit=commit)
        if prune:
            self._prune()
        return changed

    def _usable(self, now: State) -> Opened | None:
        assert now.generation is not None
        path = self._base / now.generation
        if self._opened is None or self._opened.path != path:
            self.close()
            try:
                self._opened = open_index(path, now.tokenizer)
            except GnoError as exc:
                if path.exists():
                    logger.warning("rebuilding the document index: %s", exc.message)
                return None
        opened = self._opened
        stamped = analysis.stamped_generation(now.generation)
        if opened.generation != stamped or opened.position > now.position:
            logger.warning("the document index does not belong to this database; rebuilding it")
            self.close()
            return None
        return opened

    def _apply(self, opened: Opened, now: State, *, commit: bool) -> None:
        """Feed the queue past what the writer holds; commit and stamp when asked or due."""
        assert now.generation is not None
        start = opened.position if self._fed is None else self._fed
        pending = SQLITE_STORES.document_index(self._conn).queued_after(start)
        if self._writer is None:
            self._writer = opened.index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        writer = self._writer
        try:
            _feed(writer, self._conn, pending, now.tokenizer)
            self._fed = now.position
            self._uncommitted += len(pending)
            commit = commit or self._uncommitted >= COMMIT_EVERY
            if commit:
                _write_stamp(writer, now.position, now.generation)
                writer.commit()
                self._fed, self._uncommitted = None, 0
        except BaseException:
            self._fed, self._uncommitted = None, 0  # the queue is replayed from the stamp
            with contextlib.suppress(Exception):
                writer.rollback()
            raise
        if commit:
            READERS.committed(self._base)
            opened.reload()

    def _rebuild(self, generation: str, tokenizer: str) -> None:
        """Build the generation's directory afresh from SQLite and move it into place."""
        self.close()
        self._base.mkdir(parents=True, exist_ok=True)
        building = self._base / f"{generation}.building-{secrets.token_hex(4)}"
        building.mkdir()
        try:
            index = tantivy.Index(analysis.schema(), path=str(building))
            index.register_tokenizer(analysis.ANALYZER_NAME, analysis.analyzer(tokenizer))
            writer = index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
            position = state(self._conn).position
            active = SQLITE_STORES.document_index(self._conn).active_ids()
            _feed(writer, self._conn, active, tokenizer)
            _write_stamp(writer, position, generation)
            writer.commit()
            writer.wait_merging_threads()
            target = self._base / generation
            if target.exists():
                shutil.rmtree(target)
            os.replace(building, target)
        finally:
            shutil.rmtree(building, ignore_errors=True)
        READERS.forget(self._base)
        self._remove_others(generation)
        self._opened = open_index(self._base / generation, tokenizer)

    def _remove_others(self, keep: str) -> None:
        """Drop directories of older generations and rebuilds that never finished."""
        with contextlib.suppress(OSError):
            for entry in self._base.iterdir():
                if entry.name != keep:
                    shutil.rmtree(entry, ignore_errors=True)

    def _prune(self) -> None:
        opened = self._opened
        if opened is None:
            return
        # A busy database leaves the rows to the next prune.
        SQLITE_STORES.document_index(self._conn).prune(opened.position)

    def finish(self) -> None:
        """Merge the segments committed so far (after a large sync) and let go of the writer."""
        writer, self._writer = self._writer, None
        if self._fed is not None:  # fed but not committed: dropped, replayed from the stamp
            with contextlib.suppress(Exception):
                writer.rollback()  # type: ignore[union-attr]
            self._fed, self._uncommitted = None, 0
        if writer is not None:
            writer.wait_merging_threads()
        if self._opened is not None:
            self._opened.reload()

    def close(self) -> None:
        """Let go of the writer (uncommitted changes are discarded) and the opened index."""
        writer, self._writer = self._writer, None
        self._fed, self._uncommitted = None, 0
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.rollback()
        self._opened = None

    # -- switching backends -------------------------------------------------

    def to_tantivy(self) -> None:
        """Make tantivy rank documents: build a new generation, then empty ``documents_fts``.

        Documents of memory-managed collections stay in ``documents_fts`` too
        (memory recall ranks with FTS5 on either backend).
        """
        now = state(self._conn)
        if now.mode == TANTIVY:
            return
        generation = secrets.token_hex(8)
        index = SQLITE_STORES.document_index(self._conn)
        with write_transaction(self._conn):
            # Queue from here on; the rebuild below reads every document anyway.
            index.switch(TANTIVY, generation)
            index.keep_memory_rows_only()
        self._rebuild(generation, now.tokenizer)

    def to_fts5(self) -> None:
        """Make FTS5 rank documents again: fill ``documents_fts`` from SQLite, drop tantivy."""
        now = state(self._conn)
        if now.mode == FTS5:
            return
        index = SQLITE_STORES.document_index(self._conn)
        with write_transaction(self._conn):
            index.switch(FTS5, None)
            ids = index.unindexed_active()
            for start in range(0, len(ids), _FETCH):
                _fts5_rows(self._conn, ids[start : start + _FETCH])
        self.close()
        READERS.forget(self._base)
        shutil.rmtree(self._base, ignore_errors=True)


def _fts5_rows(conn: Connection, ids: Sequence[int]) -> None:
    for row in SQLITE_STORES.document_index(conn).feed_rows(ids):
        doc_id, _, _, rel_path, _, title, body, markdown = row[:8]
        if body is None:
            body = _body(markdown, rel_path, row[16])
        fulltext.index_document(conn, int(doc_id), filepath=rel_path, title=title, body=body)
