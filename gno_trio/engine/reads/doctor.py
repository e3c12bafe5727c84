"""``doctor``: what is wrong with an index and how to fix it, checked without changing it.

Unlike every other read, the doctor does not open the index through
:class:`~gno_trio.engine.Engine` (which applies migrations and reconciles
collections, both writes): it reads the configuration and opens the
database read-only, so it can diagnose a broken config, a database that is
newer than this build, or an index held by a writer. Each check has a
``name``, a ``status`` (``ok``, ``warn`` or ``error``), a ``message`` and,
when something is off, ``details`` saying what to do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from gno_trio.config import Config, load_config
from gno_trio.engine.ingest.walker import listing
from gno_trio.engine.kernel import IndexLocation
from gno_trio.engine.reads import status as status_mod
from gno_trio.engine.reads.activation import activation as activation_report
from gno_trio.engine.reads.semantic_facts import SYNC
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import (
    Connection,
    StoreUnreadable,
    connect,
    integrity_verdict,
    latest_version,
    schema_version,
)
from gno_trio.engine.store.lease import is_held
from gno_trio.engine.team.health import store_findings
from gno_trio.engine.team.outbox import file_stamp
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError

Check = dict[str, Any]

_NO_ACTIVATION: dict[str, Any] = {
    "schemaVersion": "1.0",
    "usable": False,
    "healthy": False,
    "collections": [],
    "connectors": [],
    "connectorProjection": {"total": 0, "projected": 0, "truncated": False},
}


def check(name: str, status: str, message: str, *fixes: str) -> Check:
    found: Check = {"name": name, "status": status, "message": message}
    if fixes:
        found["details"] = list(fixes)
    return found


def _config(location: IndexLocation, init: str) -> tuple[Check, Config | None]:
    path = location.config_path
    try:
        config = load_config(path)
    except GnoError as error:
        return check("config", "error", error.message, f"Fix or move away {path}"), None
    if not path.exists():
        return check("config", "warn", f"No config file yet ({path})", f"Run: {init}"), config
    return check("config", "ok", f"Config loaded: {path}"), config


def _collections(config: Config) -> Check:
    if not config.collections:
        return check(
            "collections",
            "warn",
            "No collection is configured",
            "Run: gno-trio collection add <folder> --name <name>",
        )
    missing = [c for c in config.collections if not Path(c.path).is_dir()]
    if missing:
        names = ", ".join(f"{c.name} ({c.path})" for c in missing)
        return check(
            "collections",
            "error",
            f"Collection folders not found: {names}",
            "Mount or restore the folder, or run: gno-trio collection remove <name>",
        )
    count = len(config.collections)
    said = (
        "1 collection, its folder present"
        if count == 1
        else f"{count} collections, folders present"
    )
    return check("collections", "ok", said)


def _leftovers(config: Config) -> Check:
    """Temporary files of atomic writes a killed process left in the collections.

    A rename or move applied by a process killed half way can leave whole
    copies of notes behind; the next sync removes them (it holds the write
    lease, so no write is in progress), and until then they are named here.
    """
    found: list[str] = []
    for collection in config.collections:
        root = Path(collection.path)
        if not root.is_dir():
            continue
        left: list[str] = []
        for _ in listing(root, exclude=collection.exclude, on_leftover=left.append):
            pass
        found += (f"{collection.name}/{rel}" for rel in left)
    if not found:
        return check("temporary-files", "ok", "No temporary files left by interrupted writes")
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return check(
        "temporary-files",
        "warn",
        f"{len(found)} temporary files left by interrupted writes: {shown}",
        "Run: gno-trio update (a sync removes them)",
    )


def _lock(location: IndexLocation) -> Check:
    lock = location.dirs.write_lock
    if is_held(lock):
        return check(
            "lock",
            "warn",
            f"Another process holds the write lease ({lock}): writes wait for it",
            "Let the running sync or write finish; a stopped process releases it by itself",
        )
    return check("lock", "ok", "The write lease is free")


def _store(store: TeamStore, location: IndexLocation) -> list[Check]:
    """Team mode: the PostgreSQL store this index coordinates through (:mod:`.team.health`),
    and how far this host's copy is behind it."""
    found = store_findings(store, location.index_name, file_stamp(location.db_path))
    return [check(f.name, f.status, f.message, *f.fixes) for f in found]


