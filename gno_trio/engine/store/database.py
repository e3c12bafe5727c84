"""The SQLite file behind an index: opening, pragmas, numbered migrations.

One database file holds every collection of an index. Connections are
opened in WAL mode so readers (search, MCP tools) never wait for the writer
(sync), and ``busy_timeout`` absorbs short writer overlaps between processes.
Connections are handed out by a small pool because a connection may be used
by one thread at a time, while trio hands engine work to whichever worker
thread is free.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias

from gno_trio.engine.store.upgrades import MIGRATION_STEPS
from gno_trio.errors import GnoError

logger = logging.getLogger("gno_trio.engine.store")


class RowView(Protocol):
    """A stored row read by column name: ``sqlite3.Row`` here, a mapping in other stores."""

    def __getitem__(self, key: str, /) -> Any: ...


def mapped_rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """An executed statement's rows as dicts by column name (each a :class:`RowView`).

    For rows whose columns are read many times over, as a search's result rows
    are: ``sqlite3.Row`` finds a column by comparing the name with each column
    name in turn, case-blind, a cost paid on every read (a quarter of a
    million instructions per search), where a dict pays one hash.
    """
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


Connection: TypeAlias = sqlite3.Connection
"""The connection bound to a call, as engine modules hand it on: they open the
aggregates' stores on it (:class:`~gno_trio.engine.store.aggregates.Stores`) and
run no statement on it themselves."""

StoreError: Final = sqlite3.Error
"""What the store raises when the database itself fails (a broken file, a full disk):
surfaces report it as a runtime failure without knowing which database it is."""
StoreUnreadable: Final = sqlite3.DatabaseError
"""The :data:`StoreError` of a database file that cannot be read as one (not a
database, or damaged): opening an index and ``doctor`` say so and what to do."""

DEFAULT_TOKENIZE = "porter unicode61 remove_diacritics 2"
_BUSY_TIMEOUT_MS = 5000
CACHE_KIB: Final = 32_000
"""Each connection's page cache, in KiB: all it holds of the file (see :data:`MMAP_BYTES`)."""
MMAP_BYTES: Final = 0
"""How much of the file a connection maps for its reads: none.

Mapped pages count in the process's resident memory, each connection's
apart, up to the whole map: a warm ``gno-trio mcp`` on 100,000 documents
held 180 MiB of them after 1,200 varied searches, and spent no less CPU per
search than reading through the page cache, which holds at most
:data:`CACHE_KIB` and gives it back at rest (:meth:`ConnectionPool.release_idle_memory`).
"""


def _migration_scripts() -> list[tuple[int, str]]:
    """Numbered ``NNN_name.sql`` files shipped inside the package, in order."""
    folder = resources.files("gno_trio.engine.store") / "migrations"
    scripts: list[tuple[int, str]] = []
    for entry in folder.iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            scripts.append((int(name[:3]), entry.read_text(encoding="utf-8")))
    scripts.sort()
    numbers = [number for number, _ in scripts]
    if len(set(numbers)) != len(numbers):
        # Two scripts with one number: the index would record that version after
        # running only one of them, and never run the other.
        raise RuntimeError(f"duplicate migration numbers: {numbers}")
    return scripts


def latest_version() -> int:
    """The schema version this gno-trio brings an index to."""
    scripts = _migration_scripts()
    return scripts[-1][0] if scripts else 0


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open one configured connection (autocommit; callers open transactions)."""
    try:
        if readonly:
            uri = f"file:{path}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        else:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise GnoError("RUNTIME", f"Cannot open index database {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    try:
        _configure(conn)
    except sqlite3.Error as exc:
        # sqlite3.connect is lazy: a file that is not a database (or is
        # locked or unreadable) only fails at the first statement.
        conn.close()
        raise GnoError("RUNTIME", f"Cannot open index database {path}: {exc}") from exc
    return conn


def release_free_pages(conn: sqlite3.Connection) -> int:
    """Give the file's free pages back to the file system; how many there were.

    Merging a full-text index after a bulk sync frees the pages of every
    segment it merged (8 % of a 100,000-document index); without this the
    file keeps them as free space until later writes reuse them. Only
    indexes created with incremental auto-vacuum (every index since it was
    introduced) can do it; on others this does nothing. Python's ``sqlite3``
    runs one step of the pragma per call (it returns no columns), and each
    step frees one page, hence the loop, in one transaction.
    """
    if int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) != 2:  # 2: incremental
        return 0
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    if free:
        with write_transaction(conn):
            for _ in range(free):
                conn.execute("PRAGMA incremental_vacuum(1)")
    return free


def database_path(conn: sqlite3.Connection) -> str:
    """The file of the main database ``conn`` is open on ("" for one in memory)."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else ""


