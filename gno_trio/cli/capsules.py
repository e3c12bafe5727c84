"""``context build`` and ``context verify``: Context Capsules on the command line.

``build`` compiles one budgeted evidence Capsule for a goal (the engine's
``context``, as ``gno_context`` does) and prints it as Markdown, or as the
canonical JSON with ``--json``; ``--output FILE`` writes it to a file instead
(atomically; nothing on stdout). ``verify FILE|-`` checks a saved JSON
Capsule against the index as ``gno_context_verify`` does, without changing
anything. Nothing is ever stored implicitly.

Errors use GNO's Context codes (``invalid_goal``, ``invalid_budget`` ...):
a bad request exits 1, a retrieval or store failure exits 2, and no partial
Capsule is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, emit_json, open_engine, with_flag_names
from gno_trio.cli.retrieval import parse_query_modes, scope_of
from gno_trio.cli.tracing import print_receipt
from gno_trio.engine import ContextRequest, public_code, write_file_atomically
from gno_trio.errors import GnoError
from gno_trio.views.capsules import capsule_markdown, verification_markdown

MAX_PROJECT_ROOTS: Final = 16


def _request(args: argparse.Namespace) -> ContextRequest:
    if args.no_project_affinity and args.project_root:
        raise GnoError(
            "invalid_input", "--no-project-affinity cannot be combined with --project-root"
        )
    if len(set(args.project_root or ())) > MAX_PROJECT_ROOTS:
        raise GnoError("invalid_input", f"at most {MAX_PROJECT_ROOTS} --project-root values")
    depth = "fast" if args.fast else "thorough" if args.thorough else "balanced"
    return ContextRequest(
        goal=args.goal,
        budget_tokens=args.budget,
        budget_bytes=args.bytes,
        query=args.query,
        scope=scope_of(args),
        query_modes=parse_query_modes(args.query_mode),
        graph=args.graph,
        no_rerank=args.no_rerank,
        limit=args.limit,
        candidate_limit=args.candidate_limit,
        depth_policy=depth,
    )


def _output_path(args: argparse.Namespace) -> Path | None:
    """``--output``, checked before any work: its folder must exist, it must not be one."""
    if not args.output:
        return None
    path = Path(args.output).expanduser()
    if path.is_dir():
        raise GnoError("invalid_input", f"--output {path} is a directory")
    if not path.parent.is_dir():
        raise GnoError("invalid_input", f"--output: folder {path.parent} does not exist")
    return path.resolve()


def _deliver(args: argparse.Namespace, payload: dict[str, Any], markdown: str, what: str) -> None:
    """Print ``payload`` (JSON) or its Markdown, or write it to ``--output``."""
    text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n" if args.json else markdown
    path = _output_path(args)
    if path is None:
        if args.json:
            emit_json(payload)
        else:
            sys.stdout.write(markdown)
        return
    try:
        write_file_atomically(path, text)
    except OSError as exc:
        raise GnoError("runtime_error", f"Cannot write {path}: {exc.strerror or exc}") from exc
    render.note(f"Wrote {what} to {path}")


_FLAGS: Final = {
    "budgetTokens": "--budget",
    "budgetBytes": "--bytes",
    "candidateLimit": "--candidate-limit",
    "uriPrefix": "--uri-prefix",
    "queryModes": "--query-mode",
    "minScore": "--min-score",
    "tagsAll": "--tags-all",
    "tagsAny": "--tags-any",
    "collections": "--collection",
    "categories": "--category",
}
"""``gno_context``'s argument names, and the flags of ``context build`` that set them."""


def _context_error(error: GnoError) -> GnoError:
    """The engine's error under its public Context code, naming this command's flags."""
    return GnoError(public_code(error.code), with_flag_names(error.message, _FLAGS))


def cmd_build(args: argparse.Namespace) -> int:
    _output_path(args)  # a bad path is refused before the index is read
    request = _request(args)
    with open_engine(args, create=False) as engine:
        try:
            traced = engine.retrieval.capsule(request)
        except GnoError as error:
            raise _context_error(error) from None
    capsule = traced.result
    _deliver(args, capsule, capsule_markdown(capsule), f"Capsule {capsule['capsuleId']}")
    print_receipt(traced.trace_id)
    return EXIT_OK


