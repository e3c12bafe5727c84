"""``init``, ``collection`` and ``update``: the commands that shape and fill the index."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from gno_trio.cli import egress, render
from gno_trio.cli.common import (
    EXIT_OK,
    Subparsers,
    command_line,
    emit_json,
    open_engine,
    split_list,
)
from gno_trio.cli.progress import ProgressBar
from gno_trio.cli.render.health import COLLECTIONS
from gno_trio.cli.render.primitives import plural
from gno_trio.cli.render.sync import sync_lines
from gno_trio.config import Collection
from gno_trio.engine import Engine, lease_wait_from_env, normalize_name
from gno_trio.engine.vocabulary import GIT_PULL_FAILED, UPDATE_CMD_FAILED
from gno_trio.errors import GnoError

UPDATE_WAIT_SECONDS: Final = 30.0
"""How long ``update`` waits for another writer before giving up (exit 4, naming it)."""


def cmd_init(args: argparse.Namespace) -> int:
    """Create the index (and add PATH); a failed ``init`` leaves nothing it made behind."""
    from gno_trio.engine import locate

    config = Path(args.config).expanduser() if args.config else None
    location = locate(index_name=args.index, config_path=config)
    db = location.db_path
    files = [
        location.config_path,
        db,
        *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", "-journal")),
        location.dirs.write_lock,
    ]
    folders = [*_missing_ancestry(location.config_path.parent), *_missing_ancestry(db.parent)]
    made = [path for path in files if not path.exists()]
    try:
        return _init(args)
    except BaseException:
        for path in made:
            path.unlink(missing_ok=True)
        for folder in sorted(set(folders), key=lambda f: len(f.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty: nothing but what this run made
        raise


def _missing_ancestry(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet (what creating it would make)."""
    missing = []
    for path in (folder, *folder.parents):
        if path.exists():
            break
        missing.append(path)
    return missing


def _init(args: argparse.Namespace) -> int:
    with open_engine(args, new_config=True) as engine:
        if not engine.location.config_path.exists():
            engine.update_config(lambda current: current)  # an index starts with its config
        added = None
        existing = _already_added(engine, args.path, args.name) if args.path else None
        if existing is not None:
            added = existing
        elif args.path:
            added = engine.collections.add(
                args.path,
                name=args.name,
                pattern=args.pattern,
                include=split_list(args.include),
                exclude=split_list(args.exclude) if args.exclude else None,
                language_hint=args.language,
                update_cmd=args.update,
                embed_model=args.embed_model,
            )
        result = {
            "indexName": engine.location.index_name,
            "configPath": str(engine.location.config_path),
            "dbPath": str(engine.location.db_path),
            "collection": added.name if added else None,
            "alreadyAdded": existing is not None,
        }
        if args.json:
            emit_json(result)
        else:
            print(f"Index {result['indexName']} ready at {result['dbPath']}")
            if existing is not None:
                print(f"Collection {existing.name} -> {existing.path} is already configured")
            elif added:
                print(f"Added collection {added.name} -> {added.path}")
                print(f"Next: `{command_line(args, 'index')}` indexes it.")
    return EXIT_OK


def _already_added(engine: Engine, path: str, name: str | None) -> Collection | None:
    """The collection ``init`` would add, if it is already configured as asked.

    ``init`` is safe to repeat: the same folder under the same name (or no
    name) is success, while a clash with a different name or folder is still
    refused by ``add_collection`` with ``DUPLICATE``.
    """
    root = engine.collections.check_root(path)
    wanted = normalize_name(name) if name is not None else None
    for collection in engine.config.collections:
        if Path(collection.path) == root and wanted in (None, collection.name):
            return collection
    return None


def cmd_collection(args: argparse.Namespace) -> int:
    with open_engine(args, new_config=args.collection_command == "add") as engine:
        action = args.collection_command
        if action == "add":
            added = engine.collections.add(
                args.path,
                name=args.name,
                pattern=args.pattern,
                include=split_list(args.include),
                exclude=split_list(args.exclude) if args.exclude else None,
                language_hint=args.language,
                memory_managed=args.memory,
                update_cmd=args.update,
                embed_model=args.embed_model,
            )
            result: Any = {"name": added.name, "path": str(added.path), "pattern": added.pattern}
            if args.json:
                emit_json(result)
            else:
                print(f"Added collection {added.name} -> {added.path}")
            return EXIT_OK
        if action == "remove":
            result = engine.collections.remove(args.name)
            if args.json:
                emit_json(result)
            else:
                print(
                    f"Removed collection {result['collection']} ({result['documents']} documents)"
                )
            return EXIT_OK
        if action == "rename":
            return _rename(engine, args)
        if action == "clear-embeddings":
            return _clear_embeddings(engine, args)
        render.emit(args, COLLECTIONS, engine.collections.list())
    return EXIT_OK


