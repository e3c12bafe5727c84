"""Where a BM25 search's CPU time goes, phase by phase (``bench_engine.py --phases``).

Wraps the engine's own steps (document ranking, choosing each hit's best
chunk, cutting the snippets) with thread-CPU timers for the length of one
benchmark process, so the slowest searches can be told apart by what made
them slow. A step renamed in the engine fails here loudly.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from _common import percentile

from gno_trio.engine.search import anchors, docrankers, lexical, memoryanchors

PHASES = ("rank", "best chunk", "snippets", "rest")
_spent: dict[str, float] = {}


def _timed(label: str, step: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(step)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return step(*args, **kwargs)
        finally:
            _spent[label] = _spent.get(label, 0.0) + time.thread_time() - started

    return timed


def install() -> None:
    """Time the steps from now on (the anchors step is the best chunk plus the snippets)."""
    for ranker in (docrankers.Fts5Ranker, docrankers.MemoryRanker, docrankers.TantivyDocuments):
        ranker.rank = _timed("rank", ranker.rank)  # type: ignore[method-assign]
    lexical.anchors_for = _timed("anchors", lexical.anchors_for)
    anchors._chosen_chunks = _timed("best chunk", anchors._chosen_chunks)
    memoryanchors._best = _timed("best chunk", memoryanchors._best)


def start() -> None:
    _spent.clear()


def split(total_s: float) -> dict[str, float]:
    """The last search's milliseconds per phase (``total_s``: its CPU time)."""
    best = _spent.get("best chunk", 0.0)
    rank = _spent.get("rank", 0.0)
    cut = _spent.get("anchors", 0.0) - best
    return {
        "rank": rank * 1000,
        "best chunk": best * 1000,
        "snippets": cut * 1000,
        "rest": (total_s - rank - best - cut) * 1000,
    }


def report(rows: Sequence[tuple[str, str, float, dict[str, float]]], slowest: int = 12) -> None:
    """Print mean ms per phase over all searches and over the slowest 5 %, then the
    slowest searches one by one. ``rows``: (kind, query, CPU ms, phases)."""
    ordered = sorted(rows, key=lambda row: row[2])
    tail = ordered[-max(1, len(ordered) // 20) :]
    cpu = [row[2] for row in ordered]
    print(
        f"CPU per search: p50 {percentile(cpu, 50):.3f} p95 {percentile(cpu, 95):.3f} "
        f"p99 {percentile(cpu, 99):.3f} ms"
    )
    for label, chosen in (("all", ordered), (f"slowest {len(tail)}", tail)):
        means = "  ".join(
            f"{phase} {statistics.fmean(row[3][phase] for row in chosen):.3f}" for phase in PHASES
        )
        total = statistics.fmean(row[2] for row in chosen)
        print(f"  mean ms, {label:<11} total {total:.3f}  {means}")
    for kind, query, spent, phases in ordered[-slowest:]:
        parts = " ".join(f"{phase}={phases[phase]:.2f}" for phase in PHASES)
        print(f"  {spent:6.2f} ms  {parts}  {kind}: {query!r}")
