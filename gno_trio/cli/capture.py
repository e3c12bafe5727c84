"""``capture``: create a note in a collection and index it at once."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, emit_json, open_engine, split_list
from gno_trio.engine import CaptureRequest, Engine
from gno_trio.engine.vocabulary import (
    CAPTURE_MAX_TEXT_BYTES,
    COLLISION_POLICIES,
    PRESETS,
    SOURCE_KINDS,
)
from gno_trio.errors import GnoError


def _read_capture_bytes(data: bytes, origin: str) -> str:
    limit = CAPTURE_MAX_TEXT_BYTES
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
        limit = CAPTURE_MAX_TEXT_BYTES
        return _read_capture_bytes(sys.stdin.buffer.read(limit + 1), "standard input")
    if args.file is not None:
        try:
            with open(Path(args.file).expanduser(), "rb") as handle:
                data = handle.read(CAPTURE_MAX_TEXT_BYTES + 1)
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
        request = CaptureRequest(
            collection=_capture_collection(engine, args.collection),
            content=content,
            title=args.title,
            path=args.path,
            folder_path=args.folder,
            collision_policy=args.collision_policy,
            preset_id=args.preset,
            overwrite=args.overwrite,
            tags=split_list(args.tags),
            source={k: v for k, v in source.items() if v is not None},
        )
        receipt = engine.notes.capture(request)
    if args.json:
        emit_json(receipt)
        return EXIT_OK
    if render.quiet():  # GNO: quiet prints only the created (or opened) URI
        print(receipt["uri"])
    else:
        verb = _CAPTURE_VERBS[receipt["collisionPolicyResult"]]
        print(f"{verb} {receipt['uri']} {receipt['docid']}")
        print(f"  {receipt['absPath']}")
    if receipt["sync"]["status"] != "completed":
        print(f"warning: not indexed: {receipt['sync'].get('error', '')}", file=sys.stderr)
    return EXIT_OK


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("capture", parents=[common])
    p.add_argument("content", nargs="*", help="note text (or use --stdin or --file)")
    p.add_argument("--stdin", action="store_true", help="read the note text from standard input")
    p.add_argument("--file", help="read the note text from this UTF-8 file")
    p.add_argument("-c", "--collection", help="target collection (default: the only one)")
    p.add_argument("--title", help="note title; also names the file")
    p.add_argument("--path", help="file path inside the collection (.md added if no extension)")
    p.add_argument("--folder", help="folder inside the collection for a generated name")
    p.add_argument("--preset", choices=sorted(PRESETS), help="note scaffold")
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
        choices=COLLISION_POLICIES,
        help="when the name is taken (default: open_existing for generated inbox names, "
        "else error)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at --path")
    p.add_argument("--source-kind", choices=SOURCE_KINDS, help="provenance kind")
    p.add_argument("--source-url", help="where the text came from")
    p.add_argument("--source-title", help="title of the source")
    p.add_argument("--source-author", help="author of the source")
    p.add_argument("--source-date", help="when the source was seen (ISO date or date-time)")
    p.add_argument("--source-id", help="the source's own identifier")
    p.set_defaults(handler=cmd_capture)


__all__ = ["add_parsers"]
