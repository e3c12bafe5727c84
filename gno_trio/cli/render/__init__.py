"""Output formats: every command hands its result to :func:`emit` with a view.

A command never prints its result itself. It declares which formats it
supports (:func:`add_format_flags`, following GNO's support matrix), and a
:class:`View` says how one kind of result reads in each format. ``--json``
is the engine's object as it is, for every command alike; the other formats
(terminal text, ``--md``, ``--csv``, ``--files``, ``--xml``) are rendered by
the views in this package, one module per kind of result:

* :mod:`.hits`: search, query (and every other ranked result list);
* :mod:`.documents`: get, multi-get, ls;
* :mod:`.graph`: tags, links, backlinks, graph, graph query;
* :mod:`.health`: status, doctor, collections, MCP client set-up.

The primitives every format shares (tables, CSV, XML, the ``--files`` line
protocol) live in :mod:`.primitives`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.cli.common import emit_json
from gno_trio.errors import GnoError

TERMINAL: Final = "terminal"
JSON: Final = "json"
FILES: Final = "files"
CSV: Final = "csv"
MD: Final = "md"
XML: Final = "xml"

_FLAG_HELP: Final = {
    FILES: "print one line per document: #docid,score,gno://uri (for piping)",
    CSV: "print comma-separated values with a header row",
    MD: "print Markdown",
    XML: "print XML",
}

Renderer = Callable[[Mapping[str, Any], argparse.Namespace], str]
"""Turns a result (and the command's options) into the text to print."""


@dataclass(frozen=True, slots=True)
class View:
    """How one kind of result reads in each format besides JSON."""

    terminal: Renderer
    formats: Mapping[str, Renderer] = field(default_factory=dict)


def add_format_flags(parser: argparse.ArgumentParser, *formats: str) -> None:
    """Give a command the output flags it supports besides ``--json`` (always there)."""
    for name in formats:
        parser.add_argument(
            f"--{name}",
            dest=f"format_{name}",
            action="store_true",
            default=False,
            help=_FLAG_HELP[name],
        )


def chosen_format(args: argparse.Namespace) -> str:
    """The one output format asked for; two at once is a usage error."""
    picked = [name for name in (FILES, CSV, MD, XML) if getattr(args, f"format_{name}", False)]
    if getattr(args, "json", False):
        picked.insert(0, JSON)
    if len(picked) > 1:
        flags = ", ".join(f"--{name}" for name in picked)
        raise GnoError("VALIDATION", f"Choose one output format, not {flags}")
    return picked[0] if picked else TERMINAL


def structured(args: argparse.Namespace) -> bool:
    """Whether the output is for programs (JSON or ``--files``), which get more rows by default."""
    return chosen_format(args) in (JSON, FILES)


def emit(args: argparse.Namespace, view: View, result: Mapping[str, Any]) -> None:
    """Print ``result`` in the format the command line asked for."""
    fmt = chosen_format(args)
    if fmt == JSON:
        emit_json(result)
        return
    render = view.terminal if fmt == TERMINAL else view.formats.get(fmt)
    if render is None:  # a flag the command declared but its view cannot render
        raise GnoError("VALIDATION", f"--{fmt} is not available for this command")
    text = render(result, args)
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


_quiet = [False]
"""Whether this run was given ``--quiet`` (set once, by the entry point)."""


def set_quiet(on: bool) -> None:
    _quiet[0] = on


def quiet() -> bool:
    """Whether notes and progress are silenced (``--quiet``); results and errors never are."""
    return _quiet[0]


def note(message: str) -> None:
    """A message for the person at the terminal (stderr): never part of the output."""
    if not _quiet[0]:
        print(message, file=sys.stderr)


__all__ = [
    "CSV",
    "FILES",
    "JSON",
    "MD",
    "TERMINAL",
    "XML",
    "Renderer",
    "View",
    "add_format_flags",
    "chosen_format",
    "emit",
    "note",
    "quiet",
    "set_quiet",
    "structured",
]
