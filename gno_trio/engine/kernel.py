"""The kernel of an opened index: where it lives, its configuration, its writers' rules.

:class:`EngineKernel` is what every engine service builds on: the index's
location, the configuration as ``index.yml`` says now, the connection pool,
and the rules every writer obeys. The public :class:`~gno_trio.engine.Engine`
adds one face per concern on top of it (see :mod:`gno_trio.engine.core`);
internal modules that need an engine take a kernel (those that index what
they wrote, the :class:`~gno_trio.engine.ingest.indexer.IndexingKernel` built
on it), so they never import the faces that call them.

The rules held here, once, for every surface:

* Opening an index never writes to it (beyond creating or upgrading its
  schema, and replaying into the document index what a crash kept from
  it). Bringing the database in line with a hand-edited ``index.yml``
  (:meth:`gno_trio.engine.ingest.indexer.IndexingKernel.reconcile`) is a
  write, done by writers only, and reported.
* Every write holds the one write lease of the data directory
  (:meth:`EngineKernel.writing`): a caller cannot forget it, and a caller
  that must keep it across several writes passes the
  :class:`~gno_trio.engine.store.lease.HeldLease` along. Before the lease
  is let go, the document index learns what the writes committed.
* The configuration is re-read when the file changes on disk, and written
  only as read-modify-write of the file under the lease
  (:meth:`EngineKernel.update_config`), so a running server never writes
  back a stale copy.

Surfaces hold no connection: every method takes the connection bound to
the running call (:mod:`gno_trio.engine.store.binding`), and an async
caller runs it through :meth:`EngineKernel.call_slot`, which interrupts the
statement when the request is cancelled.

The kernel says *when* the schema work left for code and the document
index's catch-up run; *what* they do belongs to floors above it (ingest,
search), so it calls them through :class:`IndexUpkeep`, which the
:class:`~gno_trio.engine.Engine` binds (:mod:`gno_trio.engine.core`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

from gno_trio.config import Collection, Config, dumps_config, fts5_tokenize_clause, load_config
from gno_trio.config.dirs import DEFAULT_INDEX_NAME, Dirs, resolve_dirs, validate_index_name
from gno_trio.engine.store.aggregates import SQLITE_STORES, Stores
from gno_trio.engine.store.binding import CallSlot, bound_connection
from gno_trio.engine.store.config_file import save_config
from gno_trio.engine.store.database import (
    Connection,
    ConnectionPool,
    StoreError,
    open_index,
)
from gno_trio.engine.store.lease import LOCKED_MESSAGE, FileLease, HeldLease, Lease
from gno_trio.errors import GnoError
from gno_trio.heap import trim_heap

if TYPE_CHECKING:
    from gno_trio.engine.team.plane import Team
    from gno_trio.engine.team.url import TeamStore

logger = logging.getLogger("gno_trio.engine")

StopFn = Callable[[], bool]
ConfigStamp = tuple[int, int, int, int] | None


class IndexHooks(Protocol):
    """What a sync tells the document index (the tantivy side, when it ranks).

    ``before_writing`` runs before the first batch, outside any transaction,
    with the number of active documents the sync should end with;
    ``after_commit`` runs after every committed batch.
    """

    def before_writing(self, expected_active: int) -> None: ...

    def after_commit(self) -> None: ...


class _ShippingHooks:
    """A sync's hooks that also ship each committed batch to the team."""

    __slots__ = ("_hooks", "_ship")

    def __init__(self, hooks: IndexHooks, ship: Callable[[], None]) -> None:
        self._hooks = hooks
        self._ship = ship

    def before_writing(self, expected_active: int) -> None:
        self._hooks.before_writing(expected_active)

    def after_commit(self) -> None:
        self._hooks.after_commit()
        self._ship()


