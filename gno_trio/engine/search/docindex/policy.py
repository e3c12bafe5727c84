"""Which index ranks documents, and keeping the tantivy one current while a sync writes.

``search.backend`` in ``index.yml`` chooses: ``fts5``, ``tantivy``, or
``auto`` (the default): FTS5 until an index holds
:data:`AUTO_TANTIVY_DOCUMENTS` active documents, tantivy from then on, and
FTS5 again only if it shrinks below half that (so an index near the line
does not switch back and forth). Switching is a write, done at the start of
a sync (before its batches, so a first sync of a large corpus feeds tantivy
from its first batch and never fills ``documents_fts``) and at its end.

Why the line sits where it does (``bench/bench_scale.py`` times both in
one run): below it FTS5's search is already within the latency targets and
its ranking is the one the retrieval eval was measured on; above it FTS5's
p99 climbs past them while tantivy's stays flat.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

from gno_trio.engine.search.docindex.store import FTS5, READERS, TANTIVY, state
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection

AUTO_TANTIVY_DOCUMENTS: Final = 10_000


def wanted(setting: str, active: int, current: str) -> str:
    """The backend an index should rank with, given the setting and its size."""
    if setting in (FTS5, TANTIVY):
        return setting
    if current == FTS5 and active >= AUTO_TANTIVY_DOCUMENTS:
        return TANTIVY
    if current == TANTIVY and active < AUTO_TANTIVY_DOCUMENTS // 2:
        return FTS5
    return current


def active_documents(conn: Connection) -> int:
    return SQLITE_STORES.counts(conn).active_documents()


class DocumentIndexing:
    """What a sync does for the document index: choose the backend, feed tantivy.

    Used by the writer holding the lease for the whole sync; see
    :class:`gno_trio.engine.kernel.IndexHooks` for when each is called.
    """

    def __init__(self, conn: Connection, setting: str) -> None:
        from gno_trio.engine.search.docindex.feeder import Feeder  # the writer side: to write

        self._conn = conn
        self._setting = setting
        self._feeder = Feeder(conn)

    def before_writing(self, expected_active: int) -> None:
        """Switch backends before a sync's batches if its outcome calls for it."""
        self._switch(expected_active)

    def after_commit(self) -> None:
        """A batch was committed: tantivy is fed it now (no-op under FTS5).

        It commits every :data:`.feeder.COMMIT_EVERY` documents and at
        :meth:`finish`, so it indexes while the sync goes on.
        """
        self._feeder.feed()

    def finish(self) -> None:
        """The sync is over: settle the backend for the final size, merge segments."""
        self._switch(active_documents(self._conn))
        self._feeder.catch_up()
        self._feeder.finish()

    def close(self) -> None:
        self._feeder.close()

    def _switch(self, active: int) -> None:
        current = state(self._conn).mode
        target = wanted(self._setting, active, current)
        if target == current:
            return
        if target == TANTIVY:
            self._feeder.to_tantivy()
        else:
            self._feeder.to_fts5()


@contextlib.contextmanager
def document_indexing(conn: Connection, setting: str) -> Iterator[DocumentIndexing]:
    """The document index's part in one sync, for the block's duration.

    When the block ends without an error the backend is settled for the
    final size and the segments merged (:meth:`DocumentIndexing.finish`);
    the feeder is closed either way.
    """
    indexing = DocumentIndexing(conn, setting)
    try:
        yield indexing
        indexing.finish()
    finally:
        indexing.close()


def document_index_lags(conn: Connection) -> bool:
    """Whether tantivy ranks and its index is missing, unreadable or behind SQLite."""
    now = state(conn)
    if now.mode != TANTIVY:
        return False
    opened = READERS.current(conn, now)
    return opened is None or opened.position < now.position


def heal_document_index(conn: Connection, *, prune: bool) -> bool:
    """Replay what the tantivy index missed, or rebuild it; True if it changed.

    Called by writers after their writes and by an open that can take the
    write lease; ``prune`` (writers only) also drops the applied queue rows.
    """
    if not document_index_lags(conn) and not (prune and _queued(conn)):
        return False
    from gno_trio.engine.search.docindex.feeder import Feeder

    feeder = Feeder(conn)
    try:
        changed = feeder.catch_up(prune=prune)
        feeder.finish()
        return changed
    finally:
        feeder.close()


def _queued(conn: Connection) -> bool:
    return SQLITE_STORES.document_index(conn).any_queued()
