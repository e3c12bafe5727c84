"""The cycle collector's pace in a serving process.

CPython collects its youngest generation each time 700 more container
objects were made than freed, and the older ones every tenth time. A
request through a server makes dozens of short-lived containers (coroutines,
trio's cancel scopes and outcomes, header lists, the decoded JSON), nearly
all freed again by their reference counts, yet enough outlive the moment
that an answering gateway ran a young collection every dozen requests and a
full one every few seconds: 48 µs of collector work per ``tools/call echo``
at 32 connections, a tenth of the request's CPU time. A serving process
therefore collects ten times less often (:data:`SERVING_THRESHOLDS`): the
same garbage is found, later, and at most a few thousand objects more wait
for it. When the server falls idle it collects its young generations at
once (:func:`collect_young`), so nothing waits out an idle period.

Only long-running servers (``mcp``, ``serve``, ``daemon`` and their
workers) change the pace; one-shot commands keep CPython's own.
"""

from __future__ import annotations

import gc
from typing import Final

SERVING_THRESHOLDS: Final = (7000, 10, 10)
"""``gc.set_threshold`` of a serving process: ten times CPython's 700 for the young
generation, the older generations' ratios unchanged."""


def pace_for_serving() -> None:
    """Set this process's collector to a serving process's pace (call once, at startup)."""
    gc.set_threshold(*SERVING_THRESHOLDS)


def collect_young() -> None:
    """Collect the two younger generations now: what the last burst of work left in
    reference cycles, without walking the whole heap."""
    gc.collect(1)


__all__ = ["SERVING_THRESHOLDS", "collect_young", "pace_for_serving"]
