"""The ``gno-trio`` command line.

Every command prints human-readable text by default and the engine's JSON
objects with ``--json``. Exit codes: 0 success, 1 the input was invalid
(bad name, unknown document, malformed query ...), 2 a runtime failure.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gno_trio import __version__
from gno_trio.config import Collection
from gno_trio.engine import capture as capture_mod
from gno_trio.engine.api import Engine, locate
from gno_trio.engine.collections import normalize_name, validate_root
from gno_trio.engine.search import SearchRequest
from gno_trio.errors import GnoError
from gno_trio.progress import ProgressBar

EXIT_OK = 0
EXIT_VALIDATION = 1
EXIT_RUNTIME = 2

Handler = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Handler] = {}


def command(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        _COMMANDS[name] = fn
        return fn

    return register


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def open_engine(args: argparse.Namespace, *, create: bool = True) -> Engine:
    """Open the selected index; read-only commands pass ``create=False``.

    A command that only reads must not leave an empty database behind when
    pointed at an index that was never initialised (a typo in ``--index``
    would otherwise create one); it fails with ``NOT_INITIALIZED`` (exit 2).
    """
    config = Path(args.config).expanduser() if args.config else None
    if not create:
        location = locate(index_name=args.index, config_path=config)
        if not location.db_path.exists():
            raise GnoError(
                "NOT_INITIALIZED",
                f"Index {location.index_name} is not initialized ({location.db_path} does not "
                "exist); run `gno-trio init` first",
            )
    return Engine.open(index_name=args.index, config_path=config, create=create)


# -- commands --------------------------------------------------------------


@command("init")
def cmd_init(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        added = None
        existing = _already_added(engine, args.path, args.name) if args.path else None
        if existing is not None:
            added = existing
        elif args.path:
            added = engine.add_collection(
                args.path,
                name=args.name,
                pattern=args.pattern,
                include=_split_list(args.include),
                exclude=_split_list(args.exclude) if args.exclude else None,
                language_hint=args.language,
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
                print("Run `gno-trio update` to index it.")
    return EXIT_OK


def _already_added(engine: Engine, path: str, name: str | None) -> Collection | None:
    """The collection ``init`` would add, if it is already configured as asked.

    ``init`` is safe to repeat: the same folder under the same name (or no
    name) is success, while a clash with a different name or folder is still
    refused by ``add_collection`` with ``DUPLICATE``.
    """
    root = validate_root(path)
    wanted = normalize_name(name) if name is not None else None
    for collection in engine.config.collections:
        if Path(collection.path) == root and wanted in (None, collection.name):
            return collection
    return None


def _split_list(values: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


@command("collection")
def cmd_collection(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        action = args.collection_command
        if action == "add":
            added = engine.add_collection(
                args.path,
                name=args.name,
                pattern=args.pattern,
                include=_split_list(args.include),
                exclude=_split_list(args.exclude) if args.exclude else None,
                language_hint=args.language,
                memory_managed=args.memory,
            )
            result: Any = {"name": added.name, "path": str(added.path), "pattern": added.pattern}
            if args.json:
                emit_json(result)
            else:
                print(f"Added collection {added.name} -> {added.path}")
            return EXIT_OK
        if action == "remove":
            result = engine.remove_collection(args.name)
            if args.json:
                emit_json(result)
            else:
                print(
                    f"Removed collection {result['collection']} ({result['documents']} documents)"
                )
            return EXIT_OK
        collections = [
            {
                "name": c.name,
                "path": str(c.path),
                "pattern": c.pattern,
                "include": list(c.include),
                "exclude": list(c.exclude),
                "memoryManaged": c.memory_managed,
            }
            for c in engine.config.collections
        ]
        if args.json:
            emit_json({"collections": collections})
        elif not collections:
            print("No collections. Add one with: gno-trio collection add <path> --name <name>")
        else:
            for c in collections:
                print(f"{c['name']}\t{c['path']}\t{c['pattern']}")
    return EXIT_OK


@command("update")
def cmd_update(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        if not engine.config.collections:
            raise GnoError(
                "VALIDATION",
                "No collections to update. Add one with: gno-trio collection add <path>",
            )
        bar = ProgressBar("Indexing", force=args.progress)
        try:
            reports = engine.sync(args.collections or None, progress=bar.update)
        finally:
            bar.close()
        if args.json:
            emit_json({"collections": [r.as_dict() for r in reports]})
        else:
            for r in reports:
                print(
                    f"{r.collection}: {r.scanned} files, {r.added} added, {r.updated} updated, "
                    f"{r.renamed} renamed, {r.removed} removed, {r.reactivated} restored, "
                    f"{r.unchanged} unchanged, {len(r.errors)} errors ({r.duration_ms:.0f} ms)"
                )
                for error in r.errors[:20]:
                    print(f"  ! {error['relPath']}: {error['code']}: {error['message']}")
                if len(r.errors) > 20:
                    print(f"  ! ... {len(r.errors) - 20} more (see gno-trio status)")
                for warning in r.warnings[:20]:
                    print(f"  ? {warning['relPath']}: {warning['code']}: {warning['message']}")
    return EXIT_OK


@command("search")
def cmd_search(args: argparse.Namespace) -> int:
    limit = args.limit if args.limit is not None else (20 if args.json else 5)
    request = SearchRequest(
        query=args.query,
        limit=limit,
        collection=args.collection,
        min_score=args.min_score,
        lang=args.lang,
        intent=args.intent,
        exclude=_split_list(args.exclude),
        since=args.since,
        until=args.until,
        categories=_split_list(args.category),
        author=args.author,
        tags_all=_split_list(args.tags_all),
        tags_any=_split_list(args.tags_any),
    )
    with open_engine(args, create=False) as engine:
        result = engine.search(request)
    if args.json:
        emit_json(result)
        return EXIT_OK
    hits = result["results"]
    if not hits:
        print(f'No results for "{args.query}"')
        return EXIT_OK
    print(f'Found {len(hits)} results for "{args.query}"')
    for hit in hits:
        line = f":{hit['line']}" if "line" in hit else ""
        print(f"\n{hit['docid']}  {hit['uri']}{line}  ({hit['score']:.3f})")
        if hit.get("title"):
            print(f"  {hit['title']}")
        snippet = " ".join(str(hit.get("snippet", "")).split())
        if snippet:
            print(f"  {snippet.replace('<mark>', '').replace('</mark>', '')[:240]}")
    return EXIT_OK


@command("get")
def cmd_get(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.get(
            args.ref,
            from_line=args.from_line,
            line_count=args.lines,
            line_numbers=args.line_numbers,
        )
    if args.json:
        emit_json(result)
    else:
        # The text as stored: `gno-trio get ref > file` reproduces a whole
        # document byte for byte, so no newline is added after a final one.
        content = result["content"]
        sys.stdout.write(content if not content or content.endswith("\n") else content + "\n")
    return EXIT_OK


@command("multi-get")
def cmd_multi_get(args: argparse.Namespace) -> int:
    refs = [r for r in args.refs if r]
    pattern = None
    if len(refs) == 1 and any(ch in refs[0] for ch in "*?") and not refs[0].startswith("#"):
        pattern, refs = refs[0], []
    with open_engine(args, create=False) as engine:
        result = engine.multi_get(
            refs=refs or None,
            pattern=pattern,
            max_bytes=args.max_bytes,
            line_numbers=args.line_numbers,
        )
    if args.json:
        emit_json(result)
        return EXIT_OK
    for doc in result["documents"]:
        flag = " (truncated)" if doc.get("truncated") else ""
        print(f"==> {doc['uri']} {doc['docid']}{flag}")
        print(doc["content"])
    for skip in result["skipped"]:
        print(f"skipped {skip['ref']}: {skip['reason']}", file=sys.stderr)
    return EXIT_OK


@command("ls")
def cmd_ls(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.ls(collection=args.collection, prefix=args.prefix, limit=args.limit)
    if args.json:
        emit_json(result)
    else:
        for doc in result["documents"]:
            print(f"{doc['docid']}  {doc['uri']}")
    return EXIT_OK


@command("status")
def cmd_status(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.status()
    if args.json:
        emit_json(result)
        return EXIT_OK
    print(f"Index: {result['indexName']} ({result['dbPath']})")
    print(f"Documents: {result['totalDocuments']}  Chunks: {result['totalChunks']}")
    for c in result["collections"]:
        synced = c["lastSyncedAt"] or "never"
        print(
            f"  {c['name']}: {c['documentCount']} docs, {c['chunkCount']} chunks, "
            f"{c['errorCount']} errors, last sync {synced}  ({c['path']})"
        )
        for error in c["errors"][:10]:
            print(f"    ! {error['relPath']}: {error['code']}: {error['message']}")
        for warning in c["warnings"][:10]:
            print(f"    ? {warning['relPath']}: {warning['code']}: {warning['message']}")
    return EXIT_OK


@command("changes")
def cmd_changes(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.changes(since=args.since, collection=args.collection, limit=args.limit)
    if args.json:
        emit_json(result)
        return EXIT_OK
    for change in result["changes"]:
        snap = change["current"] or change["previous"] or {}
        print(f"{change['observedAt']}  {change['kind']:<10} {snap.get('uri', '')}")
    page = result["page"]
    print(f"next: {page['nextCursor'] or page['latestCursor']}")
    return EXIT_OK


@command("mcp")
def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdio: stdout carries JSON-RPC only, logs go to stderr."""
    import os

    import trio

    from gno_trio.runtime import Runtime
    from gno_trio.server.app import build_app
    from gno_trio.server.registry import parse_profile
    from gno_trio.server.unavailable import STDIO_SWITCHES
    from gno_trio.transports.stdio import serve_stdio

    profile = parse_profile(args.tool_profile)
    write_enabled = args.enable_write or os.environ.get("GNO_MCP_ENABLE_WRITE") == "1"
    engine = open_engine(args)
    runtime = Runtime(engine=engine, write_enabled=write_enabled, tool_profile=profile)
    try:
        app = build_app(runtime, STDIO_SWITCHES)
        return trio.run(serve_stdio, app)
    finally:
        runtime.jobs.close()  # background jobs stop before their engine closes
        engine.close()


