"""``tags [list]``, ``tags add`` and ``tags rm``: the tags of the index and of one document.

``tags`` alone lists (``list`` may be omitted, as in GNO). Adding or
removing a tag is the engine's rule (:meth:`Engine.add_tag`): it takes the
write lease, and a Markdown note gets the change in its frontmatter too.
"""

from __future__ import annotations

import argparse

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, open_engine
from gno_trio.cli.render.graph import TAG_CHANGE, TAGS


def cmd_tags_list(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.documents.tags(collection=args.collection, prefix=args.prefix)
    render.emit(args, TAGS, result)
    return EXIT_OK


def cmd_tags_add(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.notes.add_tag(args.doc, args.tag)
    render.emit(args, TAG_CHANGE, result)
    return EXIT_OK


def cmd_tags_rm(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.notes.remove_tag(args.doc, args.tag)
    render.emit(args, TAG_CHANGE, result)
    return EXIT_OK


def _list_options(p: argparse.ArgumentParser, *, top: bool) -> None:
    """``tags`` and ``tags list`` take the same options; only the top level has defaults."""
    unset = None if top else argparse.SUPPRESS
    p.add_argument("-c", "--collection", default=unset, help="count tags in this collection only")
    p.add_argument("--prefix", default=unset, help="only tags starting with this, such as project/")
    p.add_argument(
        "--md",
        dest="format_md",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="print Markdown",
    )


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("tags", parents=[common])
    _list_options(p, top=True)
    p.set_defaults(handler=cmd_tags_list)
    actions = p.add_subparsers(dest="tags_command", metavar="ACTION", parser_class=type(p))
    pl = actions.add_parser("list", parents=[common], help="tags with their document counts")
    _list_options(pl, top=False)
    for name, handler, verb in (
        ("add", cmd_tags_add, "add a tag to a document (and its frontmatter)"),
        ("rm", cmd_tags_rm, "remove a tag from a document (and its frontmatter)"),
    ):
        pa = actions.add_parser(name, parents=[common], help=verb)
        pa.add_argument(
            "doc", help="the document: #docid, gno://collection/path or collection/path"
        )
        pa.add_argument("tag", help="the tag, such as project/alpha (lower-cased)")
        pa.set_defaults(handler=handler)


__all__ = ["add_parsers"]