def integrity_verdict(conn: sqlite3.Connection) -> str:
    """SQLite's quick integrity check: ``ok``, or what it found broken."""
    return str(conn.execute("PRAGMA quick_check").fetchone()[0])


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='schema_meta'"
    ).fetchone()
    if row is None:
        return 0
    value = conn.execute("SELECT value FROM schema_meta WHERE key='version'").fetchone()
    return int(value[0]) if value else 0


def stored_tokenizer(conn: sqlite3.Connection) -> str | None:
    """The FTS5 ``tokenize=`` clause this index was created with (None before that)."""
    if schema_version(conn) == 0:
        return None
    row = conn.execute("SELECT value FROM schema_meta WHERE key='fts_tokenizer'").fetchone()
    return str(row[0]) if row else None


# How long an open waits for another process that is upgrading the same index
# (the rebuild of a large full-text index outlasts the usual busy timeout).
MIGRATION_WAIT_S = 600.0


def _begin_migration(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``, waiting as long as another process is upgrading the index.

    Every process that opens an index migrates it; when several start at once
    (gateway workers, a CLI command beside a running server) one applies the
    migrations and the others wait for it, then find nothing left to do.
    """
    deadline = time.monotonic() + MIGRATION_WAIT_S
    told = False
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise GnoError(
                    "LOCKED",
                    f"Another process has been upgrading the index for over "
                    f"{MIGRATION_WAIT_S:.0f} s; try again when it is done",
                ) from exc
            if not told:
                logger.warning("waiting for another process that is upgrading the index")
                told = True


def migrate(conn: sqlite3.Connection, *, tokenize: str = DEFAULT_TOKENIZE) -> int:
    """Bring the schema to the newest version; returns the version reached.

    Each migration runs in its own ``BEGIN IMMEDIATE`` transaction, so two
    processes opening a fresh index at once cannot apply one twice.
    """
    if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None:
        # A new file: let a bulk sync hand back the pages its full-text merges
        # free (see release_free_pages); only settable before the first table.
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    current = schema_version(conn)
    scripts = _migration_scripts()
    latest = scripts[-1][0] if scripts else 0
    if current > latest:
        raise GnoError(
            "RUNTIME",
            f"Index schema version {current} is newer than this gno-trio supports ({latest})",
        )
    if 0 < current < latest:
        # A later migration may rebuild full-text data: on a large index that
        # takes a while, and nobody should think the command hung.
        logger.warning(
            "upgrading the index schema from version %d to %d; a large index takes a while",
            current,
            latest,
        )
    for number, script in scripts:
        if number <= current:
            continue
        _begin_migration(conn)
        try:
            if schema_version(conn) >= number:  # another process got there first
                conn.execute("COMMIT")
                continue
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            # Full-text tables rebuilt by a later migration keep the tokenizer
            # the index was created with, whatever the configuration says now:
            # its two FTS tables must tokenize alike.
            chosen = stored_tokenizer(conn) or tokenize
            prepare = MIGRATION_STEPS.get(number)
            if prepare is not None:
                prepare(conn)
            for statement in _split_statements(script.replace("{tokenize}", chosen)):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_meta(key, value) VALUES ('version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (str(number),),
            )
            if number == 2:
                conn.execute(
                    "INSERT OR REPLACE INTO schema_meta(key, value) VALUES ('fts_tokenizer', ?)",
                    (tokenize,),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return max(current, latest)


@contextlib.contextmanager
def open_index(
    path: Path, *, tokenize: str, finish: Callable[[sqlite3.Connection], None]
) -> Iterator[sqlite3.Connection]:
    """The index file at ``path`` opened, its schema brought up to date and the upgrades
    that need code done (``finish``), for the block; closed after it.

    A file that cannot be read as a database, here or in the block, is
    reported as a ``RUNTIME`` error that names it.
    """
    conn = connect(path)
    try:
        migrate(conn, tokenize=tokenize)
        finish(conn)
        yield conn
    except StoreUnreadable as exc:
        raise GnoError("RUNTIME", f"Cannot open index database {path}: {exc}") from exc
    finally:
        conn.close()


def _split_statements(script: str) -> Iterator[str]:
    """Split a migration script into complete statements (comments dropped)."""
    buffer: list[str] = []
    for line in script.splitlines():
        stripped = line.strip()
        if not buffer and (not stripped or stripped.startswith("--")):
            continue
        buffer.append(line)
        candidate = "\n".join(buffer)
        if stripped.endswith(";") and sqlite3.complete_statement(candidate):
            yield candidate
            buffer = []
    if buffer and "\n".join(buffer).strip():
        yield "\n".join(buffer)


class ConnectionPool:
    """A bounded set of reusable connections to one database file.

    ``acquire`` never blocks: when every pooled connection is busy a fresh one
    is opened, and surplus connections are closed on release. Connections
    are created with ``check_same_thread=False`` because a connection is taken
    on the event loop thread and used inside a worker thread; the pool makes
    sure only one user holds it at a time.
    """

    def __init__(self, path: Path, *, keep: int = 8) -> None:
        self.path = path
        self._keep = keep
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def acquire(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise GnoError("RUNTIME", "The index is closed")
            if self._idle:
                return self._idle.pop()
        return connect(self.path)

    def release(self, conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        with self._lock:
            if not self._closed and len(self._idle) < self._keep:
                self._idle.append(conn)
                return
        conn.close()

    def release_idle_memory(self) -> None:
        """Let the idle connections give back the pages their caches hold.

        A connection keeps what it read in its page cache (up to
        :data:`CACHE_KIB`) for as long as it lives: a vector load or a few
        searches of a large index leave tens of MiB behind. The next read
        fetches again what it needs, from the operating system's file cache.
        """
        with self._lock:
            idle, self._idle = self._idle, []
        try:
            for conn in idle:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA shrink_memory")
        finally:
            with self._lock:
                room = 0 if self._closed else max(0, self._keep - len(self._idle))
                self._idle.extend(idle[:room])
            for conn in idle[room:]:
                conn.close()

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        conn = self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


@contextlib.contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction for the block, unless the caller has one open already.

    A search runs several statements (rank, best chunks, snippets, vector
    rows); in one transaction they all see the index as it was when the
    first one ran, so a sync committing in between cannot leave a hit whose
    chunks are gone. It also takes SQLite's read lock once, not per statement.
    """
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        # Nothing was written, so ending the read cannot lose anything; a block
        # that failed keeps its own error (an interrupted statement may leave
        # no transaction), and the pool rolls back whatever is left.
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("ROLLBACK")


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception.

    A failure SQLite already rolled back (a full disk) keeps its own error.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


QUEUE_PAUSED: Final = "tantivy-bulk"
"""``schema_meta.document_index`` while a sync queues its new documents itself (tantivy
ranks; see :class:`.fulltext.PendingRows`); set and reset inside one transaction."""


def fts5_ranks_documents(conn: sqlite3.Connection) -> bool:
    """Whether ``documents_fts`` ranks documents (migration 12's ``document_index``).

    When tantivy does, writers leave ``documents_fts`` to the documents of
    memory-managed collections (memory recall ranks them with FTS5).
    """
    row = conn.execute("SELECT value FROM schema_meta WHERE key = 'document_index'").fetchone()
    return row is None or row[0] not in ("tantivy", QUEUE_PAUSED)
