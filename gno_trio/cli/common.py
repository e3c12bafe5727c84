"""What every command module shares: opening the index, printing JSON, list options."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gno_trio.engine import Engine, SearchRequest, locate
from gno_trio.errors import GnoError

EXIT_OK = 0

Handler = Callable[[argparse.Namespace], int]
Subparsers = Any
"""``argparse``'s sub-parser action (its type is private to argparse)."""


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def open_engine(
    args: argparse.Namespace, *, create: bool = True, new_config: bool = False
) -> Engine:
    """Open the selected index; read-only commands pass ``create=False``.

    A command that only reads must not leave an empty database behind when
    pointed at an index that was never initialised (a typo in ``--index``
    would otherwise create one); it fails with ``NOT_INITIALIZED`` (exit 2).
    A config chosen with ``--config`` or ``GNO_CONFIG_DIR`` must exist
    (``CONFIG_NOT_FOUND``, exit 1), so a typo never looks like an empty index;
    a command that writes the config (``new_config``: ``init``, ``collection
    add``) may start one for an index without collections.
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
    return Engine.open(
        index_name=args.index,
        config_path=config,
        create=create,
        config_required=True,
        may_create_config=new_config,
    )


def split_list(values: Sequence[str] | None) -> list[str]:
    """Repeatable, comma-separated option values as one flat list."""
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def add_search_options(p: argparse.ArgumentParser) -> None:
    """The query argument and the filters every retrieval command takes (GNO's flags)."""
    p.add_argument("query")
    p.add_argument("-n", "--limit", type=int, help="maximum results (5; 20 with --json)")
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


def search_request(args: argparse.Namespace) -> SearchRequest:
    """The request those options describe."""
    limit = args.limit if args.limit is not None else (20 if args.json else 5)
    return SearchRequest(
        query=args.query,
        limit=limit,
        collection=args.collection,
        min_score=args.min_score,
        lang=args.lang,
        intent=args.intent,
        exclude=split_list(args.exclude),
        since=args.since,
        until=args.until,
        categories=split_list(args.category),
        author=args.author,
        tags_all=split_list(args.tags_all),
        tags_any=split_list(args.tags_any),
    )


def print_hits(query: str, result: dict[str, Any], label: str | None = None) -> None:
    """Ranked hits for a terminal: docid, uri, line anchor, score, title, snippet."""
    hits = result["results"]
    if not hits:
        print(f'No results for "{query}"')
        return
    print(f'Found {len(hits)} results for "{query}"' + (f" ({label})" if label else ""))
    for hit in hits:
        line = f":{hit['line']}" if "line" in hit else ""
        print(f"\n{hit['docid']}  {hit['uri']}{line}  ({hit['score']:.3f})")
        if hit.get("title"):
            print(f"  {hit['title']}")
        snippet = " ".join(str(hit.get("snippet", "")).split())
        if snippet:
            print(f"  {snippet.replace('<mark>', '').replace('</mark>', '')[:240]}")


__all__ = [
    "EXIT_OK",
    "Handler",
    "Subparsers",
    "add_search_options",
    "emit_json",
    "open_engine",
    "print_hits",
    "search_request",
    "split_list",
]
