"""Reusable structured-concurrency pieces for trio servers (no product knowledge).

* :class:`AdmissionGate` -- N active requests, M queued, the rest refused.
* :class:`ByteBudget` -- bytes waiting in a queue, bounded in total size.
* :class:`FixedWindowRateLimiter` -- per-key request budget with bounded memory.
* :class:`StaggeredLimiter` -- worker-thread tokens, the second and later ones opened
  only behind a holder that has run for a while (work that contends for the GIL).
* :func:`open_supervisor` / :class:`Supervisor` -- long-lived tasks whose crashes
  are contained, with per-task handles and periodic jobs.
* :class:`GracefulDrain` / :func:`drain_and_shutdown` -- stop on SIGINT/SIGTERM.
"""

from nurseries.admission import (
    AdmissionGate,
    AdmissionRefused,
    AdmissionStats,
    Draining,
    Overloaded,
)
from nurseries.bytebudget import ByteBudget
from nurseries.drain import DrainOutcome, GracefulDrain, SupportsDrain, drain_and_shutdown
from nurseries.ratelimit import FixedWindowRateLimiter, RateDecision
from nurseries.stagger import StaggeredLimiter, StaggerStatistics
from nurseries.supervisor import CrashPolicy, Supervisor, TaskHandle, open_supervisor

__all__ = [
    "AdmissionGate",
    "AdmissionRefused",
    "AdmissionStats",
    "ByteBudget",
    "CrashPolicy",
    "DrainOutcome",
    "Draining",
    "FixedWindowRateLimiter",
    "GracefulDrain",
    "Overloaded",
    "RateDecision",
    "StaggerStatistics",
    "StaggeredLimiter",
    "Supervisor",
    "SupportsDrain",
    "TaskHandle",
    "drain_and_shutdown",
    "open_supervisor",
]