def _database(
    location: IndexLocation, config: Config | None, init: str
) -> tuple[list[Check], dict[str, Any]]:
    db_path = location.db_path
    if not db_path.exists():
        return [check("database", "error", f"No index database at {db_path}", f"Run: {init}")], (
            dict(_NO_ACTIVATION)
        )
    try:
        conn = connect(db_path, readonly=True)
    except GnoError as error:
        return [check("database", "error", error.message, "Check the file's permissions")], dict(
            _NO_ACTIVATION
        )
    try:
        return _inspect(conn, location, config, init)
    except StoreUnreadable as exc:
        fix = f"Move {db_path} away and run: gno-trio update (the index is rebuilt from the files)"
        return [check("database", "error", f"The index database is damaged: {exc}", fix)], dict(
            _NO_ACTIVATION
        )
    finally:
        conn.close()


def _inspect(
    conn: Connection, location: IndexLocation, config: Config | None, init: str
) -> tuple[list[Check], dict[str, Any]]:
    version, latest = schema_version(conn), latest_version()
    if version > latest:
        return [
            check(
                "database",
                "error",
                f"Index schema {version} is newer than this gno-trio supports ({latest})",
                "Upgrade gno-trio, or point --index at another index",
            )
        ], dict(_NO_ACTIVATION)
    if version < latest:
        return [
            check(
                "database",
                "warn",
                f"Index schema {version} predates this gno-trio ({latest})",
                "Run: gno-trio update (the index is upgraded in place when opened)",
            )
        ], dict(_NO_ACTIVATION)
    verdict = integrity_verdict(conn)
    if verdict != "ok":
        fix = "Move the database away and run: gno-trio update (it is rebuilt from the files)"
        return [check("database", "error", f"Integrity check failed: {verdict}", fix)], dict(
            _NO_ACTIVATION
        )
    checks = [check("database", "ok", f"Database found: {location.db_path} (schema {version})")]
    names = [c.name for c in config.collections] if config is not None else []
    stored = SQLITE_STORES.counts(conn)
    counts = {name: stored.active_documents(name) for name in names}
    report = activation_report(conn, counts)
    unready = [c for c in report["collections"] if not c["ready"]]
    if unready:
        checks.append(
            check(
                "index",
                "warn",
                "Not searchable yet: " + ", ".join(c["collection"] for c in unready),
                *(c["remediation"]["message"] for c in unready if c["remediation"]),
                f"Run: {SYNC}",
            )
        )
    elif counts:
        total = sum(counts.values())
        checks.append(
            check("index", "ok", f"{total} document{'' if total == 1 else 's'} searchable")
        )
    from gno_trio.engine.vectors.service import backlog_by_collection

    embeddings = backlog_by_collection(conn, config) if config is not None else {}
    status = status_mod.status(
        conn,
        index_name=location.index_name,
        db_path=str(location.db_path),
        config_path=None,
        cache_dir=location.dirs.cache,
        embeddings=embeddings,
    )
    if not status["healthy"]:  # the index's own verdict, so doctor and status agree
        errors = sum(c["errorCount"] for c in status["collections"])
        checks.append(
            check(
                INGEST_ERRORS,
                "warn",
                f"{errors} files could not be indexed",
                "Run: gno-trio status (it lists each file and its error)",
            )
        )
    if config is not None:
        embed = init.removesuffix("init") + "embed"
        checks += _embeddings(config, embeddings, location.config_path, embed)
    return checks, report


