"""This process's model loads, counted for ``status``.

Light on purpose (no numpy): ``gno_status`` reads the counts without
bringing in the model's machinery. The model is loaded at most once per
process, so the counts are process-wide.
"""

from __future__ import annotations

import threading
from typing import Final

_lock = threading.Lock()
_counts: dict[str, int] = {"attempts": 0, "successes": 0, "failures": 0, "inflight": 0}

STATUS_FIELDS: Final = (
    "activeLeases",
    "leaseAcquisitions",
    "leaseReleases",
    "loadedModels",
    "loadAttempts",
    "loadSuccesses",
    "loadFailures",
    "inflightLoads",
)
"""``resident-status@1.0``'s model counters (GNO's names)."""


def started() -> None:
    with _lock:
        _counts["attempts"] += 1
        _counts["inflight"] += 1


def ended(*, ok: bool) -> None:
    with _lock:
        _counts["inflight"] -= 1
        _counts["successes" if ok else "failures"] += 1


def status() -> dict[str, int]:
    """The model counters of ``resident-status@1.0`` for this process.

    A model stays loaded once it is (no leases: it is never unloaded), so
    ``loadedModels`` is the count of successful loads.
    """
    with _lock:
        counts = dict(_counts)
    figures = dict.fromkeys(STATUS_FIELDS, 0)
    figures.update(
        loadedModels=counts["successes"],
        loadAttempts=counts["attempts"],
        loadSuccesses=counts["successes"],
        loadFailures=counts["failures"],
        inflightLoads=counts["inflight"],
    )
    return figures


__all__ = ["STATUS_FIELDS", "ended", "started", "status"]