def _read_capsule(source: str) -> dict[str, Any]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).expanduser().read_text("utf-8")
    except FileNotFoundError:
        raise GnoError("invalid_input", f"No such file: {source}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GnoError("invalid_input", f"Cannot read {source}: {exc}") from None
    try:
        capsule = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GnoError("invalid_input", f"{source} is not JSON: {exc}") from None
    if not isinstance(capsule, dict):
        raise GnoError("invalid_input", f"{source} does not hold a Capsule object")
    return capsule


def cmd_verify(args: argparse.Namespace) -> int:
    _output_path(args)
    capsule = _read_capsule(args.file)
    scope = capsule.get("scope")
    capsule_index = scope.get("indexName") if isinstance(scope, dict) else None
    if isinstance(capsule_index, str) and capsule_index:
        if args.index not in ("default", capsule_index):
            raise GnoError(
                "invalid_input",
                f"The Capsule belongs to index {capsule_index!r}, not {args.index!r}",
            )
        args.index = capsule_index  # the Capsule's scope picks the index
    with open_engine(args, create=False) as engine:
        try:
            receipt = engine.capsules.verify(capsule)
        except GnoError as error:
            raise _context_error(error) from None
    _deliver(args, receipt, verification_markdown(receipt) + "\n", "the verification receipt")
    return EXIT_OK


def add_actions(actions: Any, common: argparse.ArgumentParser) -> None:
    """``build`` and ``verify`` under ``context`` (beside add, list, check and rm)."""
    q = actions.add_parser(
        "build",
        parents=[common],
        help="compile a budgeted evidence Capsule for a goal (Markdown, or --json)",
    )
    q.add_argument("goal", help="what the evidence is for; also the search text unless --query")
    q.add_argument(
        "--budget", type=int, required=True, help="token ceiling for the whole Capsule JSON"
    )
    q.add_argument("--bytes", type=int, help="byte ceiling (default: 4 x --budget)")
    q.add_argument("--query", help="search text to use instead of the goal")
    q.add_argument(
        "-c",
        "--collection",
        action="append",
        help="draw evidence only from this collection (repeatable; each must exist)",
    )
    q.add_argument("--uri-prefix", help="only documents under this gno://COLLECTION/ prefix")
    q.add_argument(
        "--query-mode",
        action="append",
        metavar="MODE:TEXT",
        help="term:<words>, intent:<context> or hyde:<passage> (repeatable)",
    )
    q.add_argument("--tags-all", action="append", help="documents with ALL of these tags")
    q.add_argument("--tags-any", action="append", help="documents with ANY of these tags")
    q.add_argument("--category", action="append", help="documents of these categories")
    q.add_argument("--author", help="documents whose author contains this")
    q.add_argument("--lang", help="documents in this language (BCP-47 hint)")
    q.add_argument("--intent", help="background that disambiguates the goal; not searched")
    q.add_argument("--exclude", action="append", help="leave out documents with these words")
    q.add_argument("--min-score", type=float, help="drop hits scoring below this (0-1)")
    q.add_argument("--since", help="modified on or after (ISO date/time or relative)")
    q.add_argument("--until", help="modified on or before (ISO date/time or relative)")
    graph = q.add_mutually_exclusive_group()
    graph.add_argument(
        "--graph", dest="graph", action="store_const", const=True, help="ask for graph expansion"
    )
    graph.add_argument(
        "--no-graph", dest="graph", action="store_const", const=False, help="no graph expansion"
    )
    depth = q.add_mutually_exclusive_group()
    depth.add_argument("--fast", action="store_true", help="one passage per document, no graph")
    depth.add_argument(
        "--thorough", action="store_true", help="three passages per document, a larger pool"
    )
    q.add_argument("--no-rerank", action="store_true", help="do not ask for reranking")
    q.add_argument("-n", "--limit", type=int, help="documents admitted (default 20)")
    q.add_argument(
        "--candidate-limit", type=int, help="passages considered for packing (default 40)"
    )
    q.add_argument(
        "--project-root",
        action="append",
        metavar="PATH",
        help="accepted for GNO's scripts (at most 16): project affinity is not applied here",
    )
    q.add_argument(
        "--no-project-affinity",
        action="store_true",
        help="accepted for GNO's scripts: project affinity is not applied here",
    )
    q.add_argument("--output", metavar="FILE", help="write the Capsule here instead of stdout")
    render.add_format_flags(q, render.MD)
    q.set_defaults(handler=cmd_build)

    q = actions.add_parser(
        "verify",
        parents=[common],
        help="check a saved JSON Capsule against the index (changes nothing)",
    )
    q.add_argument("file", metavar="FILE|-", help="the Capsule saved with --json (- for stdin)")
    q.add_argument("--output", metavar="FILE", help="write the receipt here instead of stdout")
    render.add_format_flags(q, render.MD)
    q.set_defaults(handler=cmd_verify)


__all__ = ["add_actions"]