def _rename(engine: Engine, args: argparse.Namespace) -> int:
    """Rename a collection: its URIs, index rows, contexts and config entry in one step."""
    with engine.lease(wait_seconds=lease_wait_from_env(UPDATE_WAIT_SECONDS)) as held:
        result = engine.collections.rename(args.old, args.new, lease=held)
    if args.json:
        emit_json(result)
        return EXIT_OK
    print(
        f"Renamed collection {result['from']} to {result['to']} "
        f"({plural(result['documents'], 'document')}; "
        f"URIs now start with gno://{result['to']}/)"
    )
    if result["linksNamingOldName"]:
        print(
            f"Links naming {result['from']} in their text no longer resolve: "
            f"{result['linksNamingOldName']} in "
            f"{plural(result['documentsWithSuchLinks'], 'document')} "
            f"(edit them; `{command_line(args, 'links')} DOC` lists a document's links)"
        )
    return EXIT_OK


def _clear_embeddings(engine: Engine, args: argparse.Namespace) -> int:
    """Drop a collection's vectors of stale models (``--all``: every vector), as the MCP tool."""
    result = engine.vectors.clear(
        args.name,
        mode="all" if args.all else "stale",
        lease_wait_seconds=lease_wait_from_env(UPDATE_WAIT_SECONDS),
    )
    if args.json:
        emit_json(result)
        return EXIT_OK
    stale = "" if result["mode"] == "all" else " of models no longer configured"
    print(f"{result['collection']}: removed {plural(result['deletedVectors'], 'vector')}{stale}")
    if result["deletedModels"]:
        print(f"Models: {', '.join(result['deletedModels'])}")
    if result["protectedSharedVectors"]:
        print(
            f"Kept {result['protectedSharedVectors']} shared with an active document "
            "of another collection"
        )
    if result.get("note"):
        print(result["note"])
    return EXIT_OK


