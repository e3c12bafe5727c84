"""``audit [links|provenance|freshness|all]``: the read-only knowledge-integrity audit.

Thin over the engine's ``audit`` (the ``gno_audit`` answer and text). It
changes nothing. GNO's exit codes for it: 0 complete and clean, 4 complete
with findings, 5 partial or inconclusive evidence (a rule unavailable or
inconclusive, the index changing during the audit, or Ctrl-C, which returns
the report gathered so far), 1 invalid input, 2 runtime failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Final

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, emit_json, open_engine, with_flag_names
from gno_trio.engine import Engine, write_file_atomically
from gno_trio.errors import GnoError
from gno_trio.views.management import audit_text

EXIT_FINDINGS: Final = 4
EXIT_INCONCLUSIVE: Final = 5
CATEGORIES: Final = ("links", "provenance", "freshness", "all")
_UNSURE: Final = frozenset({"unavailable", "inconclusive"})
_FLAGS: Final = {
    "orphanRoots": "--orphan-root",
    "orphanIgnorePrefixes": "--orphan-ignore-prefix",
    "maxAgeDays": "--max-age-days",
    "maxFindings": "--max-findings",
}
"""``gno_audit``'s argument names in the engine's words, and this command's flags."""


@contextlib.contextmanager
def _interruptible() -> Iterator[list[bool]]:
    """Ctrl-C sets a flag the audit checks between rules, instead of killing the report."""
    stopped = [False]

    def stop(signum: int, frame: FrameType | None) -> None:
        stopped[0] = True

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield stopped
    finally:
        signal.signal(signal.SIGINT, previous)


def exit_status(report: dict[str, Any]) -> int:
    if report["status"] != "complete" or any(r["status"] in _UNSURE for r in report["rules"]):
        return EXIT_INCONCLUSIVE
    return EXIT_FINDINGS if report["counts"]["findings"]["total"] else EXIT_OK


def cmd_audit(args: argparse.Namespace) -> int:
    output = Path(args.output).expanduser() if args.output else None
    if output is not None and (output.is_dir() or not output.parent.is_dir()):
        raise GnoError("INVALID_INPUT", f"--output {output}: not a file in an existing folder")
    with open_engine(args, create=False) as engine, _interruptible() as stopped:
        try:
            report = _run(engine, args, stopped)
        except GnoError as error:
            raise GnoError(error.code, with_flag_names(error.message, _FLAGS)) from None
    text = with_flag_names(audit_text(report), _FLAGS)
    if output is not None:
        body = json.dumps(report, ensure_ascii=False, indent=2) if args.json else text
        try:
            write_file_atomically(output, body + "\n", new_mode=0o600)
        except OSError as exc:
            raise GnoError("RUNTIME", f"Cannot write {output}: {exc.strerror or exc}") from exc
        render.note(f"Wrote the audit report to {output}")
    elif args.json:
        emit_json(report)
    else:
        print(text)
    return exit_status(report)


def _run(engine: Engine, args: argparse.Namespace, stopped: list[bool]) -> dict[str, Any]:
    return engine.index.audit(
        category=args.category,
        collections=args.collection or (),
        paths=args.path or (),
        tags=args.tag or (),
        max_findings=args.max_findings,
        max_age_days=args.max_age_days,
        orphan_roots=args.orphan_root or (),
        orphan_ignore_prefixes=args.orphan_ignore_prefix or (),
        should_stop=lambda: stopped[0],
    )


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "audit",
        parents=[common],
        description="Exit 0: complete and clean; 4: findings; 5: partial or inconclusive "
        "(Ctrl-C returns what was gathered); 1: invalid input; 2: failure.",
    )
    p.add_argument(
        "category",
        nargs="?",
        default="all",
        choices=CATEGORIES,
        help="which checks to run (default all)",
    )
    p.add_argument("--collection", action="append", help="only this collection (repeatable)")
    p.add_argument(
        "--path", action="append", help="only documents under this path or gno:// prefix"
    )
    p.add_argument("--tag", action="append", help="only documents with this tag (repeatable)")
    p.add_argument(
        "--max-findings", type=int, default=100, help="findings shown, 1-1000 (totals stay exact)"
    )
    p.add_argument("--max-age-days", type=int, help="flag notes not modified for this many days")
    p.add_argument(
        "--orphan-root",
        action="append",
        help="a note every other note should be reachable from by links (repeatable)",
    )
    p.add_argument(
        "--orphan-ignore-prefix",
        action="append",
        help="gno:// prefix exempt from the orphan check (repeatable)",
    )
    p.add_argument(
        "--no-progress", action="store_true", help="accepted: no progress is drawn anyway"
    )
    p.add_argument("--output", metavar="FILE", help="write the report here (private file)")
    p.set_defaults(handler=cmd_audit)


__all__ = ["add_parsers", "exit_status"]
