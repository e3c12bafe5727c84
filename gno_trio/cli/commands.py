"""The table of top-level commands, and the sub-parsers that load a command's module on demand.

Every ``gno-trio`` run is a fresh process, so whatever it imports is paid
on every command. A command family's module (and through it the engine
parts it calls) is imported only when one of its commands is chosen:
``gno-trio search`` never loads the vector stack, ``gno-trio --help``
loads no family at all. For that the top level needs, without importing
any family, each command's name, its one-line help and the module that
defines it: :data:`COMMANDS` is their one home (a family's
``add_parsers`` adds its top-level commands without a ``help``).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True)
class Command:
    """One top-level command: the module under ``gno_trio.cli`` that defines it, its help line."""

    family: str
    help: str


COMMANDS: Final[dict[str, Command]] = {
    "init": Command("index", "create the index (and add a folder)"),
    "collection": Command("index", "manage collections"),
    "cleanup": Command(
        "index", "delete inactive documents and the texts, chunks and vectors only they used"
    ),
    "update": Command("index", "sync collections from disk"),
    "search": Command("retrieval", "BM25 keyword search"),
    "query": Command("retrieval", "search with GNO's query pipeline (the main command)"),
    "vsearch": Command("semantic", "vector (semantic) search"),
    "similar": Command("semantic", "documents similar to one document"),
    "embed": Command("semantic", "give chunks without vectors a vector"),
    "index": Command("semantic", "update, then embed"),
    "models": Command("semantic", "the models this server uses"),
    "get": Command("reads", "read a document"),
    "multi-get": Command("reads", "read several documents"),
    "ls": Command("reads", "list indexed documents"),
    "status": Command("reads", "index health"),
    "changes": Command("reads", "metadata-only change feed"),
    "diff": Command("reads", "what changed in a document's structure"),
    "tags": Command("tags", "list tags, or tag a document"),
    "links": Command("graph", "outgoing links of a document"),
    "backlinks": Command("graph", "documents that link to a document"),
    "graph": Command("graph", "the link graph and its structure report"),
    "impact": Command("graph", "documents that depend on a document (links, relations)"),
    "context": Command("contexts", "guidance attached to results of a scope"),
    "recall": Command("memory", "recall facts"),
    "remember": Command("memory", "store one fact"),
    "mcp": Command("serve", "serve MCP over stdio (for IDEs), or set a client up"),
    "serve": Command("serve", "resident HTTP MCP gateway (loopback)"),
    "daemon": Command("serve", "headless resident HTTP MCP gateway"),
    "capture": Command("capture", "create a note in a collection"),
    "doctor": Command("doctor", "check the set-up; say how to fix it"),
    "store": Command("store", "team mode: copy the index to or from a PostgreSQL store"),
    "completion": Command("completion", "print (or install) a shell completion script"),
    "ask": Command("ask", "answer a question with citations"),
    "trace": Command("traces", "inspect, label, export or delete stored retrieval traces"),
    "egress-audit": Command(
        "egress", "the content-free receipts of egress decisions: list, show, status, delete"
    ),
    "audit": Command("audit", "read-only integrity checks: broken links, provenance, stale notes"),
}
"""Every top-level command, in the order ``--help`` lists them."""


class _NotLoaded(argparse.ArgumentParser):
    """Stands for a command whose family module has not been imported yet."""


_NOT_LOADED: Final = _NotLoaded(add_help=False)


class CommandChoices(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The top level's sub-parsers, one per :data:`COMMANDS` entry, each built when chosen.

    Every name is a valid choice (and listed with its help) from the start;
    the parser behind a name is the family's own, made by the family's
    ``add_parsers`` the first time argparse selects that name (or when
    :meth:`load_all` asks for every one, as completion scripts do).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.common: argparse.ArgumentParser | None = None
        """The options every sub-level accepts, handed to each family's ``add_parsers``."""
        for name, command in COMMANDS.items():
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), command.help))
            self._name_parser_map[name] = _NOT_LOADED

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """The parser of top-level command ``name``, which :data:`COMMANDS` must list."""
        if name not in COMMANDS:
            raise ValueError(f"command {name!r} is missing from gno_trio.cli.commands.COMMANDS")
        if "help" in kwargs or "aliases" in kwargs:
            raise TypeError(f"command {name!r}: its help line lives in COMMANDS; no aliases")
        if self._name_parser_map[name] is not _NOT_LOADED:
            raise argparse.ArgumentError(self, f"conflicting subparser: {name}")
        kwargs.setdefault("prog", f"{self._prog_prefix} {name}")
        parser: argparse.ArgumentParser = self._parser_class(**kwargs)
        self._name_parser_map[name] = parser
        return parser

    def load(self, name: str) -> None:
        """Import the family that defines ``name`` and let it add its commands."""
        if self.common is None:
            raise RuntimeError("CommandChoices.common must be set before a command is loaded")
        family = importlib.import_module(f"gno_trio.cli.{COMMANDS[name].family}")
        family.add_parsers(self, self.common)
        if self._name_parser_map[name] is _NOT_LOADED:
            raise RuntimeError(f"gno_trio.cli.{COMMANDS[name].family} does not define {name!r}")

    def load_all(self) -> None:
        """Build every command's parser (completion scripts walk the whole tree)."""
        for name in COMMANDS:
            if self._name_parser_map[name] is _NOT_LOADED:
                self.load(name)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, list) and values
        if self._name_parser_map.get(values[0]) is _NOT_LOADED:
            self.load(values[0])
        super().__call__(parser, namespace, values, option_string)


__all__ = ["COMMANDS", "Command", "CommandChoices"]
