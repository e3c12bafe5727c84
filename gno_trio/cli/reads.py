"""``search``, ``get``, ``multi-get``, ``ls``, ``status`` and ``changes``: the read commands.

None of them creates an index: pointed at one that was never initialised they
fail with ``NOT_INITIALIZED`` instead of leaving an empty database behind.
"""

from __future__ import annotations

import argparse
import sys

from gno_trio.cli.common import (
    EXIT_OK,
    Subparsers,
    add_search_options,
    emit_json,
    open_engine,
    print_hits,
    search_request,
)
from gno_trio.engine import MULTI_GET_DEFAULT_MAX_BYTES


def cmd_search(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.search(search_request(args))
    if args.json:
        emit_json(result)
    else:
        print_hits(args.query, result)
    return EXIT_OK


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


def cmd_ls(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.ls(collection=args.collection, prefix=args.prefix, limit=args.limit)
    if args.json:
        emit_json(result)
    else:
        for doc in result["documents"]:
            print(f"{doc['docid']}  {doc['uri']}")
    return EXIT_OK


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
            f"{c['errorCount']} errors, {c['skippedCount']} skipped, last sync {synced}  "
            f"({c['path']})"
        )
        for error in c["errors"][:10]:
            print(f"    ! {error['relPath']}: {error['code']}: {error['message']}")
        for skipped in c["skipped"][:10]:
            print(f"    - {skipped['relPath']}: {skipped['code']}")
        if c["skippedCount"] > 10:
            print(f"    - ... {c['skippedCount'] - 10} more not indexed for their type (--json)")
        for warning in c["warnings"][:10]:
            print(f"    ? {warning['relPath']}: {warning['code']}: {warning['message']}")
    return EXIT_OK


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


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help="BM25 keyword search")
    add_search_options(p)
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("get", parents=[common], help="read a document")
    p.add_argument("ref")
    p.add_argument("--from", dest="from_line", type=int)
    p.add_argument("-l", "--lines", type=int)
    p.add_argument("--line-numbers", action=argparse.BooleanOptionalAction, default=False)
    p.set_defaults(handler=cmd_get)

    p = sub.add_parser("multi-get", parents=[common], help="read several documents")
    p.add_argument("refs", nargs="+")
    p.add_argument("--max-bytes", type=int, default=MULTI_GET_DEFAULT_MAX_BYTES)
    p.add_argument("--line-numbers", action=argparse.BooleanOptionalAction, default=False)
    p.set_defaults(handler=cmd_multi_get)

    p = sub.add_parser("ls", parents=[common], help="list indexed documents")
    p.add_argument("collection", nargs="?")
    p.add_argument("--prefix")
    p.add_argument("--limit", type=int, default=1000)
    p.set_defaults(handler=cmd_ls)

    p = sub.add_parser("status", parents=[common], help="index health")
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser("changes", parents=[common], help="metadata-only change feed")
    p.add_argument("--since")
    p.add_argument("-c", "--collection")
    p.add_argument("--limit", type=int, default=100)
    p.set_defaults(handler=cmd_changes)


__all__ = ["add_parsers"]
