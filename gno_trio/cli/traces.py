"""``trace list|show|label|export|delete|purge``: the stored retrieval traces.

Thin over the engine's trace management, which answers the same as the
``gno_trace_*`` tools (and their text, the engine's).
It works whether or not recording is on, so receipts stay inspectable and
deletable after tracing is turned off. ``purge`` deletes every trace and
needs the global ``--yes``, as GNO's does.
"""

from __future__ import annotations

import argparse
from typing import Any

from gno_trio.cli.common import (
    Subparsers,
    action_command,
    command_line,
    open_engine,
    print_result,
)
from gno_trio.engine import TraceJudgment
from gno_trio.errors import GnoError
from gno_trio.views.management import (
    trace_delete_text,
    trace_export_text,
    trace_label_text,
    trace_list_text,
    trace_purge_text,
    trace_show_text,
)

_LABELS = {
    "relevant": "relevant",
    "irrelevant": "irrelevant",
    "missing-expected": "missing_expected",
}


def _judgment(args: argparse.Namespace) -> TraceJudgment:
    return TraceJudgment(
        label=_LABELS[args.label],
        target_ref=args.target,
        target_kind=args.target_kind,
        start_line=args.from_line,
        end_line=args.to_line,
        source_hash=args.source_hash,
        docid=args.docid,
        idempotency_key=args.idempotency_key,
    )


def cmd_trace(args: argparse.Namespace) -> int:
    action = args.trace_command
    if action == "purge" and not args.yes:
        raise GnoError(
            "VALIDATION",
            "purge deletes every retrieval trace; run it as "
            f"`{command_line(args, '--yes', 'trace', 'purge')}`",
        )
    if action == "export" and args.format != "agentic-receipt":
        raise GnoError(
            "VALIDATION", f"--format {args.format} is not available: use agentic-receipt"
        )
    with open_engine(args, create=False) as engine:
        result: Any
        if action == "list":
            result, text = engine.traces.list(limit=args.limit, cursor=args.cursor), trace_list_text
        elif action == "show":
            result = engine.traces.show(args.trace_id, detail_limit=args.detail_limit)
            text = trace_show_text
        elif action == "label":
            result, text = engine.traces.label(args.trace_id, _judgment(args)), trace_label_text
        elif action == "export":
            result, text = engine.traces.export(args.trace_ids), trace_export_text
        elif action == "delete":
            result, text = engine.traces.delete(args.trace_id), trace_delete_text
        else:
            result, text = engine.traces.purge(), trace_purge_text
    return print_result(args, result, text)


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    actions = action_command(
        sub,
        "trace",
        common,
        handler=cmd_trace,
        dest="trace_command",
        description="Retrieval traces are recorded when retrievalTraces.enabled is on "
        "(search, vsearch, query and context build print 'Trace: ID'); these commands work "
        "either way.",
    )
    q = actions.add_parser("list", parents=[common], help="traces, newest first (no query text)")
    q.add_argument("-n", "--limit", type=int, default=50, help="traces per page, 1-1000 (50)")
    q.add_argument("--cursor", help="the cursor a previous page printed")
    q = actions.add_parser("show", parents=[common], help="one trace's runs, events, judgments")
    q.add_argument("trace_id", metavar="TRACE_ID", help="the id a 'Trace:' line printed")
    q.add_argument(
        "--detail-limit", type=int, default=500, help="records shown per section, 1-5000 (500)"
    )
    q = actions.add_parser("label", parents=[common], help="record one explicit judgment")
    q.add_argument("trace_id", metavar="TRACE_ID", help="the trace judged")
    q.add_argument(
        "--label",
        required=True,
        choices=sorted(_LABELS),
        help="relevant / irrelevant (recorded evidence) or missing-expected (a miss)",
    )
    q.add_argument(
        "--target",
        required=True,
        help="the document: gno:// URI, #docid or collection/path (missing-expected: a URI, "
        "docid or source hash)",
    )
    q.add_argument(
        "--target-kind",
        choices=("document", "chunk", "span"),
        default="document",
        help="judge the whole document (default), one chunk or a line span",
    )
    q.add_argument("--from-line", type=int, help="first line of a span")
    q.add_argument("--to-line", type=int, help="last line of a span")
    q.add_argument("--source-hash", help="SHA-256 of the source file")
    q.add_argument("--docid", help="docid of the document")
    q.add_argument("--idempotency-key", help="retry-safe key: a repeat records nothing new")
    q = actions.add_parser("export", parents=[common], help="finished traces as one receipt")
    q.add_argument("trace_ids", nargs="+", metavar="TRACE_ID", help="finished traces to export")
    q.add_argument(
        "--format",
        default="agentic-receipt",
        help="agentic-receipt (the one format available here)",
    )
    q = actions.add_parser("delete", parents=[common], help="delete one trace and its records")
    q.add_argument("trace_id", metavar="TRACE_ID", help="the trace to delete")
    actions.add_parser(
        "purge", parents=[common], help="delete every trace (needs the global --yes)"
    )


__all__ = ["add_parsers"]