class IndexUpkeep(Protocol):
    """The work the kernel's rules call for that floors above it know how to do.

    ``finish_upgrades`` is the part of a schema upgrade that needs code
    (ingest's re-chunking), run by every open after the migrations. The
    rest is the document index (search's): whether it is behind SQLite,
    replaying what it missed (``prune`` also drops the applied queue rows),
    and its part in one sync, which settles the backend and merges when the
    block ends without an error.
    """

    def finish_upgrades(self, conn: Connection) -> None: ...

    def document_index_lags(self, conn: Connection) -> bool: ...

    def heal_document_index(self, conn: Connection, *, prune: bool) -> bool: ...

    def document_indexing(
        self, conn: Connection, setting: str
    ) -> contextlib.AbstractContextManager[IndexHooks]: ...


@dataclass(frozen=True, slots=True)
class IndexLocation:
    dirs: Dirs
    index_name: str
    config_path: Path
    config_explicit: bool = False
    """The user chose the config (``--config`` or ``GNO_CONFIG_DIR``) rather than the default."""

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
        config_explicit=config_path is not None or dirs.config_explicit,
    )


def _missing_config(location: IndexLocation) -> GnoError | None:
    """Why a config the user named explicitly cannot be used, or None when it can."""
    if not location.config_explicit:
        return None
    if not location.config_path.parent.is_dir():
        return GnoError(
            "CONFIG_NOT_FOUND",
            f"Config directory {location.config_path.parent} does not exist "
            "(check --config or GNO_CONFIG_DIR)",
        )
    if location.config_path != location.dirs.config_file and not location.config_path.is_file():
        return GnoError(
            "CONFIG_NOT_FOUND",
            f"Config file {location.config_path} does not exist (check --config)",
        )
    return None


def _index_is_empty(conn: Connection) -> bool:
    return SQLITE_STORES.documents(conn).is_empty()


def _stamp(path: Path) -> ConfigStamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_cache_home: Path | None = None


def cache_home() -> Path | None:
    """The cache dir of the index this process opened last (None before any).

    What a process keeps once for all its indexes (the bundled model's
    weight cache) lives there.
    """
    return _cache_home


