"""``ask``: a question answered from the index, retrieval only, answered, or answered and verified.

A thin surface over :meth:`Engine.ask <gno_trio.engine.Engine.ask>`, the
same method ``gno_ask`` calls: ``--verify`` gives the answer only when every
claim is supported by a closed Context Capsule; ``--answer`` drafts one
without checking it; neither lists the retrieved sources.
"""

from __future__ import annotations

import argparse

from gno_trio.cli.common import EXIT_OK, Subparsers, emit_json, open_engine, split_list
from gno_trio.engine import AskRequest, ask_summary
from gno_trio.errors import GnoError


def _query_modes(values: list[str] | None) -> tuple[tuple[str, str], ...]:
    modes = []
    for value in values or ():
        mode, sep, text = value.partition(":")
        if not sep or mode not in ("term", "intent", "hyde") or not text.strip():
            raise GnoError(
                "INVALID_INPUT", f"--query-mode takes term:, intent: or hyde:<text>, not {value!r}"
            )
        modes.append((mode, text.strip()))
    return tuple(modes)


def cmd_ask(args: argparse.Namespace) -> int:
    if args.verify and args.no_answer:
        raise GnoError(
            "INVALID_INPUT", "--verify generates an answer; it cannot go with --no-answer"
        )
    answer = (args.answer or args.verify) and not args.no_answer
    request = AskRequest(
        query=args.query,
        verify=args.verify,
        answer=answer,
        collection=args.collection,
        limit=args.limit,
        min_score=args.min_score,
        lang=args.lang,
        intent=args.intent,
        candidate_limit=args.candidate_limit,
        exclude=split_list(args.exclude),
        query_modes=_query_modes(args.query_mode),
        since=args.since,
        until=args.until,
        categories=split_list(args.category),
        author=args.author,
        graph=args.graph,
        no_rerank=args.no_rerank,
        explain=args.explain,
        max_answer_tokens=args.max_answer_tokens,
        context_budget_tokens=args.context_budget_tokens,
        context_budget_bytes=args.context_budget_bytes,
    )
    with open_engine(args, create=False) as engine:
        outcome = engine.ask(request)
    if args.json:
        emit_json(outcome.result)
    else:
        print(ask_summary(outcome, markdown=args.md, show_sources=args.show_sources))
    return EXIT_OK


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ask", parents=[common], help="answer a question with citations")
    p.add_argument("query")
    p.add_argument("-n", "--limit", type=int, default=5)
    p.add_argument("-c", "--collection")
    p.add_argument("--lang")
    p.add_argument("--since")
    p.add_argument("--until")
    p.add_argument("--category", action="append")
    p.add_argument("--author")
    p.add_argument("--intent")
    p.add_argument("--exclude", action="append")
    p.add_argument("--query-mode", action="append", metavar="MODE:TEXT")
    p.add_argument("-C", "--candidate-limit", type=int)
    p.add_argument("--answer", action="store_true", help="draft a short grounded answer")
    p.add_argument("--verify", action="store_true", help="verify every claim or abstain")
    p.add_argument("--no-answer", action="store_true", help="retrieval only")
    p.add_argument("--max-answer-tokens", type=int)
    p.add_argument("--context-budget-tokens", type=int)
    p.add_argument("--context-budget-bytes", type=int)
    p.add_argument("--min-score", type=float)
    p.add_argument("--graph", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--no-expand", action="store_true", help="no query expansion (none runs here)")
    p.add_argument("--no-rerank", action="store_true")
    p.add_argument("--explain", action="store_true")
    p.add_argument("--show-sources", action="store_true")
    p.add_argument("--md", action="store_true", help="Markdown output")
    p.set_defaults(handler=cmd_ask)


__all__ = ["add_parsers"]
