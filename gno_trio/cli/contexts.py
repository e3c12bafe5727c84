"""``context add|list|check|rm``: guidance attached to a scope, kept in ``index.yml``.

(``context build|verify``, Context Capsules, live in :mod:`.capsules`.)

Thin over the engine's context functions; ``--json`` prints what GNO prints
(``list`` an array of ``{scope, text}``, ``check`` ``{valid, warnings, errors}``).
"""

from __future__ import annotations

import argparse
from typing import Any

from gno_trio.cli import capsules, render
from gno_trio.cli.common import EXIT_OK, Subparsers, action_command, emit_json, open_engine
from gno_trio.cli.render.primitives import md_table, plural

_SCOPE_HELP = "/ (everything), COLLECTION: (one collection) or gno://COLLECTION/PREFIX"


def _show(entry: dict[str, Any]) -> str:
    return f"{entry['scope']}  {entry['text']}"


def cmd_context(args: argparse.Namespace) -> int:
    action = args.context_command
    with open_engine(args, create=False) as engine:
        if action == "add":
            result: Any = engine.search.add_context(args.scope, args.text)
            summary = f"Added context for {_show(result)}"
        elif action == "rm":
            result = engine.search.remove_context(args.scope, args.text)
            summary = f"Removed context for {_show(result)}"
        elif action == "check":
            result = engine.search.check_contexts()
            count = len(engine.config.contexts)
            summary = "\n".join(
                [f"{plural(count, 'context')}, {plural(len(result['warnings']), 'warning')}"]
                + [f"! {warning}" for warning in result["warnings"]]
            )
        else:
            result = engine.search.contexts()
            summary = "\n".join(_show(e) for e in result) if result else "No contexts configured"
    if args.json:
        emit_json(result)
    elif getattr(args, "format_md", False):
        if action == "list":
            print(md_table(("Scope", "Text"), [(f"`{e['scope']}`", e["text"]) for e in result]))
        else:
            print(md_table(("Warning",), [(w,) for w in result["warnings"]]))
    else:
        print(summary)
    return EXIT_OK


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    actions = action_command(
        sub,
        "context",
        common,
        handler=cmd_context,
        dest="context_command",
    )
    q = actions.add_parser("add", parents=[common], help="attach guidance text to a scope")
    q.add_argument("scope", help=_SCOPE_HELP)
    q.add_argument("text", help="the guidance, shown with that scope's results")
    q = actions.add_parser("list", parents=[common], help="every configured context")
    render.add_format_flags(q, render.MD)
    q = actions.add_parser("check", parents=[common], help="contexts that apply to nothing")
    render.add_format_flags(q, render.MD)
    q = actions.add_parser("rm", parents=[common], help="remove a context")
    q.add_argument("scope", help=_SCOPE_HELP)
    q.add_argument(
        "text", nargs="?", help="which of the scope's contexts (needed when it has several)"
    )
    capsules.add_actions(actions, common)


__all__ = ["add_parsers"]
