"""Retrieval trace receipts on the command line (GNO's ``Trace: <traceId>`` line).

When ``retrievalTraces.enabled`` is on, the engine records a successful
``search``, ``vsearch``, ``query`` or ``context build`` as a trace
(``engine.retrieval.run``) and its id is printed on stderr after the result
(stdout, and every JSON or Markdown payload, stay exactly as they are).
``get --trace-id ID`` records the lines it returned against that trace, as
``gno_get``'s ``traceId`` does. With tracing off nothing is
recorded, no id is made and no line is printed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from gno_trio.cli import render
from gno_trio.engine import Engine


def print_receipt(trace_id: str | None) -> None:
    """GNO's ``Trace: <traceId>`` line on stderr, after the result.

    Nothing without an id, and nothing under ``--quiet``, which prints the result only.
    """
    if trace_id is not None and not render.quiet():
        print(f"Trace: {trace_id}", file=sys.stderr)


def trace_read(engine: Engine, trace_id: str | None, result: Mapping[str, Any]) -> None:
    """``get --trace-id``: record the returned lines against the trace, or say why not."""
    if trace_id is None:
        return
    if not engine.traces.enabled:
        render.note(
            f"Not recorded in trace {trace_id}: retrieval tracing is off "
            "(retrievalTraces.enabled in index.yml)"
        )
    elif not result.get("returnedLines"):
        render.note(
            f"Not recorded in trace {trace_id}: only a line range is recorded "
            "(give --from, -l or REF:LINE, within the document)"
        )
    elif engine.traces.record_read(trace_id, result):
        print_receipt(trace_id)
    else:
        render.note(f"Not recorded in trace {trace_id}: no open trace has that id")


__all__ = ["print_receipt", "trace_read"]
