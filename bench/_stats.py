"""Percentiles for the benches, in a module that imports nothing heavy.

``bench_scale.py`` measures the memory of its child processes; importing
``_common`` (which brings the MCP SDK and its models, about 30 MiB) there
would charge the SDK's import to gno-trio's indexing.
"""

from __future__ import annotations

from collections.abc import Sequence


def percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * pct / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
