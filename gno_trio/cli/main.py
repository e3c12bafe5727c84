"""The ``gno-trio`` command line: the parser, and one exit status per error kind.

Every command prints human-readable text by default and the engine's JSON
objects with ``--json``. Exit codes come from the error table of
:mod:`gno_trio.errors`: 0 success, 1 the input was invalid (bad name,
unknown document, malformed query ...), 2 a runtime failure, 4 busy (another
writer holds the lease). Each command family lives in its own module and
adds its sub-parsers when one of its commands is chosen
(:mod:`gno_trio.cli.commands`), so a run imports only the family it needs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final

from gno_trio.cli import render
from gno_trio.cli.commands import CommandChoices
from gno_trio.cli.common import EXIT_OK, Handler
from gno_trio.errors import GnoError, Kind

EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error; here bad input is exit 1, with a suggestion."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(Kind.INVALID.exit_code)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """An unknown command or choice names the nearest valid one (``serach`` -> search)."""
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        nearest = difflib.get_close_matches(str(value), names, n=1, cutoff=0.6)
        hint = f"; did you mean {nearest[0]}?" if nearest else ""
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r} (choose from {', '.join(names)}){hint}"
        )


class _Version(argparse._VersionAction):
    """argparse's ``--version``, the version looked up only when it is asked for."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from gno_trio import __version__  # distribution metadata: an import and a path scan

        self.version = f"gno-trio {__version__}"
        super().__call__(parser, namespace, values, option_string)


_ACCEPTED_NO_OPS: Final = {
    "--no-color": "no effect: output is never coloured",
    "--no-pager": "no effect: output is never paged",
    "--offline": "no effect: the model ships with gno-trio, nothing is downloaded",
}
"""GNO's global flags that change nothing here, accepted so GNO's scripts run."""


def _common_options(*, with_defaults: bool) -> _Parser:
    """The options every level accepts (``--index``, ``--config``, ``--json``, ``--quiet`` ...).

    Only the top level carries defaults. argparse copies everything a
    subparser's namespace holds over what an outer level already parsed, so a
    sub-level default would silently undo ``collection --json list``; with
    ``SUPPRESS`` a sub-level sets an option only when it is actually typed
    there. Each level gets its own action objects because ``set_defaults`` and
    parents share (and mutate) them.
    """

    def default(value: Any) -> Any:
        return value if with_defaults else argparse.SUPPRESS

    common = _Parser(add_help=False)
    common.add_argument("--index", default=default("default"), help="index name (default: default)")
    common.add_argument(
        "--config", default=default(None), help="path to index.yml (default: the config dir's)"
    )
    common.add_argument(
        "--store",
        default=default(None),
        help="team mode (preview): a postgresql:// URL whose database the gateways of a "
        "team share (default: $GNO_STORE; unset: this machine only)",
    )
    common.add_argument("--json", action="store_true", default=default(False), help="print JSON")
    common.add_argument(
        "--verbose", action="store_true", default=default(False), help="log to stderr"
    )
    common.add_argument(
        "--quiet",
        action="store_true",
        default=default(False),
        help="print the result only: no progress bar, notes or hints on stderr",
    )
    common.add_argument(
        "--yes",
        "-y",
        action="store_true",
        default=default(False),
        help="never prompt (gno-trio never does; accepted for GNO's scripts)",
    )
    for flag, why in _ACCEPTED_NO_OPS.items():
        common.add_argument(flag, action="store_true", default=default(False), help=why)
    return common


def _command_parser() -> tuple[argparse.ArgumentParser, CommandChoices]:
    """The top level; a command's own parser is built (its module imported) when it is chosen."""
    parser = _Parser(
        prog="gno-trio",
        description="Index notes, code and documents into SQLite and search them; "
        "serve them to AI agents over MCP.",
        parents=[_common_options(with_defaults=True)],
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        parser_class=_Parser,
        action=CommandChoices,
    )
    assert isinstance(commands, CommandChoices)
    commands.common = _common_options(with_defaults=False)
    return parser, commands


def build_parser() -> argparse.ArgumentParser:
    """The whole parser, every command's parser built (what :func:`main` builds on demand)."""
    parser, commands = _command_parser()
    commands.load_all()
    return parser


def report_error(error: GnoError, *, as_json: bool) -> int:
    """Print ``error`` (and its JSON form with ``--json``); the exit status of its kind."""
    if as_json:
        sys.stdout.write(json.dumps({"error": error.code, "message": error.message}) + "\n")
    print(f"Error: {error.code}: {error.message}", file=sys.stderr)
    return error.kind.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = _command_parser()
    args = parser.parse_args(argv)
    args.command_line = list(sys.argv[1:] if argv is None else argv)  # ``--detach`` re-runs it
    quiet = bool(getattr(args, "quiet", False))
    verbose = bool(getattr(args, "verbose", False))
    logging.basicConfig(
        # --quiet prints the result only: warnings (an index brought in line with its
        # index.yml, a trace not recorded) stay silent; failures still say why.
        level=logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    render.set_quiet(quiet)
    handler: Handler = args.handler
    as_json = bool(getattr(args, "json", False))
    try:
        return handler(args)
    except GnoError as error:
        return report_error(error, as_json=as_json)
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        return _failed(exc, as_json=as_json)
    except Exception as exc:
        from gno_trio.engine import StoreError

        if isinstance(exc, StoreError):
            return _failed(exc, as_json=as_json)
        if args.verbose:
            logging.getLogger("gno_trio").exception("unexpected failure")
        message = f"internal error: {type(exc).__name__}: {exc}"
        return report_error(GnoError("RUNTIME", message), as_json=as_json)


def _failed(exc: Exception, *, as_json: bool) -> int:
    """Not a bad input: the disk, the database or the OS failed (exit 2)."""
    return report_error(GnoError("RUNTIME", str(exc) or type(exc).__name__), as_json=as_json)


__all__ = ["build_parser", "main", "report_error"]
