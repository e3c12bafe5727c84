"""``ask``: a question answered from the index, retrieval only, answered, or answered and verified.

A thin surface over :meth:`engine.answers.ask <gno_trio.engine.ask.face.AskFace.ask>`, the
same method ``gno_ask`` calls: ``--verify`` gives the answer only when every
claim is supported by a closed Context Capsule; ``--answer`` drafts one
without checking it; neither lists the retrieved sources.
"""

from __future__ import annotations

import argparse

from gno_trio.cli.common import EXIT_OK, Subparsers, emit_json, open_engine
from gno_trio.cli.retrieval import query_options, search_request
from gno_trio.engine import AskRequest
from gno_trio.errors import GnoError
from gno_trio.views.ask import ask_summary


def cmd_ask(args: argparse.Namespace) -> int:
    if args.verify and args.no_answer:
        raise GnoError(
            "INVALID_INPUT", "--verify generates an answer; it cannot go with --no-answer"
        )
    answer = (args.answer or args.verify) and not args.no_answer
    request = AskRequest(
        search=search_request(args),
        options=query_options(args),
        verify=args.verify,
        answer=answer,
        no_rerank=args.no_rerank,
        max_answer_tokens=args.max_answer_tokens,
        context_budget_tokens=args.context_budget_tokens,
        context_budget_bytes=args.context_budget_bytes,
    )
    with open_engine(args, create=False) as engine:
        outcome = engine.answers.ask(request)
    if args.json:
        emit_json(outcome.result)
    else:
        print(ask_summary(outcome, markdown=args.md, show_sources=args.show_sources))
    return EXIT_OK


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ask", parents=[common])
    p.add_argument("query", help="the question, in plain words")
    p.add_argument("-n", "--limit", type=int, default=5, help="most results to retrieve")
    p.add_argument("-c", "--collection", help="only this collection")
    p.add_argument("--lang", help="language hint (BCP-47)")
    p.add_argument("--since", help="modified on or after (ISO date/time, or 7d ...)")
    p.add_argument("--until", help="modified on or before (ISO date/time, or 7d ...)")
    p.add_argument("--category", action="append", help="only this category (repeatable)")
    p.add_argument("--author", help="only documents by this author")
    p.add_argument("--intent", help="background that disambiguates the question")
    p.add_argument("--exclude", action="append", help="drop documents with this term (repeatable)")
    p.add_argument(
        "--query-mode",
        action="append",
        metavar="MODE:TEXT",
        help="typed retrieval entry: term, intent or hyde (repeatable)",
    )
    p.add_argument("-C", "--candidate-limit", type=int, help="candidates that reach ranking")
    p.add_argument("--answer", action="store_true", help="draft a short grounded answer")
    p.add_argument("--verify", action="store_true", help="verify every claim or abstain")
    p.add_argument("--no-answer", action="store_true", help="retrieval only")
    p.add_argument("--max-answer-tokens", type=int, help="longest answer to draft")
    p.add_argument("--context-budget-tokens", type=int, help="evidence budget in tokens")
    p.add_argument("--context-budget-bytes", type=int, help="evidence budget in bytes")
    p.add_argument("--min-score", type=float, help="drop results scoring below this")
    p.add_argument(
        "--graph",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="graph expansion in retrieval (on by default)",
    )
    p.add_argument("--no-expand", action="store_true", help="no query expansion")
    p.add_argument("--no-rerank", action="store_true", help="keep retrieval order")
    p.add_argument("--explain", action="store_true", help="say how results were ranked")
    p.add_argument("--show-sources", action="store_true", help="list every cited source")
    p.add_argument("--md", action="store_true", help="Markdown output")
    # The shared request builders read these; Ask has no such flags (GNO's synopsis).
    p.set_defaults(handler=cmd_ask, fast=False, thorough=False)


__all__ = ["add_parsers"]
