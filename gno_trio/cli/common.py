"""What every command module shares: opening the index, printing JSON, list options."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gno_trio.config.dirs import DEFAULT_INDEX_NAME
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine import Engine

EXIT_OK = 0

Handler = Callable[[argparse.Namespace], int]
Subparsers = Any
"""``argparse``'s sub-parser action (its type is private to argparse)."""


def action_command(
    sub: Subparsers,
    name: str,
    common: argparse.ArgumentParser,
    *,
    handler: Handler,
    dest: str,
    **parser_options: Any,
) -> Subparsers:
    """Add the command ``name``, which must be followed by an ACTION; return its action parsers."""
    parser = sub.add_parser(name, parents=[common], **parser_options)
    parser.set_defaults(handler=handler)
    return parser.add_subparsers(
        dest=dest, required=True, metavar="ACTION", parser_class=type(parser)
    )


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def print_result(args: argparse.Namespace, result: Any, text: Callable[[Any], str]) -> int:
    """``result`` as JSON with ``--json``, else as the text ``text`` makes of it; exit 0."""
    if getattr(args, "json", False):
        emit_json(result)
    else:
        print(text(result))
    return EXIT_OK


def open_engine(
    args: argparse.Namespace,
    *,
    create: bool = True,
    new_config: bool = False,
    detached_team_cache: bool = False,
) -> Engine:
    """Open the selected index; read-only commands pass ``create=False``.

    A command that only reads must not leave an empty database behind when
    pointed at an index that was never initialised (a typo in ``--index``
    would otherwise create one); it fails with ``NOT_INITIALIZED`` (exit 2).
    A config chosen with ``--config`` or ``GNO_CONFIG_DIR`` must exist
    (``CONFIG_NOT_FOUND``, exit 1), so a typo never looks like an empty index;
    a command that writes the config (``new_config``: ``init``, ``collection
    add``) may start one for an index without collections. With a store
    (``--store``, else ``GNO_STORE``) the engine joins that team's
    coordination state (its write lease among others); a malformed URL is
    ``INVALID_INPUT`` and a store that cannot be reached ``RUNTIME``.
    Without a store, a file team mode made a cache of a shared index is
    ``CONFLICT`` (only ``store copy``, which never writes it as the team's,
    passes ``detached_team_cache``).
    """
    # only a command that opens an index pays for these imports
    from gno_trio.engine import Engine, Team, locate, store_from

    config = Path(args.config).expanduser() if args.config else None
    if not create:
        location = locate(index_name=args.index, config_path=config)
        if not location.db_path.exists():
            raise GnoError(
                "NOT_INITIALIZED",
                f"Index {location.index_name} is not initialized ({location.db_path} does not "
                f"exist); run `{command_line(args, 'init')}` first",
            )
    store = store_from(getattr(args, "store", None))  # a wrong URL fails before anything opens
    engine = Engine.open(
        index_name=args.index,
        config_path=config,
        create=create,
        config_required=True,
        may_create_config=new_config,
        detached_team_cache=detached_team_cache or store is not None,
    )
    if store is not None:
        try:
            engine.join_team(Team.open(store, engine.location.index_name))
        except BaseException:
            engine.close()
            raise
    return engine


def command_line(args: argparse.Namespace, *words: str) -> str:
    """``gno-trio`` with the index and config options this run was given, then ``words``.

    A hint such as "run init first" must work when pasted: with ``--index
    other`` the command to run is ``gno-trio --index other init``.
    """
    parts = ["gno-trio"]
    index = getattr(args, "index", DEFAULT_INDEX_NAME)
    if index != DEFAULT_INDEX_NAME:
        parts += ["--index", shlex.quote(index)]
    if getattr(args, "config", None):
        parts += ["--config", shlex.quote(str(args.config))]
    return " ".join([*parts, *words])


def with_flag_names(text: str, flags: Mapping[str, str]) -> str:
    """``text`` with the engine's (MCP) argument names replaced by this command's flags.

    The engine words its refusals with the tools' argument names
    (``budgetTokens``); a command line user should read ``--budget``.
    """
    if not flags:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, flags)) + r")\b")
    return pattern.sub(lambda m: flags[m.group(1)], text)


def split_list(values: Sequence[str] | None) -> list[str]:
    """Repeatable, comma-separated option values as one flat list."""
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


__all__ = [
    "EXIT_OK",
    "Handler",
    "Subparsers",
    "command_line",
    "emit_json",
    "open_engine",
    "print_result",
    "split_list",
    "with_flag_names",
]
