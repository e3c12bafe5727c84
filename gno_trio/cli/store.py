"""``store copy``: move an index between this machine and a team's PostgreSQL store.

``--to URL`` ships every document, chunk, vector, memory record and journal
entry of the embedded index to the store (whose copy of the index must be
empty) and seeds the team's configuration from ``index.yml`` if it has none;
the local index is only read. ``--from URL`` fills a fresh data directory
from the store and leaves a plain embedded index with the team's
configuration. The common ``--store`` option plays no part here.
"""

from __future__ import annotations

import argparse
from typing import Any

from gno_trio.cli.common import Subparsers, open_engine, print_result
from gno_trio.errors import GnoError


def _said(direction: str) -> Any:
    def text(result: dict[str, Any]) -> str:
        return (
            f"Copied index {result['index']} {direction} {result['store']}: "
            f"{result['documents']} documents ({result['units']} units, change "
            f"{result['changeSeq']})"
        )

    return text


def cmd_store_copy(args: argparse.Namespace) -> int:
    from gno_trio.engine import store_from

    if args.store is not None:
        raise GnoError("INVALID_INPUT", "store copy takes --to or --from, not --store")
    url = args.to if args.to is not None else args.source
    store = store_from(url)
    if store is None:
        raise GnoError("INVALID_INPUT", "store copy needs a postgresql:// URL")
    if args.to is not None:
        with open_engine(args, create=False, detached_team_cache=True) as engine:
            return print_result(args, engine.copy_to_store(store), _said("to"))
    with open_engine(args, create=True, new_config=True, detached_team_cache=True) as engine:
        return print_result(args, engine.copy_from_store(store), _said("from"))


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("store", parents=[common])
    actions = p.add_subparsers(dest="store_command", metavar="ACTION", parser_class=type(p))
    actions.required = True
    pc = actions.add_parser(
        "copy", parents=[common], help="copy the index to or from a team's PostgreSQL store"
    )
    way = pc.add_mutually_exclusive_group(required=True)
    way.add_argument("--to", metavar="URL", help="ship this index to the store (empty there)")
    way.add_argument(
        "--from",
        dest="source",
        metavar="URL",
        help="fill this (fresh) data directory from the store",
    )
    pc.set_defaults(handler=cmd_store_copy)


__all__ = ["add_parsers"]
