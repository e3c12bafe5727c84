"""``recall`` and ``remember``: scoped, cited facts from the command line.

The caller identity defaults to ``cli:<user>`` and the session to the parent
process (``ppid:<pid>``), so facts remembered from one shell share a session;
``--caller``/``--session`` or ``GNO_MEMORY_CALLER``/``GNO_MEMORY_SESSION``
override them.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, emit_json, open_engine
from gno_trio.cli.render.primitives import plural
from gno_trio.config.environment import MEMORY_CALLER, MEMORY_SESSION, variable
from gno_trio.engine import Engine, Identity
from gno_trio.engine.vocabulary import RECALL_DEFAULT_MAX_FACTS, RECALL_DEFAULT_MAX_TOKENS
from gno_trio.errors import GnoError


def _memory_identity(args: argparse.Namespace) -> Identity:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no USER/LOGNAME (some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    caller = args.caller or variable(MEMORY_CALLER) or f"cli:{user}"
    session = args.session or variable(MEMORY_SESSION) or f"ppid:{os.getppid()}"
    return Identity(caller=caller, session=session)


def _memory_collection(engine: Engine, chosen: str | None) -> str | None:
    """The collection named, or the only memory-managed one when none is named."""
    if chosen:
        return chosen
    managed = [c.name for c in engine.config.collections if c.memory_managed]
    return managed[0] if len(managed) == 1 else None


def cmd_recall(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.memory.recall(
            query=args.query,
            collection=_memory_collection(engine, args.collection),
            scopes=args.scope,
            identity=_memory_identity(args),
            max_facts=args.max_facts,
            max_tokens=args.max_tokens,
        )
    if args.json:
        emit_json(result)
        return EXIT_OK
    if not result["facts"]:
        print(result.get("hint", "No facts in scope"))
    for fact in result["facts"]:
        print(f"- {fact['text']}\n  {fact['uri']}  hash {fact['contentHash']}")
    return EXIT_OK


def cmd_remember(args: argparse.Namespace) -> int:
    decision = _remember_decision(args)
    receipt = _read_receipt(args.receipt) if args.receipt else None
    text = args.text if args.text != "-" else sys.stdin.read()
    with open_engine(args) as engine:
        result = engine.memory.remember(
            text=text,
            collection=_memory_collection(engine, args.collection),
            scopes=args.scope,
            identity=_memory_identity(args),
            decision=decision,
            predecessor_uri=args.supersede or args.predecessor,
            predecessor_hash=args.predecessor_hash,
            receipt=receipt,
            derived_from=args.derived_from or [],
            source=args.source,
        )
    if args.json:
        emit_json(result)
        return EXIT_OK
    outcome = result["outcome"]
    if outcome == "candidates":
        for c in result["candidates"]:
            print(f"[{c['match']} {c['similarity']:.2f}] {c['text']}")
            print(f"  {c['uri']}  hash {c['contentHash']}")
        similar = (
            "No similar facts in scope"
            if not result["candidates"]
            else f"{plural(len(result['candidates']), 'similar fact')} above"
        )
        render.note(
            f"Nothing stored: {similar}. Store it with --add, or replace one with "
            "--supersede URI --predecessor-hash HASH."
        )
    elif outcome == "existing":
        print(f"Already stored (nothing written): {result['record']['uri']}")
    else:
        print(f"{outcome}: {result['record']['uri']}")
    return EXIT_OK


def _remember_decision(args: argparse.Namespace) -> str | None:
    """``--add`` / ``--supersede URI`` / ``--decision``; contradicting flags are refused."""
    chosen = {args.decision} if args.decision is not None else set()
    if args.add:
        chosen.add("add")
    if args.supersede:
        chosen.add("supersede")
    if len(chosen) > 1:
        raise GnoError(
            "MEMORY_DECISION_INVALID",
            f"Conflicting decisions: {', '.join(sorted(chosen))} (pick one)",
        )
    decision = chosen.pop() if chosen else None
    # The engine names its own parameters; here the missing piece is a flag.
    if decision == "supersede" and not (args.supersede or args.predecessor):
        raise GnoError(
            "MEMORY_PREDECESSOR_REQUIRED",
            "--decision supersede needs --supersede URI and --predecessor-hash HASH "
            "(both printed by gno-trio recall)",
        )
    if decision == "supersede" and not args.predecessor_hash:
        raise GnoError(
            "MEMORY_PREDECESSOR_REQUIRED",
            "--supersede needs --predecessor-hash HASH: the hash gno-trio recall printed "
            "for the fact being replaced",
        )
    return decision


def _read_receipt(path: str) -> Any:
    """A receipt file: the receipt object itself, or a whole ``recall --json`` answer."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GnoError("INVALID_INPUT", f"Cannot read receipt {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("receipt"), dict) and "facts" in data:
        return data["receipt"]
    return data


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    identity = argparse.ArgumentParser(add_help=False)
    identity.add_argument("-c", "--collection", help="memory-managed collection")
    identity.add_argument("--scope", action="append", default=[], help="scope (repeat)")
    identity.add_argument("--caller", help="caller identity (default cli:<user>)")
    identity.add_argument("--session", help="session identity (default ppid:<pid>)")

    p = sub.add_parser("recall", parents=[common, identity])
    p.add_argument("query", help="what the facts should be about")
    p.add_argument(
        "--max-facts",
        type=int,
        default=RECALL_DEFAULT_MAX_FACTS,
        help=f"most facts to return (default {RECALL_DEFAULT_MAX_FACTS})",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=RECALL_DEFAULT_MAX_TOKENS,
        help=f"token budget of the returned facts (default {RECALL_DEFAULT_MAX_TOKENS})",
    )
    p.set_defaults(handler=cmd_recall)

    p = sub.add_parser("remember", parents=[common, identity])
    p.add_argument("text", help="the fact, or - to read it from stdin")
    p.add_argument("--add", action="store_true", help="store it (decision add)")
    p.add_argument("--supersede", metavar="URI", help="replace the fact at URI")
    p.add_argument("--predecessor-hash", help="contentHash of the fact being replaced")
    p.add_argument("--decision", help="add or supersede")
    p.add_argument("--predecessor", metavar="URI", help="same as --supersede URI")
    p.add_argument("--receipt", metavar="FILE", help="recall receipt JSON (fences replays)")
    p.add_argument("--derived-from", action="append", help="declared origin (repeat)")
    p.add_argument("--source", help="free-text evidence for the fact")
    p.set_defaults(handler=cmd_remember)


__all__ = ["add_parsers"]
