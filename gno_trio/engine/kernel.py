"""The kernel of an opened index: where it lives, its configuration, its connections.

:class:`EngineKernel` is what every engine service builds on: the index's
location, the configuration it was opened with, the connection pool, and
the few operations several concerns share (finding a collection, indexing
a handful of paths after a write). The public :class:`~gno_trio.engine.Engine`
adds one face per concern on top of it (see :mod:`gno_trio.engine.core`);
internal modules that need an engine take a kernel, so they never import
the faces that call them.

Each method accepts an optional ``conn`` so an async caller can hold the
connection itself and interrupt its statement when the request is cancelled.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from gno_trio.config import Collection, Config, fts5_tokenize_clause, load_config, save_config
from gno_trio.dirs import DEFAULT_INDEX_NAME, Dirs, resolve_dirs, validate_index_name
from gno_trio.engine.ingest.collection_rows import reconcile_collections
from gno_trio.engine.ingest.roots import validate_root
from gno_trio.engine.ingest.sync import (
    CollectionSpec,
    ProgressFn,
    SyncReport,
    compact_full_text,
    sync_collection,
)
from gno_trio.engine.store import journal
from gno_trio.engine.store.database import ConnectionPool, connect, migrate, unmapped
from gno_trio.engine.store.lease import LOCKED_MESSAGE, write_lease
from gno_trio.errors import GnoError


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


@dataclass(frozen=True, slots=True)
class IndexLocation:
    dirs: Dirs
    index_name: str
    config_path: Path

    @property
    def db_path(self) -> Path:
        return self.dirs.database(self.index_name)


def locate(
    *,
    index_name: str = DEFAULT_INDEX_NAME,
    config_path: Path | None = None,
    dirs: Dirs | None = None,
) -> IndexLocation:
    dirs = dirs or resolve_dirs()
    return IndexLocation(
        dirs=dirs,
        index_name=validate_index_name(index_name),
        config_path=config_path or dirs.config_file,
    )


class EngineKernel:
    """An opened index: its configuration, its SQLite file and a connection pool."""

    def __init__(self, location: IndexLocation, config: Config) -> None:
        self.location = location
        self.config = config
        self.pool = ConnectionPool(location.db_path)

    @classmethod
    def open(
        cls,
        *,
        index_name: str = DEFAULT_INDEX_NAME,
        config_path: Path | None = None,
        dirs: Dirs | None = None,
        create: bool = True,
    ) -> Self:
        """Open (and with ``create`` initialise) an index and apply migrations."""
        location = locate(index_name=index_name, config_path=config_path, dirs=dirs)
        config = load_config(location.config_path)
        db_path = location.db_path
        if not db_path.exists() and not create:
            raise GnoError("NOT_FOUND", f"Index not found: {location.index_name}")
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GnoError(
                "RUNTIME", f"Cannot create data directory {db_path.parent}: {exc.strerror or exc}"
            ) from exc
        conn = connect(db_path)
        try:
            migrate(conn, tokenize=fts5_tokenize_clause(config.fts_tokenizer))
            reconcile_collections(conn, [spec_for(c) for c in config.collections])
        except sqlite3.DatabaseError as exc:
            raise GnoError("RUNTIME", f"Cannot open index database {db_path}: {exc}") from exc
        finally:
            conn.close()
        return cls(location, config)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def connection(self, conn: sqlite3.Connection | None = None) -> Iterator[sqlite3.Connection]:
        """``conn`` itself when given, else a pooled connection for the block."""
        if conn is not None:
            yield conn
        else:
            with self.pool.connection() as owned:
                yield owned

    def lease(
        self,
        *,
        wait_seconds: float | None = None,
        should_stop: Callable[[], bool] | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
    ) -> contextlib.AbstractContextManager[None]:
        """The one write lease of this data directory, shared by every writer."""
        return write_lease(
            self.location.dirs.write_lock,
            wait_seconds=wait_seconds,
            should_stop=should_stop,
            busy_code=busy_code,
            busy_message=busy_message,
        )

    # -- configuration -----------------------------------------------------

    def save_config(self, config: Config) -> None:
        save_config(self.location.config_path, config)
        self.config = config

    def collection(self, name: str) -> Collection:
        found = self.config.collection(name.strip().lower())
        if found is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {name}")
        return found

    # -- indexing ----------------------------------------------------------

    def sync(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: ProgressFn | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> list[SyncReport]:
        """Bring the index in line with the files of ``names`` (every collection by default)."""
        targets = [self.collection(n) for n in names] if names else list(self.config.collections)
        reports = []
        with self.connection(conn) as c, unmapped(c):
            for collection in targets:
                try:
                    validate_root(collection.path)
                except GnoError as error:
                    report = SyncReport(collection=collection.name)
                    report.errors.append(
                        {"relPath": ".", "code": error.code, "message": error.message}
                    )
                    reports.append(report)
                    continue
                reports.append(sync_collection(c, spec_for(collection), progress=progress))
            with contextlib.suppress(sqlite3.Error):
                c.execute("BEGIN IMMEDIATE")
                journal.prune(c)
                c.execute("COMMIT")
            with contextlib.suppress(sqlite3.Error):  # an optimisation: never fails a sync
                compact_full_text(c, sum(report.changed for report in reports))
        return reports

    def sync_paths(
        self, name: str, rel_paths: Sequence[str], *, conn: sqlite3.Connection | None = None
    ) -> SyncReport:
        """Index just these files of one collection (after a write through gno-trio)."""
        collection = self.collection(name)
        with self.connection(conn) as c:
            return sync_collection(c, spec_for(collection), only=set(rel_paths))


__all__ = ["EngineKernel", "IndexLocation", "locate", "spec_for"]