def _embeddings(
    config: Config, counts: Mapping[str, tuple[int, int]], config_path: Path, embed: str
) -> list[Check]:
    """The embedding model of each collection, and the chunks still waiting for a vector.

    Nothing is loaded or sent: a bundled model is checked by its package, an
    endpoint by its URL (calling it would send text the doctor has no business
    sending).
    """
    from gno_trio.engine.vectors.bundled import BUNDLED_URI
    from gno_trio.engine.vectors.models import backend_for, embed_model_uri, inference_timeout_s

    names = [c.name for c in config.collections]
    by_uri: dict[str, list[str]] = {}
    wanted: list[str | None] = [*names] or [None]
    for name in wanted:
        by_uri.setdefault(embed_model_uri(config, name), []).append(name or "")
    checks: list[Check] = []
    runnable: list[str] = []
    for uri, users in by_uri.items():
        used_by = f" ({', '.join(users)})" if len(by_uri) > 1 else ""
        try:
            backend_for(uri, timeout_s=inference_timeout_s(config))
        except GnoError as error:
            fix = (
                "Reinstall gno-trio: the bundled model comes with it"
                if uri == BUNDLED_URI
                else f"Set the embed model in {config_path} to {BUNDLED_URI} "
                "or an OpenAI-compatible endpoint URL (search stays lexical until then)"
            )
            checks.append(check("embed-model", "error", error.message + used_by, fix))
            continue
        runnable += users
        kind = "bundled" if uri == BUNDLED_URI else "endpoint, not called by doctor"
        checks.append(check("embed-model", "ok", f"Embedding model {uri} ({kind}){used_by}"))
    waiting = {name: counts.get(name, (0, 0))[1] for name in runnable if name}
    backlog = sum(waiting.values())
    if backlog:
        where = ", ".join(f"{name} {count}" for name, count in waiting.items() if count)
        checks.append(
            check(
                "embedding-backlog",
                "warn",
                f"{backlog} {'chunk waits' if backlog == 1 else 'chunks wait'} for embeddings "
                f"({where}); vector search and hybrid query miss "
                f"{'it' if backlog == 1 else 'them'}",
                f"Run: {embed} (serve and daemon also embed in the background)",
            )
        )
    elif runnable and any(runnable):
        embedded = sum(counts.get(name, (0, 0))[0] for name in runnable if name)
        checks.append(
            check("embedding-backlog", "ok", f"Every chunk is embedded ({embedded} vectors)")
        )
    return checks


INGEST_ERRORS: Final = "ingest-errors"
"""The check raised when ``status`` calls the index unhealthy: files that could not be indexed."""


def healthy(checks: Sequence[Check]) -> bool:
    """Doctor's verdict: no check failed, and the index is healthy by ``status``'s rule.

    An unhealthy index is a warning, not a failure: doctor still exits 0 for it
    (a damaged PDF in a folder is no broken set-up), but says the same as
    ``status --json``'s ``healthy``.
    """
    return not any(c["status"] == "error" or c["name"] == INGEST_ERRORS for c in checks)


def index_checks(
    location: IndexLocation, *, init: str = "gno-trio init", store: TeamStore | None = None
) -> dict[str, Any]:
    """The index's checks (config, collections, database, index, lock, embeddings).

    With a team ``store`` the lease check is the store's (reachability,
    tables, the lease holder, the server's version, the role's privileges,
    the connection budget) instead of the data directory's lock file.

    ``init`` is the command that creates this index, as the caller spells it.
    Returns ``{"checks": [...], "activation": {...}}``; the caller adds its own
    checks and decides ``healthy``.
    """
    config_check, config = _config(location, init)
    checks = [config_check]
    if config is not None:
        checks.append(_collections(config))
        checks.append(_leftovers(config))
    database, activation = _database(location, config, init)
    checks += database
    checks += [_lock(location)] if store is None else _store(store, location)
    return {"checks": checks, "activation": activation}


__all__ = ["check", "healthy", "index_checks"]
