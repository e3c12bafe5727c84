"""Counters of what the transport did, for the metrics endpoint."""

from __future__ import annotations

from collections import Counter
from typing import Any


class TransportMetrics:
    """Counters of what the transport did; no caller, path or content is recorded."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.refusals: Counter[str] = Counter()
        self.sessions: Counter[str] = Counter()
        self.streams: Counter[str] = Counter()

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": dict(sorted(self.requests.items())),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "refusals": dict(sorted(self.refusals.items())),
            "sessions": dict(sorted(self.sessions.items())),
            "streams": dict(sorted(self.streams.items())),
        }


__all__ = ["TransportMetrics"]
