"""The knowledge engine's public API: one object per opened index.

Everything a surface (CLI, MCP tools, HTTP gateway) does goes through
``Engine``. Methods are synchronous and self-contained; the async layers run
them in worker threads. Each method accepts an optional ``conn`` so an async
caller can hold the connection itself and interrupt its statement when the
request is cancelled.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gno_trio.config import Collection, Config, fts5_tokenize_clause, load_config, save_config
from gno_trio.dirs import (
    DEFAULT_INDEX_NAME,
    Dirs,
    canonical_index_name,
    resolve_dirs,
    validate_index_name,
)
from gno_trio.engine import journal, reads
from gno_trio.engine import status as status_mod
from gno_trio.engine.collections import normalize_name, validate_root
from gno_trio.engine.ingest.documents.limits import limits_from_settings
from gno_trio.engine.ingest.documents.runner import ConversionRunner
from gno_trio.engine.search import ContextRule, SearchRequest, search
from gno_trio.engine.store import (
    ConnectionPool,
    connect,
    migrate,
    schema_version,
    write_transaction,
)
from gno_trio.engine.sync import (
    CollectionSpec,
    ProgressFn,
    SyncReport,
    collection_row_matches,
    compact_full_text,
    inactivate,
    now_iso,
    sync_collection,
    upsert_collection,
)
from gno_trio.engine.uris import parse_ref, with_index
from gno_trio.errors import GnoError


def spec_for(collection: Collection) -> CollectionSpec:
    return CollectionSpec(
        name=collection.name,
        path=Path(collection.path),
        pattern=collection.pattern,
        include=tuple(collection.include),
        exclude=tuple(collection.exclude),
        language_hint=collection.language_hint,
        egress_policy=collection.egress_policy or "local_only",
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


class Engine:
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
    ) -> Engine:
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
            _reconcile_collections(conn, config)
        except sqlite3.DatabaseError as exc:
            raise GnoError("RUNTIME", f"Cannot open index database {db_path}: {exc}") from exc
        finally:
            conn.close()
        return cls(location, config)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def connection(self, conn: sqlite3.Connection | None = None) -> Iterator[sqlite3.Connection]:
        """``conn`` itself when given, else a pooled connection for the block."""
        with self._conn(conn) as c:
            yield c

    @contextlib.contextmanager
    def _conn(self, conn: sqlite3.Connection | None) -> Iterator[sqlite3.Connection]:
        if conn is not None:
            yield conn
        else:
            with self.pool.connection() as owned:
                yield owned

    # -- configuration -----------------------------------------------------

    def save_config(self, config: Config) -> None:
        save_config(self.location.config_path, config)
        self.config = config

    def collection(self, name: str) -> Collection:
        found = self.config.collection(name.strip().lower())
        if found is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {name}")
        return found

    def add_collection(
        self,
        path: str,
        *,
        name: str | None = None,
        pattern: str | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] | None = None,
        language_hint: str | None = None,
        memory_managed: bool = False,
    ) -> Collection:
        """Validate and register a folder; nothing is written when a check fails."""
        root = validate_root(path)
        chosen = normalize_name(name if name is not None else root.name)
        if self.config.collection(chosen) is not None:
            raise GnoError("DUPLICATE", f"Collection already exists: {chosen}")
        for existing in self.config.collections:
            if Path(existing.path) == root:
                raise GnoError(
                    "DUPLICATE", f"{root} is already indexed as collection {existing.name}"
                )
        fields: dict[str, Any] = {"name": chosen, "path": root}
        if pattern:
            fields["pattern"] = pattern
        if include:
            fields["include"] = tuple(include)
        if exclude is not None:
            fields["exclude"] = tuple(exclude)
        if language_hint:
            fields["language_hint"] = language_hint
        if memory_managed:
            fields["memory_managed"] = True
        try:
            collection = Collection(**fields)
        except (TypeError, ValueError) as exc:
            raise GnoError("INVALID_INPUT", str(exc)) from exc
        self.save_config(self.config.with_collection(collection))
        with self.pool.connection() as conn:
            _ensure_collection_row(conn, collection)
        return collection

    def remove_collection(self, name: str) -> dict[str, Any]:
        """Drop a collection from the config; its documents leave search results."""
        collection = self.collection(name)
        # The config is the source of truth and is written first; if the
        # database step fails, the next open reconciles it.
        self.save_config(self.config.without_collection(collection.name))
        with self.pool.connection() as conn, write_transaction(conn):
            dropped = _drop_collection_rows(conn, collection.name)
        return {"removed": True, "collection": collection.name, "documents": dropped}

    # -- indexing ----------------------------------------------------------

    def sync(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: ProgressFn | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> list[SyncReport]:
        targets = [self.collection(n) for n in names] if names else list(self.config.collections)
        reports = []
        with self._conn(conn) as c, self._conversion_runner() as runner:
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
                spec = spec_for(collection)
                reports.append(sync_collection(c, spec, progress=progress, runner=runner))
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
        with self._conn(conn) as c, self._conversion_runner() as runner:
            return sync_collection(c, spec_for(collection), only=set(rel_paths), runner=runner)

    def _conversion_runner(self) -> ConversionRunner:
        """Conversion workers for one sync, bounded as ``conversion:`` in index.yml says.

        Workers start only when a document needs converting, and stop with
        the sync: an idle server keeps no converter processes.
        """
        settings = self.config.conversion
        return ConversionRunner(limits_from_settings(settings), workers=settings.workers)

    # -- reads -------------------------------------------------------------

    def context_rules(self) -> tuple[ContextRule, ...]:
        return tuple(
            ContextRule(scope_type=c.scope_type, scope_key=c.scope_key, text=c.text)
            for c in self.config.contexts
        )

    def search(
        self, request: SearchRequest, *, conn: sqlite3.Connection | None = None
    ) -> dict[str, Any]:
        if not request.contexts and self.config.contexts:
            request = _with_contexts(request, self.context_rules())
        with self._conn(conn) as c:
            return search(c, request)

    def get(
        self,
        ref: str,
        *,
        from_line: int | None = None,
        line_count: int | None = None,
        line_numbers: bool = True,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        named = self._named_index([ref])
        with self._index_connection(named, conn) as c:
            result = reads.get(
                c, ref, from_line=from_line, line_count=line_count, line_numbers=line_numbers
            )
        if named is not None:
            result["uri"] = with_index(result["uri"], named)
        return result

    def multi_get(
        self,
        *,
        refs: Sequence[str] | None = None,
        pattern: str | None = None,
        max_bytes: int = reads.DEFAULT_MAX_BYTES,
        line_numbers: bool = True,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        named = self._named_index(refs or ())
        with self._index_connection(named, conn) as c:
            result = reads.multi_get(
                c, refs=refs, pattern=pattern, max_bytes=max_bytes, line_numbers=line_numbers
            )
        if named is not None:
            for document in result["documents"]:
                document["uri"] = with_index(document["uri"], named)
        return result

    def _named_index(self, refs: Sequence[str]) -> str | None:
        """The other index a batch of refs names (``?index=<name>``, canonical), or None.

        One request reads one index: refs naming two indexes, or naming
        another index beside plain refs (which mean this one), are refused so
        the caller splits the batch. Refs that do not parse are left to the
        read, which reports them.
        """
        named: set[str] = set()
        plain = False
        for ref in refs:
            try:
                index = parse_ref(ref).index
            except GnoError:
                continue
            if index is None:
                plain = True
            else:
                named.add(canonical_index_name(index))
        other = sorted(named - {canonical_index_name(self.location.index_name)})
        if len(named) > 1 or (other and plain):
            raise GnoError(
                "INVALID_INPUT",
                "All refs in one request must name one index; split the batch by index",
            )
        return other[0] if other else None

    @contextlib.contextmanager
    def _index_connection(
        self, named: str | None, conn: sqlite3.Connection | None
    ) -> Iterator[sqlite3.Connection]:
        """This index's connection, or a read-only one to the named index.

        A named index that does not exist is an error; it is never created.
        """
        if named is None:
            with self._conn(conn) as c:
                yield c
            return
        path = self.location.dirs.database(named)
        if not path.is_file():
            raise GnoError("NOT_FOUND", f"Index not found: {named}")
        other = connect(path, readonly=True)
        try:
            if schema_version(other) < 1:
                raise GnoError("RUNTIME", f"Not a gno index: {named}")
            yield other
        finally:
            other.close()

    def ls(
        self,
        *,
        collection: str | None = None,
        prefix: str | None = None,
        limit: int = 1000,
        offset: int = 0,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        with self._conn(conn) as c:
            return reads.ls(c, collection=collection, prefix=prefix, limit=limit, offset=offset)

    def list_tags(
        self,
        *,
        collection: str | None = None,
        prefix: str | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        with self._conn(conn) as c:
            return reads.list_tags(c, collection=collection, prefix=prefix)

    def changes(
        self,
        *,
        since: str | None = None,
        collection: str | None = None,
        limit: int = 100,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        with self._conn(conn) as c:
            return journal.feed(c, since=since, collection=collection, limit=limit)

    def status(self, *, conn: sqlite3.Connection | None = None) -> dict[str, Any]:
        with self._conn(conn) as c:
            return status_mod.status(
                c,
                index_name=self.location.index_name,
                db_path=str(self.location.db_path),
                config_path=str(self.location.config_path),
            )

    def peek(self, *, conn: sqlite3.Connection | None = None) -> dict[str, Any]:
        with self._conn(conn) as c:
            return status_mod.peek(c, index_name=self.location.index_name)


def _with_contexts(request: SearchRequest, rules: tuple[ContextRule, ...]) -> SearchRequest:
    return dataclasses.replace(request, contexts=rules)


def _ensure_collection_row(conn: sqlite3.Connection, collection: Collection) -> None:
    upsert_collection(conn, spec_for(collection))


def _drop_collection_rows(conn: sqlite3.Connection, name: str) -> int:
    """Soft-delete a collection's documents (journaled) and forget the collection.

    Runs inside the caller's transaction; returns how many documents left.
    """
    rows = conn.execute(
        "SELECT * FROM documents WHERE collection = ? AND active = 1", (name,)
    ).fetchall()
    observed = now_iso()
    for row in rows:
        inactivate(conn, row, observed)
    conn.execute("DELETE FROM collections WHERE name = ?", (name,))
    conn.execute("DELETE FROM ingest_errors WHERE collection = ?", (name,))
    return len(rows)


def _reconcile_collections(conn: sqlite3.Connection, config: Config) -> None:
    """Make the database's collections those of the config file.

    ``index.yml`` is the source of truth and people edit it by hand: a
    collection deleted there (or left behind by an interrupted removal) must
    not keep serving search results from the database. Nothing is written
    when they already agree, so opening an index (every read command does)
    never waits for the write lock a running sync holds.
    """
    rows = {row["name"]: row for row in conn.execute("SELECT * FROM collections")}
    changed = [
        c
        for c in config.collections
        if c.name not in rows or not collection_row_matches(rows[c.name], spec_for(c))
    ]
    configured = {c.name for c in config.collections}
    stale = [name for name in rows if name not in configured]
    if not changed and not stale:
        return
    with write_transaction(conn):
        for collection in changed:
            _ensure_collection_row(conn, collection)
        for name in stale:
            _drop_collection_rows(conn, name)
