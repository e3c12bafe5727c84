"""``search`` and ``query``: ranked retrieval from the command line.

``search`` is BM25 keyword search; ``query`` is GNO's main command, a thin
surface over the engine's query pipeline: whatever the engine makes of the
request (lexical fusion today, hybrid once vectors exist) is printed as it
comes. Both share GNO's filter options (:func:`add_search_options`, meant
for every ranked command) and its output formats.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, open_engine, split_list
from gno_trio.cli.render.hits import DIAGNOSIS, FORMATS, RESULTS
from gno_trio.cli.render.primitives import MARK_CLOSE, MARK_OPEN, number_lines
from gno_trio.cli.tracing import print_receipt
from gno_trio.engine import Engine, QueryOptions, Scope, SearchRequest
from gno_trio.errors import GnoError

DEFAULT_LIMIT = 5
STRUCTURED_LIMIT = 20
QUERY_MODE_NAMES = ("term", "intent", "hyde")


def scope_of(args: argparse.Namespace) -> Scope:
    """The one CLI-options-to-:class:`Scope` converter (search, vsearch, query, ask, context).

    List options are repeatable and comma separated; ``--collection`` is one
    name for the ranked commands and a list for ``context build``. An option
    a command does not have filters nothing.
    """
    collection = getattr(args, "collection", None)
    collections = split_list(collection) if isinstance(collection, list) else [collection]
    return Scope(
        collections=tuple(name for name in collections if name is not None),
        uri_prefix=getattr(args, "uri_prefix", None),
        since=args.since,
        until=args.until,
        tags_all=split_list(getattr(args, "tags_all", None)),
        tags_any=split_list(getattr(args, "tags_any", None)),
        categories=split_list(args.category),
        author=args.author,
        lang=args.lang,
        exclude=split_list(args.exclude),
        min_score=args.min_score,
        intent=args.intent,
    )


def search_request(args: argparse.Namespace) -> SearchRequest:
    """The engine request the shared search options describe."""
    default = STRUCTURED_LIMIT if render.structured(args) else DEFAULT_LIMIT
    return SearchRequest(
        query=args.query,
        limit=args.limit if args.limit is not None else default,
        scope=scope_of(args),
    )


def _snippet_first_line(hit: dict[str, Any]) -> int:
    """The line a hit's snippet starts on.

    ``line`` is the line of the first highlighted term, and a snippet is a
    verbatim slice of its chunk, so the line breaks before the first mark
    count back to the snippet's own first line.
    """
    snippet = str(hit.get("snippet") or "")
    line = int(hit.get("line") or hit.get("snippetRange", {}).get("startLine") or 1)
    opened = snippet.find(MARK_OPEN)
    if opened < 0:
        return line
    return max(1, line - snippet[:opened].replace(MARK_CLOSE, "").count("\n"))


def present_hits(engine: Engine, result: dict[str, Any], args: argparse.Namespace) -> None:
    """Apply ``--full`` (the whole document instead of the snippet) and ``--line-numbers``."""
    for hit in result["results"]:
        if args.full:
            hit["snippet"] = engine.documents.get(hit["uri"], line_numbers=args.line_numbers)[
                "content"
            ]
        elif args.line_numbers and hit.get("snippet"):
            text = str(hit["snippet"]).rstrip("\n")
            hit["snippet"] = number_lines(text, _snippet_first_line(hit))


def cmd_search(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        traced = engine.retrieval.run("search", search_request(args))
        present_hits(engine, traced.result, args)
        render.emit(args, RESULTS, traced.result)
    print_receipt(traced.trace_id)
    return EXIT_OK


def parse_query_modes(values: list[str] | None) -> list[tuple[str, str]]:
    modes = []
    for value in values or ():
        mode, sep, text = value.partition(":")
        if not sep or mode.strip().lower() not in QUERY_MODE_NAMES:
            raise GnoError(
                "VALIDATION",
                f"--query-mode takes MODE:TEXT with MODE one of term, intent, hyde (got {value!r})",
            )
        modes.append((mode.strip().lower(), text))
    return modes


def query_options(args: argparse.Namespace) -> QueryOptions:
    return QueryOptions(
        query_modes=parse_query_modes(args.query_mode),
        candidate_limit=args.candidate_limit,
        fast=args.fast,
        thorough=args.thorough,
        explain=args.explain,
        graph=args.graph,
        expand=False if args.no_expand else None,
        rerank=False if args.no_rerank else None,
    )


def _print_explain(result: dict[str, Any]) -> None:
    """``--explain``: the pipeline's account of itself, on stderr."""
    explain = result.get("meta", {}).get("explain") or {}
    for line in explain.get("lines", ()):
        print(f"[explain] {line['stage']}: {line['message']}", file=sys.stderr)
    for entry in explain.get("results", ()):
        parts = [f"score={entry['score']:.3f}"]
        extra = [
            f"{name}={entry[key]:.3f}"
            for name, key in (("bm25", "bm25Score"), ("vec", "vecScore"), ("rerank", "rerankScore"))
            if isinstance(entry.get(key), int | float)
        ]
        if extra:
            parts.append(f"({', '.join(extra)})")
        print(f"[explain] result {entry['rank']}: {' '.join(parts)}", file=sys.stderr)


