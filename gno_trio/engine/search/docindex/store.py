"""The tantivy document index on disk: where it lives, how it learns changes, how it heals.

The index is a directory beside the database (``index-<name>.terms/<generation>/``)
and only ever a copy: SQLite is the source of truth. Migration 12's triggers
queue every change to a document's searchable columns or tags in
``doc_index_pending`` (one row per document, the newest change last), in the
same transaction as the change. After each commit the writer applies the
queue to tantivy and commits it with a *stamp* document that records the
queue position it reached and the generation of the directory (the writer
side is :mod:`.feeder`). So:

* a kill -9 between the SQLite commit and the tantivy commit leaves rows
  past the stamp; the next writer, or the next open, replays exactly those;
* a directory that is missing, unreadable or of another generation (a
  restored backup) is rebuilt from SQLite under the write lease, into a
  temporary directory renamed into place, so a crash mid-rebuild leaves
  nothing half-built in use.

Readers keep one opened index per database per process and reload it when
SQLite's queue position passes the stamp they hold (one small query per
search). Tantivy calls cannot be interrupted: a search runs to its end (a
few milliseconds); a catch-up interrupted between two calls leaves its
uncommitted work to be discarded and the queue to be replayed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import tantivy

from gno_trio.engine.search.docindex import analysis
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.errors import GnoError

FTS5: Final = "fts5"
TANTIVY: Final = "tantivy"
_RETRY_S: Final = 0.05
"""A reader whose index lags SQLite reloads it at most this often."""


@dataclass(frozen=True, slots=True)
class State:
    """What SQLite says about the document index: its backend, directory and queue position."""

    mode: str
    generation: str | None
    position: int
    tokenizer: str


def state(conn: Connection) -> State:
    mode, generation, position, tokenizer = SQLITE_STORES.document_index(conn).state()
    return State(mode or FTS5, generation, position, tokenizer or "unicode61")


def database_path(conn: Connection) -> Path:
    return Path(SQLITE_STORES.documents(conn).database_file())


def base_dir(db_path: Path) -> Path:
    """``index-<name>.terms`` beside ``index-<name>.sqlite``."""
    return db_path.with_suffix(".terms")


# -- an opened index --------------------------------------------------------


@dataclass(slots=True)
class Opened:
    """One index directory opened in this process, and the stamp of its last reload."""

    path: Path
    index: tantivy.Index
    searcher: tantivy.Searcher
    position: int
    generation: str
    retry_at: float = 0.0
    """When a lagging index may be reloaded again (its writer commits tantivy a moment later)."""

    def reload(self) -> None:
        self.index.reload()
        self.searcher = self.index.searcher()
        self.position, self.generation = _read_stamp(self.searcher, self.index.schema)


def _read_stamp(searcher: tantivy.Searcher, schema: tantivy.Schema) -> tuple[int, str]:
    query = tantivy.Query.term_query(schema, analysis.ID_FIELD, analysis.STAMP_ID)
    hits = searcher.search(query, 1, count=False).hits
    if not hits:
        raise GnoError("RUNTIME", "the document index has no stamp")
    stamp = searcher.doc(hits[0][1])
    return int(stamp.get_first(analysis.STAMP_FIELD) or 0), str(stamp.get_first("generation"))


def open_index(path: Path, tokenizer: str) -> Opened:
    """Open an index directory; ``GnoError`` when it is missing or unreadable."""
    # Index.exists raises rather than answer False for a directory that is missing
    # (a host whose copy of a team index names a generation it never built).
    if not path.is_dir() or not tantivy.Index.exists(str(path)):
        raise GnoError("RUNTIME", f"no document index at {path}")
    try:
        index = tantivy.Index.open(str(path))
        index.register_tokenizer(analysis.ANALYZER_NAME, analysis.analyzer(tokenizer))
        index.config_reader(reload_policy="manual")
        searcher = index.searcher()
        position, generation = _read_stamp(searcher, index.schema)
    except (ValueError, OSError) as exc:
        raise GnoError("RUNTIME", f"the document index at {path} is unreadable: {exc}") from exc
    return Opened(path, index, searcher, position, generation)


class _Readers:
    """The opened index of each database in this process (searches share it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._opened: dict[Path, Opened] = {}

    def current(self, conn: Connection, now: State) -> Opened | None:
        """The index as SQLite says it should be, reloaded if it lags; None if unusable."""
        if now.generation is None:
            return None
        path = base_dir(database_path(conn)) / now.generation
        with self._lock:
            opened = self._opened.get(path.parent)
            try:
                if opened is None or opened.path != path:
                    opened = open_index(path, now.tokenizer)
                    self._opened[path.parent] = opened
                elif opened.position < now.position and time.monotonic() >= opened.retry_at:
                    opened.reload()
                    opened.retry_at = time.monotonic() + _RETRY_S
            except GnoError:
                self._opened.pop(path.parent, None)
                return None
            if opened.generation != analysis.stamped_generation(now.generation):
                return None
            return opened

    def forget(self, base: Path) -> None:
        with self._lock:
            self._opened.pop(base, None)

    def committed(self, base: Path) -> None:
        """A writer of this process committed: the next search reloads at once.

        Without this, a reader that reloaded a moment before the commit
        (and found it missing) would wait out :data:`_RETRY_S` and answer
        from the older index meanwhile.
        """
        with self._lock:
            opened = self._opened.get(base)
            if opened is not None:
                opened.retry_at = 0.0


READERS: Final = _Readers()
