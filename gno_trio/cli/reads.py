"""``get``, ``multi-get``, ``ls``, ``status``, ``changes`` and ``diff``: the read commands.

None of them creates an index: pointed at one that was never initialised they
fail with ``NOT_INITIALIZED`` instead of leaving an empty database behind.
"""

from __future__ import annotations

import argparse

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, open_engine, split_list
from gno_trio.cli.render.documents import CHANGES, DIFF, DOCUMENT, DOCUMENTS, LISTING, SOURCE
from gno_trio.cli.render.health import STATUS
from gno_trio.cli.render.primitives import plural
from gno_trio.cli.tracing import trace_read
from gno_trio.engine import parse_ref
from gno_trio.engine.vocabulary import MULTI_GET_DEFAULT_MAX_BYTES


def cmd_get(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.documents.get(
            args.ref,
            from_line=args.from_line,
            line_count=args.lines,
            line_numbers=args.line_numbers,
        )
        if args.source and render.chosen_format(args) == render.TERMINAL:
            render.emit(args, SOURCE, result)
        render.emit(args, DOCUMENT, result)
        trace_read(engine, args.trace_id, result)
    if not result["content"] and "returnedLines" not in result:
        first = args.from_line or parse_ref(args.ref).line or 1
        if first > result["totalLines"]:
            render.note(
                f"Nothing to show: line {first} is past the end of {result['uri']} "
                f"({plural(result['totalLines'], 'line')})"
            )
    return EXIT_OK


def _is_glob(ref: str) -> bool:
    """Whether a lone ``multi-get`` argument is a pattern (a URI's ``?index=`` is not)."""
    if ref.startswith("#"):
        return False
    if ref.startswith("gno://"):
        ref = ref.split("?", 1)[0]
    return any(ch in ref for ch in "*?[")


def cmd_multi_get(args: argparse.Namespace) -> int:
    refs = split_list(args.refs)
    pattern = None
    if len(refs) == 1 and _is_glob(refs[0]):
        pattern, refs = refs[0], []
    with open_engine(args, create=False) as engine:
        result = engine.documents.multi_get(
            refs=refs or None,
            pattern=pattern,
            max_bytes=args.max_bytes,
            line_numbers=args.line_numbers,
        )
    render.emit(args, DOCUMENTS, result)
    for skip in result["skipped"]:
        render.note(f"skipped {skip['ref']}: {skip['reason'].replace('_', ' ')}")
    if pattern is not None and not result["documents"]:
        render.note(f"No documents match {pattern}")
    return EXIT_OK


def cmd_ls(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.documents.ls(
            collection=args.collection, prefix=args.prefix, limit=args.limit, offset=args.offset
        )
    render.emit(args, LISTING, result)
    meta = result["meta"]
    if not result["documents"]:
        render.note("No documents" + (f" in {args.collection}" if args.collection else ""))
    elif meta["total"] > meta["returned"] + meta["offset"]:
        render.note(
            f"Showing {meta['returned']} of {meta['total']} documents; "
            f"--offset {meta['offset'] + meta['returned']} shows the next"
        )
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.index.status()
    render.emit(args, STATUS, result)
    return EXIT_OK


def cmd_changes(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.documents.changes(
            since=args.since, collection=args.collection, limit=args.limit
        )
    render.emit(args, CHANGES, result)
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.documents.diff(args.doc, args.change)
    render.emit(args, DIFF, result)
    return EXIT_OK


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("get", parents=[common])
    p.add_argument(
        "ref",
        help="gno://collection/path, collection/path or #docid; a :LINE suffix "
        "(as search prints it) starts the read at that line",
    )
    p.add_argument("--from", dest="from_line", type=int, help="first line to show (1-based)")
    p.add_argument(
        "-l",
        "--limit",
        "--lines",
        dest="lines",
        type=int,
        help="how many lines to show (--lines is the same)",
    )
    p.add_argument(
        "--line-numbers",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="prefix each line with its number",
    )
    p.add_argument(
        "--source",
        action="store_true",
        help="print the source file's metadata (path, type, size, modified time, hashes, "
        "converter) before the text; --json always includes it",
    )
    p.add_argument(
        "--trace-id",
        metavar="ID",
        help="record the returned lines against this open retrieval trace "
        "(the 'Trace:' id search, vsearch or query printed)",
    )
    render.add_format_flags(p, render.MD)
    p.set_defaults(handler=cmd_get)

    p = sub.add_parser("multi-get", parents=[common])
    p.add_argument(
        "refs",
        nargs="+",
        help="refs (comma separated or several), or one glob such as 'notes/*.md'",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=MULTI_GET_DEFAULT_MAX_BYTES,
        help=f"cut each document at this many bytes (default {MULTI_GET_DEFAULT_MAX_BYTES})",
    )
    p.add_argument(
        "--line-numbers",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="prefix each line with its number",
    )
    render.add_format_flags(p, render.FILES, render.MD)
    p.set_defaults(handler=cmd_multi_get)

    p = sub.add_parser("ls", parents=[common])
    p.add_argument("collection", nargs="?", help="list this collection only (default: all)")
    p.add_argument("--prefix", help="only paths starting with this (inside the collection)")
    p.add_argument("--limit", type=int, default=1000, help="most documents to list (default 1000)")
    p.add_argument(
        "--offset", type=int, default=0, help="skip this many documents first (default 0)"
    )
    render.add_format_flags(p, render.FILES, render.MD)
    p.set_defaults(handler=cmd_ls)

    p = sub.add_parser("status", parents=[common])
    render.add_format_flags(p, render.MD)
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser("changes", parents=[common])
    p.add_argument(
        "--since", help="changes after this ISO-8601 time, or the cursor a previous page printed"
    )
    p.add_argument("-c", "--collection", help="changes of this collection only")
    p.add_argument(
        "--limit", type=int, default=100, help="most changes per page, 1-1000 (default 100)"
    )
    p.set_defaults(handler=cmd_changes)

    p = sub.add_parser("diff", parents=[common])
    p.add_argument("doc", help="the document: #docid, gno://collection/path or collection/path")
    p.add_argument(
        "--change", help="a change id (as changes prints it); default: the latest retained"
    )
    p.set_defaults(handler=cmd_diff)


__all__ = ["add_parsers"]
