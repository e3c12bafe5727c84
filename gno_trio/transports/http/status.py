"""The redacted lifecycle snapshot (``resident-status@1.0``) and the transport metrics.

Both are counts only: no paths, tokens, queries, content or caller identity.
The model loads and jobs are the serving process's, handed over by the app
it serves (the same counts ``gno_status`` reports); an app that counts none,
and the generations (which need a read of the index), report zeros.
"""

from __future__ import annotations

import os
import time
from typing import Any

from gno_trio.transports.http.state import GatewayState


def _admission_state(state: GatewayState) -> str:
    if state.shutdown_state == "none" and not state.capacity.draining:
        return "accepting"
    if state.capacity.stats().active:
        return "draining"
    return "closed"


def resident_status(state: GatewayState, sessions: int | None = None) -> dict[str, Any]:
    """The snapshot served at ``/api/resident/status`` (``sessions``: the live count, if read)."""
    capacity = state.capacity.stats()
    readers = state.readers
    limits = state.settings.limits
    snapshot: dict[str, Any] = {
        "schemaVersion": "1.0",
        "mode": state.settings.mode,
        "resident": True,
        "uptimeSeconds": int(time.monotonic() - state.started_at),
        "listenerPort": state.listener.port,
        "admission": {"state": _admission_state(state), "activeRequests": capacity.active},
        "shutdown": {"state": state.shutdown_state},
        "transport": {
            "activeRequests": capacity.active,
            "activeSessions": len(state.sessions) if sessions is None else sessions,
            "queuedRequests": capacity.queued,
            "maxConcurrentRequests": limits.max_concurrent_requests,
            "maxQueuedRequests": limits.max_queued_requests,
            "maxSessions": limits.max_sessions,
        },
        "readers": {"active": readers.active, "queued": 0, "limit": readers.limit, "maxQueued": 0},
        "models": {
            "activeLeases": 0,
            "leaseAcquisitions": 0,
            "leaseReleases": 0,
            "loadedModels": 0,
            "loadAttempts": 0,
            "loadSuccesses": 0,
            "loadFailures": 0,
            "inflightLoads": 0,
        },
        "jobs": {"active": 0, "recent": 0, "failed": 0},
        "generations": {"content": 0, "index": 0},
    }
    if state.app.lifecycle is not None:
        snapshot.update(state.app.lifecycle.counters())
    return snapshot


def transport_metrics(state: GatewayState, sessions: int) -> dict[str, Any]:
    """Counters served at ``/api/resident/metrics`` (``sessions``: the live session count)."""
    capacity = state.capacity.stats()
    snapshot = state.metrics.snapshot()
    snapshot["admission"] = {
        "active": capacity.active,
        "queued": capacity.queued,
        "admittedTotal": capacity.admitted_total,
        "refusedOverloaded": capacity.refused_overloaded,
        "refusedDraining": capacity.refused_draining,
        "peakActive": capacity.peak_active,
        "cancelledWhileQueued": capacity.cancelled_while_queued,
    }
    snapshot["activeSessions"] = sessions
    if state.worker is not None:
        snapshot["worker"] = {"index": state.worker.index, "pid": os.getpid()}
    return snapshot


__all__ = ["resident_status", "transport_metrics"]