def cmd_query(args: argparse.Namespace) -> int:
    words = list(args.words)
    diagnose = len(words) == 2 and words[0] == "diagnose"
    if len(words) != 1 and not diagnose:
        raise GnoError(
            "VALIDATION",
            'put the query in quotes: gno-trio query "several words" '
            '(or: gno-trio query diagnose "QUERY" --target DOC)',
        )
    args.query = words[-1]
    if diagnose and not args.target:
        raise GnoError("VALIDATION", "query diagnose needs --target DOC (the document to trace)")
    if args.target and not diagnose:
        raise GnoError("VALIDATION", '--target belongs to: gno-trio query diagnose "QUERY"')
    request = search_request(args)
    options = query_options(args)
    with open_engine(args, create=False) as engine:
        if diagnose:
            render.emit(args, DIAGNOSIS, engine.search.diagnose(request, args.target, options))
            return EXIT_OK
        traced = engine.retrieval.run("query", request, options)
        result = traced.result
        present_hits(engine, result, args)
        if args.explain:
            _print_explain(result)
        for key, stage in (("expansionSkipped", "expansion"), ("rerankSkipped", "rerank")):
            if key in result["meta"]:
                print(f"note: {stage} not run: {result['meta'][key]}", file=sys.stderr)
        render.emit(args, RESULTS, result)
    print_receipt(traced.trace_id)
    return EXIT_OK


def add_search_options(p: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """GNO's options of every ranked command (``search``, ``query``, ``vsearch``)."""
    if positional:
        p.add_argument("query", help="what to look for")
    p.add_argument(
        "-n",
        "--limit",
        type=int,
        help=f"most results to show, 1-100 (default {DEFAULT_LIMIT}; "
        f"{STRUCTURED_LIMIT} with --json or --files)",
    )
    p.add_argument("-c", "--collection", help="search this collection only")
    p.add_argument(
        "--min-score",
        type=float,
        help="drop hits scoring below this (0-1; scores are relative within one result set)",
    )
    p.add_argument("--lang", help="language filter or hint (BCP-47, such as en or de)")
    p.add_argument(
        "--intent",
        help="background that disambiguates the query; steers snippets, is not searched itself",
    )
    p.add_argument(
        "--exclude",
        action="append",
        help="drop documents containing any of these terms (comma separated, repeatable)",
    )
    p.add_argument("--since", help="modified on or after (ISO date/time, or 7d, last week ...)")
    p.add_argument("--until", help="modified on or before (ISO date/time or relative)")
    p.add_argument(
        "--category",
        action="append",
        help="documents of these categories or content types (comma separated)",
    )
    p.add_argument("--author", help="documents whose author contains this (case-insensitive)")
    p.add_argument("--tags-all", action="append", help="documents with ALL of these tags")
    p.add_argument("--tags-any", action="append", help="documents with ANY of these tags")
    p.add_argument(
        "--full", action="store_true", help="show each hit's whole document instead of a snippet"
    )
    p.add_argument("--line-numbers", action="store_true", help="number the lines shown")
    render.add_format_flags(p, *FORMATS)


def _query_arguments(p: argparse.ArgumentParser) -> None:
    depth = p.add_mutually_exclusive_group()
    depth.add_argument(
        "--fast", action="store_true", help="shallow pass: no expansion, graph or reranking"
    )
    depth.add_argument(
        "--thorough", action="store_true", help="deep pass: 40 candidates, expansion and rerank"
    )
    p.add_argument(
        "-C",
        "--candidate-limit",
        type=int,
        help="most candidates that reach the rerank stage (1-100, default 20)",
    )
    p.add_argument(
        "--query-mode",
        action="append",
        metavar="MODE:TEXT",
        help="your own retrieval text: term:<words>, intent:<context> or hyde:<a hypothetical "
        "answer> (repeatable; at most one hyde)",
    )
    graph = p.add_mutually_exclusive_group()
    graph.add_argument(
        "--graph",
        dest="graph",
        action="store_true",
        default=True,
        help="add linked neighbours of the top hits (the default)",
    )
    graph.add_argument(
        "--no-graph", dest="graph", action="store_false", help="no graph neighbour expansion"
    )
    p.add_argument(
        "--no-expand",
        action="store_true",
        help="no generated query variants (they come from the configured expand endpoint)",
    )
    p.add_argument(
        "--no-rerank",
        action="store_true",
        help="no reranking (it runs through the configured rerank endpoint)",
    )
    p.add_argument(
        "--explain", action="store_true", help="print how the result was retrieved, on stderr"
    )


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common])
    add_search_options(p)
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("query", parents=[common])
    p.add_argument(
        "words",
        nargs="+",
        metavar="QUERY",
        help='what to look for; or: diagnose "QUERY" --target DOC, to see where DOC '
        "ranks or drops out at each stage",
    )
    add_search_options(p, positional=False)
    _query_arguments(p)
    p.add_argument("--target", help="with diagnose: the document to trace (ref or #docid)")
    p.set_defaults(handler=cmd_query)


__all__ = ["add_parsers", "add_search_options", "present_hits", "scope_of", "search_request"]