def cmd_update(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        if not engine.config.collections:
            raise GnoError(
                "VALIDATION",
                "No collections to update. Add one with: gno-trio collection add <path>",
            )
        pulls = run_git_pulls(engine, args.collections, wanted=args.git_pull)
        commands = run_update_commands(engine, args.collections, verbose=args.verbose)
        bar = ProgressBar("Indexing", force=args.progress)
        try:
            with engine.lease(wait_seconds=lease_wait_from_env(UPDATE_WAIT_SECONDS)) as held:
                changes = engine.reconcile(lease=held)
                reports = engine.sync(args.collections or None, progress=bar.update, lease=held)
        finally:
            bar.close()
        if args.json:
            result = {"collections": [r.as_dict() for r in reports], "configChanges": changes}
            if commands:
                result["updateCommands"] = commands
            if args.git_pull:
                result["gitPull"] = pulls
            emit_json(result)
        else:
            print("\n".join(sync_lines(reports)))
    refuse_failed_steps(commands, pulls)
    return EXIT_OK


def run_update_commands(
    engine: Engine, names: Sequence[str] | None, *, verbose: bool
) -> list[dict[str, Any]]:
    """The ``updateCmd`` of each collection about to sync (all by default); output on stderr."""
    outcomes = []
    for name in names or [c.name for c in engine.config.collections]:
        outcome = engine.collections.run_update_command(name)
        if outcome is None:
            continue
        outcomes.append(outcome)
        status = "ok" if outcome["ok"] else f"failed (exit {outcome['exitCode']})"
        render.note(f"{name}: $ {outcome['command']}  -> {status}")
        if outcome["output"].strip() and (not outcome["ok"] or verbose):
            render.note(outcome["output"].rstrip("\n"))
    return outcomes


GIT_PULL_HELP: Final = (
    "first run git pull --ff-only in each collection that is a git work tree (bounded in time; "
    "its remote must be allowed by the collection's egress policy)"
)


def run_git_pulls(
    engine: Engine, names: Sequence[str] | None, *, wanted: bool
) -> list[dict[str, Any]]:
    """With ``--git-pull``, pull each collection about to sync (all by default); one note each."""
    if not wanted:
        return []
    outcomes = []
    for name in names or [c.name for c in engine.config.collections]:
        outcome = engine.collections.git_pull(name)
        outcomes.append(outcome)
        said = outcome["status"].replace("_", " ")
        if not outcome["ok"]:
            said += f": {outcome['code']}: {outcome['message']}"
        render.note(f"{name}: git pull --ff-only -> {said}")
    return outcomes


def refuse_failed_steps(
    commands: Sequence[dict[str, Any]], pulls: Sequence[dict[str, Any]] = ()
) -> None:
    """Exit 2 once the sync is done if a pull or an update command did not do its job."""
    refuse_failed_commands(commands)
    missed = [f"{p['collection']} ({p['code']})" for p in pulls if not p["ok"]]
    if missed:
        raise GnoError(
            GIT_PULL_FAILED,
            f"git pull was refused or failed in {', '.join(missed)}; the files as they are "
            "were indexed (each reason is printed above)",
        )


def refuse_failed_commands(commands: Sequence[dict[str, Any]]) -> None:
    """``UPDATE_CMD_FAILED`` (exit 2) once the sync is done, if an update command failed."""
    failed = [c["collection"] for c in commands if not c["ok"]]
    if failed:
        raise GnoError(
            UPDATE_CMD_FAILED,
            f"The update command of {', '.join(failed)} failed (the files as they are were "
            "indexed); fix it in index.yml (updateCmd) or run it yourself",
        )


def cmd_cleanup(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        if args.dry_run:
            result = engine.collections.cleanup(dry_run=True)
        else:
            with engine.lease(wait_seconds=lease_wait_from_env(UPDATE_WAIT_SECONDS)) as held:
                result = engine.collections.cleanup(lease=held)
    if args.json:
        emit_json(result)
        return EXIT_OK
    gone = result["removed"]
    parts = [
        plural(gone["documents"], "inactive document"),
        plural(gone["contents"], "unused text"),
        plural(gone["chunks"], "chunk"),
        plural(gone["vectors"], "vector"),
    ]
    verb = "Would remove" if result["dryRun"] else "Removed"
    print(f"{verb} {', '.join(parts)}")
    return EXIT_OK


def _collection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", help="collection name (default: folder name)")
    p.add_argument("--pattern", help="glob of files to index (default **/*)")
    p.add_argument("--include", action="append", help="extension allow-list, comma separated")
    p.add_argument("--exclude", action="append", help="names or globs to skip")
    p.add_argument("--language", help="BCP-47 language hint")
    p.add_argument(
        "--update",
        metavar="CMD",
        help="shell command `gno-trio update` runs in the folder before indexing it "
        "(e.g. 'git pull'); stored as updateCmd",
    )
    p.add_argument(
        "--embed-model",
        metavar="URI",
        help="this collection's embedding model: builtin:use-multilingual-v3 or an "
        "OpenAI-compatible endpoint URL (default: the index's model)",
    )


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("init", parents=[common])
    p.add_argument("path", nargs="?", help="a folder to add as the first collection")
    _collection_options(p)
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("collection", parents=[common])
    p.set_defaults(handler=cmd_collection)
    csub = p.add_subparsers(
        dest="collection_command", required=True, metavar="ACTION", parser_class=type(p)
    )
    pa = csub.add_parser("add", parents=[common], help="add a folder")
    pa.add_argument("path", help="the folder to index")
    _collection_options(pa)
    pa.add_argument("--memory", action="store_true", help="memory-managed collection (facts)")
    pl = csub.add_parser("list", parents=[common], help="list collections")
    render.add_format_flags(pl, render.MD)
    pr = csub.add_parser("remove", parents=[common], help="remove a collection")
    pr.add_argument("name", help="the collection to remove (its files stay on disk)")
    egress.add_policy_parser(csub, common)
    pn = csub.add_parser(
        "rename", parents=[common], help="rename a collection (its documents' URIs follow)"
    )
    pn.add_argument("old", help="the collection's current name")
    pn.add_argument("new", help="the new name: 1-64 of a-z, 0-9, '_' and '-'")
    pc = csub.add_parser(
        "clear-embeddings", parents=[common], help="delete a collection's stale (or all) vectors"
    )
    pc.add_argument("name", help="the collection whose vectors to delete")
    pc.add_argument(
        "--all",
        action="store_true",
        help="delete every vector, not only those of models no longer configured",
    )

    p = sub.add_parser(
        "cleanup",
        parents=[common],
        description="Removed collections and vanished files leave inactive documents behind "
        "(so that they come back without being converted again); cleanup deletes them for "
        "good, with every text, chunk and vector no active document uses.",
    )
    p.add_argument("--dry-run", action="store_true", help="count what would go, delete nothing")
    p.set_defaults(handler=cmd_cleanup)

    p = sub.add_parser("update", parents=[common])
    p.add_argument("collections", nargs="*", help="collections to sync (default: all)")
    p.add_argument("--progress", action="store_true", help="draw the progress bar even off a TTY")
    p.add_argument("--git-pull", action="store_true", help=GIT_PULL_HELP)
    p.set_defaults(handler=cmd_update)


__all__ = ["add_parsers"]
