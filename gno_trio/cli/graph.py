"""``links``, ``backlinks``, ``graph``, ``graph query`` and ``impact``: how documents link.

Thin surfaces over the engine's graph services; an option not given is not
passed, so the engine's own defaults apply.
"""

from __future__ import annotations

import argparse
from typing import Any

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, open_engine
from gno_trio.cli.render.graph import BACKLINKS, GRAPH, GRAPH_QUERY, IMPACT, LINKS
from gno_trio.errors import GnoError


def _given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The options among ``names`` the user typed (None means "the engine's default")."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def cmd_links(args: argparse.Namespace) -> int:
    words = list(args.words)
    if len(words) == 2 and words[0] == "list":  # ``links list DOC`` is ``links DOC``
        words = words[1:]
    if len(words) != 1:
        raise GnoError("VALIDATION", "usage: gno-trio links [list] DOC")
    with open_engine(args, create=False) as engine:
        result = engine.graph.links(
            words[0], link_type=args.type, edge_type=args.edge_type, relation=args.relation
        )
    render.emit(args, LINKS, result)
    return EXIT_OK


def cmd_backlinks(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.graph.backlinks(
            args.doc, collection=args.collection, edge_type=args.edge_type, relation=args.relation
        )
    render.emit(args, BACKLINKS, result)
    return EXIT_OK


def cmd_graph(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.graph.overview(
            linked_only=not args.include_isolated,
            include_similar=args.include_similar,
            **_given(
                args, "collection", "limit", "edge_limit", "similar_top_k", "similar_threshold"
            ),
        )
    render.emit(args, GRAPH, result)
    return EXIT_OK


def cmd_graph_query(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.graph.query(
            args.doc,
            **_given(
                args,
                "direction",
                "edge_type",
                "max_depth",
                "max_nodes",
                "frontier_limit",
                "visited_limit",
            ),
        )
    render.emit(args, GRAPH_QUERY, result)
    return EXIT_OK


def cmd_impact(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.graph.impact(
            args.doc,
            **_given(
                args, "max_depth", "max_nodes", "max_edges", "frontier_limit", "visited_limit"
            ),
        )
    render.emit(args, IMPACT, result)
    return EXIT_OK


def _walk_caps(p: argparse.ArgumentParser, depth: int) -> None:
    p.add_argument("--max-depth", type=int, help=f"how many hops at most, 1-6 (default {depth})")
    p.add_argument("--max-nodes", type=int, help="most documents to return, 1-1000 (default 100)")
    p.add_argument(
        "--frontier-limit", type=int, help="widest frontier per hop, 1-1000 (default 100)"
    )
    p.add_argument(
        "--visited-limit", type=int, help="most documents visited in all, 1-5000 (default 500)"
    )


def _edge_type_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--edge-type", help=what + "; links_to covers wiki and Markdown links")
    p.add_argument("--relation", help="same as --edge-type (both given must agree)")


_DOC_HELP = "the document: #docid, gno://collection/path or collection/path"


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("links", parents=[common])
    p.add_argument(
        "words", nargs="+", metavar="[list] DOC", help=_DOC_HELP + " (list may be omitted)"
    )
    p.add_argument("--type", choices=("wiki", "markdown"), help="only links of this syntax")
    _edge_type_options(p, "list the document's edges of this type (such as depends_on)")
    render.add_format_flags(p, render.MD)
    p.set_defaults(handler=cmd_links)

    p = sub.add_parser("backlinks", parents=[common])
    p.add_argument("doc", help=_DOC_HELP)
    p.add_argument("-c", "--collection", help="only links from documents of this collection")
    _edge_type_options(p, "list the edges of this type that point at the document")
    render.add_format_flags(p, render.MD)
    p.set_defaults(handler=cmd_backlinks)

    p = sub.add_parser("graph", parents=[common])
    p.add_argument("-c", "--collection", help="documents of this collection only")
    p.add_argument("--limit", type=int, help="most documents (nodes) to return (default 2000)")
    p.add_argument("--edge-limit", type=int, help="most links (edges) to return (default 10000)")
    p.add_argument(
        "--include-isolated", action="store_true", help="include documents without any link"
    )
    p.add_argument(
        "--include-similar",
        action="store_true",
        help="add similarity edges between the documents shown (needs embeddings: gno-trio embed)",
    )
    p.add_argument("--similar-top-k", type=int, help="similar documents per node, 1-20 (default 5)")
    p.add_argument(
        "--threshold",
        dest="similar_threshold",
        type=float,
        help="lowest similarity score for a similarity edge, 0-1 (default 0.7)",
    )
    p.set_defaults(handler=cmd_graph)
    actions = p.add_subparsers(dest="graph_command", metavar="ACTION", parser_class=type(p))
    pq = actions.add_parser(
        "query", parents=[common], help="walk typed edges from one document, bounded"
    )
    pq.add_argument("doc", help=_DOC_HELP)
    pq.add_argument(
        "--direction", choices=("both", "out", "in"), help="which way to walk (default both)"
    )
    pq.add_argument("--edge-type", help="follow only this edge type (such as depends_on)")
    _walk_caps(pq, depth=2)
    pq.set_defaults(handler=cmd_graph_query)

    p = sub.add_parser("impact", parents=[common])
    p.add_argument("doc", help=_DOC_HELP)
    _walk_caps(p, depth=3)
    p.add_argument("--max-edges", type=int, help="most edges to walk, 1-5000 (default 500)")
    p.set_defaults(handler=cmd_impact)


__all__ = ["add_parsers"]