@command("serve")
def cmd_serve(args: argparse.Namespace) -> int:
    """Resident Streamable HTTP MCP gateway on loopback; stops gracefully on SIGINT/SIGTERM."""
    from gno_trio.transports.http.command import run_gateway_command

    return run_gateway_command(args, mode="serve", open_engine=open_engine)


@command("daemon")
def cmd_daemon(args: argparse.Namespace) -> int:
    """Headless resident gateway; may listen off loopback behind token + Host/Origin lists."""
    from gno_trio.transports.http.command import run_gateway_command

    return run_gateway_command(args, mode="daemon", open_engine=open_engine)


def _memory_identity(args: argparse.Namespace) -> Any:
    import getpass
    import os

    from gno_trio.engine.memory.identity import Identity

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no USER/LOGNAME (some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    caller = args.caller or os.environ.get("GNO_MEMORY_CALLER") or f"cli:{user}"
    session = args.session or os.environ.get("GNO_MEMORY_SESSION") or f"ppid:{os.getppid()}"
    return Identity(caller=caller, session=session)


def _memory_collection(engine: Engine, chosen: str | None) -> str | None:
    """The collection named, or the only memory-managed one when none is named."""
    if chosen:
        return chosen
    managed = [c.name for c in engine.config.collections if c.memory_managed]
    return managed[0] if len(managed) == 1 else None


@command("recall")
def cmd_recall(args: argparse.Namespace) -> int:
    from gno_trio.engine.memory.service import MemoryService

    with open_engine(args) as engine:
        result = MemoryService(engine).recall(
            query=args.query,
            collection=_memory_collection(engine, args.collection),
            scopes=args.scope,
            identity=_memory_identity(args),
            max_facts=args.max_facts,
            max_tokens=args.max_tokens,
        )
    if args.json:
        emit_json(result)
        return EXIT_OK
    if not result["facts"]:
        print(result.get("hint", "No facts in scope"))
    for fact in result["facts"]:
        print(f"- {fact['text']}\n  {fact['uri']}  hash {fact['contentHash']}")
    return EXIT_OK


@command("remember")
def cmd_remember(args: argparse.Namespace) -> int:
    from gno_trio.engine.memory.service import MemoryService

    decision = _remember_decision(args)
    receipt = _read_receipt(args.receipt) if args.receipt else None
    text = args.text if args.text != "-" else sys.stdin.read()
    with open_engine(args) as engine:
        result = MemoryService(engine).remember(
            text=text,
            collection=_memory_collection(engine, args.collection),
            scopes=args.scope,
            identity=_memory_identity(args),
            decision=decision,
            predecessor_uri=args.supersede or args.predecessor,
            predecessor_hash=args.predecessor_hash,
            receipt=receipt,
            derived_from=args.derived_from or [],
            source=args.source,
        )
    if args.json:
        emit_json(result)
        return EXIT_OK
    outcome = result["outcome"]
    if outcome == "candidates":
        if not result["candidates"]:
            print("No similar facts in scope. Store it with --add.")
        for c in result["candidates"]:
            print(f"[{c['match']} {c['similarity']:.2f}] {c['text']}")
            print(f"  {c['uri']}  hash {c['contentHash']}")
    else:
        print(f"{outcome}: {result['record']['uri']}")
    return EXIT_OK


def _read_capture_bytes(data: bytes, origin: str) -> str:
    limit = capture_mod.CAPTURE_MAX_TEXT_BYTES
    if len(data) > limit:
        raise GnoError("INVALID_INPUT", f"{origin} holds more than {limit} bytes (the 1 MiB limit)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GnoError("INVALID_INPUT", f"{origin} is not UTF-8 text") from exc


def _capture_content(args: argparse.Namespace) -> str | None:
    """The note text from exactly one of: words on the command line, --stdin, --file."""
    given = [bool(args.content), args.stdin, args.file is not None]
    if sum(given) > 1:
        raise GnoError("INVALID_INPUT", "give the text as arguments, --stdin or --file: one only")
    if args.stdin:
        limit = capture_mod.CAPTURE_MAX_TEXT_BYTES
        return _read_capture_bytes(sys.stdin.buffer.read(limit + 1), "standard input")
    if args.file is not None:
        try:
            with open(Path(args.file).expanduser(), "rb") as handle:
                data = handle.read(capture_mod.CAPTURE_MAX_TEXT_BYTES + 1)
        except OSError as exc:
            raise GnoError(
                "PATH_NOT_FOUND", f"Cannot read {args.file}: {exc.strerror or exc}"
            ) from exc
        return _read_capture_bytes(data, args.file)
    return " ".join(args.content) if args.content else None


def _capture_collection(engine: Engine, chosen: str | None) -> str:
    """``--collection``, or the only configured collection when there is just one."""
    if chosen is not None:
        return chosen
    names = [c.name for c in engine.config.collections]
    if len(names) == 1:
        return names[0]
    raise GnoError(
        "INVALID_INPUT",
        "choose a collection with --collection"
        + (f" (one of: {', '.join(names)})" if names else " (none configured yet)"),
    )


_CAPTURE_VERBS = {
    "created": "Created",
    "created_with_suffix": "Created (with suffix)",
    "opened_existing": "Opened existing",
    "overwritten": "Overwrote",
}


@command("capture")
def cmd_capture(args: argparse.Namespace) -> int:
    """Create a note and index it; a failed index sync is reported, not an error exit."""
    content = _capture_content(args)
    source = {
        "kind": args.source_kind,
        "url": args.source_url,
        "title": args.source_title,
        "author": args.source_author,
        "observedAt": args.source_date,
        "externalId": args.source_id,
    }
    with open_engine(args, create=False) as engine:
        request = capture_mod.CaptureRequest(
            collection=_capture_collection(engine, args.collection),
            content=content,
            title=args.title,
            path=args.path,
            folder_path=args.folder,
            collision_policy=args.collision_policy,
            preset_id=args.preset,
            overwrite=args.overwrite,
            tags=_split_list(args.tags),
            source={k: v for k, v in source.items() if v is not None},
        )
        receipt = capture_mod.capture(engine, request)
    if args.json:
        emit_json(receipt)
        return EXIT_OK
    verb = _CAPTURE_VERBS[receipt["collisionPolicyResult"]]
    print(f"{verb} {receipt['uri']} {receipt['docid']}")
    print(f"  {receipt['absPath']}")
    if receipt["sync"]["status"] != "completed":
        print(f"warning: not indexed: {receipt['sync'].get('error', '')}", file=sys.stderr)
    return EXIT_OK


def _remember_decision(args: argparse.Namespace) -> str | None:
    """``--add`` / ``--supersede URI`` / ``--decision``; contradicting flags are refused."""
    chosen = {args.decision} if args.decision is not None else set()
    if args.add:
        chosen.add("add")
    if args.supersede:
        chosen.add("supersede")
    if len(chosen) > 1:
        raise GnoError(
            "MEMORY_DECISION_INVALID",
            f"Conflicting decisions: {', '.join(sorted(chosen))} (pick one)",
        )
    return chosen.pop() if chosen else None


def _read_receipt(path: str) -> Any:
    """A receipt file: the receipt object itself, or a whole ``recall --json`` answer."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GnoError("INVALID_INPUT", f"Cannot read receipt {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("receipt"), dict) and "facts" in data:
        return data["receipt"]
    return data


# -- parser ----------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error; here bad input is exit 1."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_VALIDATION)


def _common_options(*, with_defaults: bool) -> _Parser:
    """The options every level accepts (``--index``, ``--config``, ``--json``, ``--verbose``).

    Only the top level carries defaults. argparse copies everything a
    subparser's namespace holds over what an outer level already parsed, so a
    sub-level default would silently undo ``collection --json list``; with
    ``SUPPRESS`` a sub-level sets an option only when it is actually typed
    there. Each level gets its own action objects because ``set_defaults`` and
    parents share (and mutate) them.
    """

    def default(value: Any) -> Any:
        return value if with_defaults else argparse.SUPPRESS

    common = _Parser(add_help=False)
    common.add_argument("--index", default=default("default"), help="index name (default: default)")
    common.add_argument("--config", default=default(None), help="path to index.yml")
    common.add_argument("--json", action="store_true", default=default(False), help="print JSON")
    common.add_argument(
        "--verbose", action="store_true", default=default(False), help="log to stderr"
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common_options(with_defaults=False)
    parser = _Parser(
        prog="gno-trio",
        description="Index notes, code and documents into SQLite and search them; "
        "serve them to AI agents over MCP.",
        parents=[_common_options(with_defaults=True)],
    )
    parser.add_argument("--version", action="version", version=f"gno-trio {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    def add_collection_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--name", help="collection name (default: folder name)")
        p.add_argument("--pattern", help="glob of files to index (default **/*)")
        p.add_argument("--include", action="append", help="extension allow-list, comma separated")
        p.add_argument("--exclude", action="append", help="names or globs to skip")
        p.add_argument("--language", help="BCP-47 language hint")

    p = sub.add_parser("init", parents=[common], help="create the index (and add a folder)")
    p.add_argument("path", nargs="?")
    add_collection_options(p)

    p = sub.add_parser("collection", parents=[common], help="manage collections")
    csub = p.add_subparsers(
        dest="collection_command", required=True, metavar="ACTION", parser_class=_Parser
    )
    pa = csub.add_parser("add", parents=[common], help="add a folder")
    pa.add_argument("path")
    add_collection_options(pa)
    pa.add_argument("--memory", action="store_true", help="memory-managed collection (facts)")
    csub.add_parser("list", parents=[common], help="list collections")
    pr = csub.add_parser("remove", parents=[common], help="remove a collection")
    pr.add_argument("name")

    p = sub.add_parser("update", parents=[common], help="sync collections from disk")
    p.add_argument("collections", nargs="*")
    p.add_argument("--progress", action="store_true", help="draw the progress bar even off a TTY")

    p = sub.add_parser("search", parents=[common], help="BM25 keyword search")
    p.add_argument("query")
    p.add_argument("-n", "--limit", type=int)
    p.add_argument("-c", "--collection")
    p.add_argument("--min-score", type=float)
    p.add_argument("--lang")
    p.add_argument("--intent")
    p.add_argument("--exclude", action="append")
    p.add_argument("--since")
    p.add_argument("--until")
    p.add_argument("--category", action="append")
    p.add_argument("--author")
    p.add_argument("--tags-all", action="append")
    p.add_argument("--tags-any", action="append")

    p = sub.add_parser("get", parents=[common], help="read a document")
    p.add_argument("ref")
    p.add_argument("--from", dest="from_line", type=int)
    p.add_argument("-l", "--lines", type=int)
    p.add_argument("--line-numbers", action=argparse.BooleanOptionalAction, default=False)

    p = sub.add_parser("multi-get", parents=[common], help="read several documents")
    p.add_argument("refs", nargs="+")
    p.add_argument("--max-bytes", type=int, default=10_240)
    p.add_argument("--line-numbers", action=argparse.BooleanOptionalAction, default=False)

    p = sub.add_parser("ls", parents=[common], help="list indexed documents")
    p.add_argument("collection", nargs="?")
    p.add_argument("--prefix")
    p.add_argument("--limit", type=int, default=1000)

    sub.add_parser("status", parents=[common], help="index health")

    memory_identity = _Parser(add_help=False)
    memory_identity.add_argument("-c", "--collection", help="memory-managed collection")
    memory_identity.add_argument("--scope", action="append", default=[], help="scope (repeat)")
    memory_identity.add_argument("--caller", help="caller identity (default cli:<user>)")
    memory_identity.add_argument("--session", help="session identity (default ppid:<pid>)")

    p = sub.add_parser("recall", parents=[common, memory_identity], help="recall facts")
    p.add_argument("query")
    p.add_argument("--max-facts", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=512)

    p = sub.add_parser("remember", parents=[common, memory_identity], help="store one fact")
    p.add_argument("text", help="the fact, or - to read it from stdin")
    p.add_argument("--add", action="store_true", help="store it (decision add)")
    p.add_argument("--supersede", metavar="URI", help="replace the fact at URI")
    p.add_argument("--predecessor-hash", help="contentHash of the fact being replaced")
    p.add_argument("--decision", help="add or supersede")
    p.add_argument("--predecessor", metavar="URI", help="same as --supersede URI")
    p.add_argument("--receipt", metavar="FILE", help="recall receipt JSON (fences replays)")
    p.add_argument("--derived-from", action="append", help="declared origin (repeat)")
    p.add_argument("--source", help="free-text evidence for the fact")

    p = sub.add_parser("mcp", parents=[common], help="serve MCP over stdio (for IDEs)")
    p.add_argument("--tool-profile", default="full", help="core or full (default full)")
    p.add_argument("--enable-write", action="store_true", help="register write tools")

    from gno_trio.transports.http.flags import add_gateway_arguments

    p = sub.add_parser("serve", parents=[common], help="resident HTTP MCP gateway (loopback)")
    add_gateway_arguments(p, daemon=False)
    p = sub.add_parser("daemon", parents=[common], help="headless resident HTTP MCP gateway")
    add_gateway_arguments(p, daemon=True)

    p = sub.add_parser("changes", parents=[common], help="metadata-only change feed")
    p.add_argument("--since")
    p.add_argument("-c", "--collection")
    p.add_argument("--limit", type=int, default=100)

    p = sub.add_parser("capture", parents=[common], help="create a note in a collection")
    p.add_argument("content", nargs="*", help="note text (or use --stdin or --file)")
    p.add_argument("--stdin", action="store_true", help="read the note text from standard input")
    p.add_argument("--file", help="read the note text from this UTF-8 file")
    p.add_argument("-c", "--collection", help="target collection (default: the only one)")
    p.add_argument("--title", help="note title; also names the file")
    p.add_argument("--path", help="file path inside the collection (.md added if no extension)")
    p.add_argument("--folder", help="folder inside the collection for a generated name")
    p.add_argument("--preset", choices=sorted(capture_mod.PRESETS), help="note scaffold")
    p.add_argument(
        "--tag",
        "--tags",
        dest="tags",
        action="append",
        metavar="TAG",
        help="tag (repeatable, comma separated)",
    )
    p.add_argument(
        "--collision-policy",
        choices=capture_mod.COLLISION_POLICIES,
        help="when the name is taken (default: open_existing for generated inbox names, "
        "else error)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at --path")
    p.add_argument("--source-kind", choices=capture_mod.SOURCE_KINDS, help="provenance kind")
    p.add_argument("--source-url", help="where the text came from")
    p.add_argument("--source-title", help="title of the source")
    p.add_argument("--source-author", help="author of the source")
    p.add_argument("--source-date", help="when the source was seen (ISO date or date-time)")
    p.add_argument("--source-id", help="the source's own identifier")

    return parser


EXIT_BUSY = 4
_BUSY_CODES = frozenset({"LOCKED", "MEMORY_WRITE_LEASE_BUSY", "MEMORY_SUPERSEDE_CONFLICT"})
# Memory codes that report a failure of the index or disk, not of the input.
_RUNTIME_MEMORY_CODES = frozenset(
    {"MEMORY_SYNC_FAILED", "MEMORY_QUERY_FAILED", "MEMORY_SUPERSEDE_PROJECTION_FAILED"}
)


def report_error(error: GnoError, *, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps({"error": error.code, "message": error.message}) + "\n")
    print(f"Error: {error.code}: {error.message}", file=sys.stderr)
    if error.code in _BUSY_CODES:
        return EXIT_BUSY
    if error.code in _RUNTIME_MEMORY_CODES:
        return EXIT_RUNTIME
    return EXIT_VALIDATION if error.is_validation else EXIT_RUNTIME


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler = _COMMANDS[args.command]
    as_json = bool(getattr(args, "json", False))
    try:
        return handler(args)
    except GnoError as error:
        return report_error(error, as_json=as_json)
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except (sqlite3.Error, OSError) as exc:
        # Not a bad input: the disk, the database or the OS failed (exit 2).
        return report_error(GnoError("RUNTIME", str(exc) or type(exc).__name__), as_json=as_json)
    except Exception as exc:
        if args.verbose:
            logging.getLogger("gno_trio").exception("unexpected failure")
        message = f"internal error: {type(exc).__name__}: {exc}"
        return report_error(GnoError("RUNTIME", message), as_json=as_json)