class EngineKernel:
    """An opened index: its configuration, its SQLite file and a connection pool."""

    upkeep: ClassVar[IndexUpkeep]
    """Bound by :class:`gno_trio.engine.Engine`, the one class that opens an index."""

    def __init__(self, location: IndexLocation, config: Config) -> None:
        global _cache_home
        self.location = location
        self._config = config
        self._config_stamp = _stamp(location.config_path)
        self.pool = ConnectionPool(location.db_path)
        self.stores: Stores = SQLITE_STORES
        """Each aggregate's store on a connection (the one place that names the backend)."""
        self.write_lease: Lease = FileLease(location.dirs.write_lock)
        """The lease writers take: the data directory's lock file, or team mode's."""
        self.team: Team | None = None
        """Team mode's shared coordination state, once :meth:`join_team` was called."""
        _cache_home = location.dirs.cache

    @classmethod
    def open(
        cls,
        *,
        index_name: str = DEFAULT_INDEX_NAME,
        config_path: Path | None = None,
        dirs: Dirs | None = None,
        create: bool = True,
        config_required: bool = False,
        may_create_config: bool = False,
        detached_team_cache: bool = True,
    ) -> Self:
        """Open (with ``create``, initialise) an index and bring its schema up to date.

        Nothing else is written: the collections of the database are left as
        they are until a writer reconciles them with the config. With
        ``config_required`` a config the user chose explicitly (a
        ``config_path``, or ``GNO_CONFIG_DIR``) must exist (``CONFIG_NOT_FOUND``),
        so a typo never looks like an empty index. ``may_create_config`` lets a
        command that writes the config (``init``, ``collection add``) start a
        new one, but only for an index that holds no collection yet.
        Without ``detached_team_cache`` a team cache (a file team mode made a
        cache of a shared index) is refused (``CONFLICT``) before anything is
        written: opened without its store it would drift from the team.
        """
        location = locate(index_name=index_name, config_path=config_path, dirs=dirs)
        missing = _missing_config(location) if config_required else None
        if missing is not None and not may_create_config:
            raise missing
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
        tokenize = fts5_tokenize_clause(config.fts_tokenizer)
        with open_index(db_path, tokenize=tokenize, finish=cls.upkeep.finish_upgrades) as conn:
            if not detached_team_cache:
                from gno_trio.engine.team.outbox import refuse_detached

                refuse_detached(conn, location.index_name)
            if missing is not None and not _index_is_empty(conn):
                raise GnoError(
                    "CONFIG_NOT_FOUND",
                    f"{missing.message}, and index {location.index_name} already holds "
                    "collections: a new config would hide them",
                )
        kernel = cls(location, config)
        kernel._heal_at_open()
        return kernel

    def join_team(self, team: Team) -> None:
        """Coordinate with the other gateways of ``team``: its lease from now on, and its
        stores for the aggregates it shares; closed with us.

        The index file becomes a cache of the team's rows: caught up now (or,
        for the first host of an empty team index, shipped whole), its writes
        shipped by the lease (:mod:`gno_trio.engine.team.replica`). Call it
        right after opening, before any writer runs.
        """
        self.team = team
        self.stores = team.stores()
        team.share_config(self.location.config_path)
        self.write_lease = team.replicate(
            self.pool,
            FileLease(self.location.dirs.write_lock),
            lambda: self.catch_up_documents(prune=True),
        )
        assert team.replica is not None
        team.replica.join(self.lease)

    def copy_to_store(self, store: TeamStore) -> dict[str, Any]:
        """Ship this embedded index whole to ``store``'s empty copy of it (``store copy
        --to``); this index is only read. ``CONFLICT`` when the store holds it already."""
        from gno_trio.engine.team.transfer import copy_to_store

        location = self.location
        return copy_to_store(store, location.index_name, location.db_path, location.config_path)

    def copy_from_store(self, store: TeamStore) -> dict[str, Any]:
        """Fill this index, which must hold no document, from ``store``'s copy of it (``store
        copy --from``), leaving a plain embedded index with the team's configuration."""
        from gno_trio.engine.team.transfer import copy_from_store

        return copy_from_store(
            store,
            self.location.index_name,
            self.pool,
            self.location.config_path,
            FileLease(self.location.dirs.write_lock),
            lambda: self.catch_up_documents(prune=True),
        )

    def close(self) -> None:
        self.pool.close()
        if self.team is not None:
            self.team.close()

    def rest(self) -> None:
        """Give back what the last calls left resident and no idle moment needs.

        A serving process calls it once it has been idle a while (see
        :meth:`gno_trio.runtime.Runtime.rest_when_idle`): the index pages its
        idle connections hold in their caches, and the heap pages Python and
        SQLite freed. Costs a few milliseconds, and the next read a read from
        the operating system's file cache per page it needs again.
        """
        self.pool.release_idle_memory()
        trim_heap()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection]:
        """The running call's connection, else a pooled one bound for the block.

        Every statement of one engine call runs on this one connection (see
        :mod:`.store.binding`); a second connection beside it comes from
        ``self.pool`` directly.
        """
        with bound_connection(self.pool) as conn:
            yield conn

    def call_slot(self) -> CallSlot:
        """A slot for one call run in a worker thread: ``slot.run(work)`` there, ``slot.cancel()``
        from the caller that gave up on it (its running statement is interrupted)."""
        return CallSlot(self.pool)

    # -- the write lease ----------------------------------------------------

    @contextlib.contextmanager
    def lease(
        self,
        *,
        wait_seconds: float | None = None,
        should_stop: StopFn | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
    ) -> Iterator[HeldLease]:
        """The one write lease of this data directory, shared by every writer.

        Before it is let go, the tantivy document index learns what the
        holder's writes committed (when tantivy ranks documents).
        """
        with self.write_lease.hold(
            wait_seconds=wait_seconds,
            should_stop=should_stop,
            busy_code=busy_code,
            busy_message=busy_message,
        ) as held:
            try:
                yield held
            finally:
                self.catch_up_documents(prune=True)

    @contextlib.contextmanager
    def writing(
        self,
        lease: HeldLease | None = None,
        *,
        wait_seconds: float | None = None,
        should_stop: StopFn | None = None,
    ) -> Iterator[HeldLease]:
        """The block runs under the write lease: ``lease`` if the caller holds it, else taken."""
        if lease is not None:
            if not lease.active or lease.where != self.write_lease.where:
                raise GnoError("RUNTIME", "The write lease handed over is not held")
            yield lease
            return
        with self.lease(wait_seconds=wait_seconds, should_stop=should_stop) as held:
            yield held

    @contextlib.contextmanager
    def _document_indexing(self, conn: Connection, setting: str) -> Iterator[IndexHooks]:
        """The document index's part in one sync (:meth:`IndexUpkeep.document_indexing`);
        in team mode each committed batch is also shipped, so other hosts see a long sync
        progress batch by batch."""
        with self.upkeep.document_indexing(conn, setting) as hooks:
            replica = self.team.replica if self.team is not None else None
            yield hooks if replica is None else _ShippingHooks(hooks, replica.ship_now)

    def catch_up_documents(self, *, prune: bool) -> None:
        """Let the tantivy document index learn what the writes committed (no-op under FTS5).

        Never fails the write it follows: whatever it cannot do now, the next
        writer or the next open replays (see :mod:`.search.docindex.store`).
        """
        try:
            with self.pool.connection() as conn:
                self.upkeep.heal_document_index(conn, prune=prune)
        except (GnoError, StoreError, OSError, ValueError) as exc:
            logger.warning("the document index could not catch up yet: %s", exc)

    def _heal_at_open(self) -> None:
        """After a crash between SQLite's commit and tantivy's, the next open catches up.

        Only the tantivy directory is written (never the database), and only
        when the write lease is free: a running writer catches up itself.
        """
        with self.pool.connection() as conn:
            if not self.upkeep.document_index_lags(conn):
                return
        with (
            contextlib.suppress(GnoError),
            self.write_lease.hold(wait_seconds=0),
        ):
            self.catch_up_documents(prune=False)

    # -- configuration -----------------------------------------------------

    @property
    def config(self) -> Config:
        """The configuration as ``index.yml`` says now.

        The file is re-read when its identity, size or modification time
        changed (one ``stat`` per use otherwise). A file that no longer
        parses leaves the last good configuration in force, with a warning;
        writers refuse to write over it (:meth:`update_config`).
        """
        path = self.location.config_path
        stamp = _stamp(path)
        if stamp != self._config_stamp:
            try:
                self._config = load_config(path)
            except GnoError as exc:
                logger.warning(
                    "index.yml changed but cannot be read, keeping the last good configuration: %s",
                    exc.message,
                )
            self._config_stamp = stamp
        return self._config

    def update_config(
        self, change: Callable[[Config], Config], *, lease: HeldLease | None = None
    ) -> Config:
        """Read-modify-write of ``index.yml`` under the write lease; the config written.

        ``change`` gets the file as it is on disk now (not the copy this
        engine loaded), so edits made by hand or by another process survive.
        A file that does not parse is ``CONFIG_INVALID``: nothing is written.
        """
        path = self.location.config_path
        with self.writing(lease):
            if self.team is not None:  # start from the team's latest, publish before writing
                self.team.adopt_config()
            current = load_config(path)
            updated = change(current)
            if updated != current or not path.exists():
                if self.team is not None:
                    self.team.publish_config(dumps_config(updated))
                save_config(path, updated)
            self._config, self._config_stamp = updated, _stamp(path)
            return updated

    def collection(self, name: str) -> Collection:
        found = self.config.collection(name.strip().lower())
        if found is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {name}")
        return found


__all__ = ["EngineKernel", "IndexHooks", "IndexLocation", "IndexUpkeep", "locate"]
