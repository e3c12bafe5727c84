"""The ``gno-trio`` command line.

Every command prints human-readable text by default and the engine's JSON
objects with ``--json``. Exit codes: 0 success, 1 the input was invalid
(bad name, unknown document, malformed query ...), 2 a runtime failure.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gno_trio import __version__
from gno_trio.engine.api import Engine
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


def open_engine(args: argparse.Namespace) -> Engine:
    config = Path(args.config).expanduser() if args.config else None
    return Engine.open(index_name=args.index, config_path=config)


# -- commands --------------------------------------------------------------


@command("init")
def cmd_init(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        added = None
        if args.path:
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
        }
        if args.json:
            emit_json(result)
        else:
            print(f"Index {result['indexName']} ready at {result['dbPath']}")
            if added:
                print(f"Added collection {added.name} -> {added.path}")
                print("Run `gno-trio update` to index it.")
    return EXIT_OK


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
    with open_engine(args) as engine:
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
    with open_engine(args) as engine:
        result = engine.get(
            args.ref,
            from_line=args.from_line,
            line_count=args.lines,
            line_numbers=args.line_numbers,
        )
    if args.json:
        emit_json(result)
    else:
        sys.stdout.write(result["content"] + "\n")
    return EXIT_OK


@command("multi-get")
def cmd_multi_get(args: argparse.Namespace) -> int:
    refs = [r for r in args.refs if r]
    pattern = None
    if len(refs) == 1 and any(ch in refs[0] for ch in "*?") and not refs[0].startswith("#"):
        pattern, refs = refs[0], []
    with open_engine(args) as engine:
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
    with open_engine(args) as engine:
        result = engine.ls(collection=args.collection, prefix=args.prefix, limit=args.limit)
    if args.json:
        emit_json(result)
    else:
        for doc in result["documents"]:
            print(f"{doc['docid']}  {doc['uri']}")
    return EXIT_OK


@command("status")
def cmd_status(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
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
    return EXIT_OK


@command("changes")
def cmd_changes(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
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
    from gno_trio.transports.stdio import serve_stdio

    profile = parse_profile(args.tool_profile)
    write_enabled = args.enable_write or os.environ.get("GNO_MCP_ENABLE_WRITE") == "1"
    engine = open_engine(args)
    try:
        runtime = Runtime(engine=engine, write_enabled=write_enabled, tool_profile=profile)
        app = build_app(runtime)
        return trio.run(serve_stdio, app)
    finally:
        engine.close()


# -- parser ----------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error; here bad input is exit 1."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_VALIDATION)


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--index", default="default", help="index name (default: default)")
    common.add_argument("--config", help="path to index.yml")
    common.add_argument("--json", action="store_true", help="print JSON")
    common.add_argument("--verbose", action="store_true", help="log to stderr")

    parser = _Parser(
        prog="gno-trio",
        description="Index notes, code and documents into SQLite and search them; "
        "serve them to AI agents over MCP.",
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

    p = sub.add_parser("mcp", parents=[common], help="serve MCP over stdio (for IDEs)")
    p.add_argument("--tool-profile", default="full", help="core or full (default full)")
    p.add_argument("--enable-write", action="store_true", help="register write tools")

    p = sub.add_parser("changes", parents=[common], help="metadata-only change feed")
    p.add_argument("--since")
    p.add_argument("-c", "--collection")
    p.add_argument("--limit", type=int, default=100)

    return parser


def report_error(error: GnoError, *, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps({"error": error.code, "message": error.message}) + "\n")
    print(f"Error: {error.code}: {error.message}", file=sys.stderr)
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
    try:
        return handler(args)
    except GnoError as error:
        return report_error(error, as_json=getattr(args, "json", False))
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
