"""What the folder watcher of one resident knows, as ``status`` reports it.

The report carries GNO's ``background.watcher`` fields (expected, active,
failed, queued and syncing collections, the last event and sync) and this
watcher's own counters: events seen and ignored, paths pending, syncs run,
collections that poll and why, and the last errors of watch-triggered syncs
(bounded), so a file that could not be read is listed with its reason.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.engine import now_iso

RECENT_ERRORS: Final = 20
"""Errors of watch-triggered syncs kept for ``status`` (the newest)."""


@dataclass(eq=False)
class WatchBook:
    """Mutable state of one resident's watcher."""

    role: str = "starting"
    """``watching`` (holds the watch lease), ``following`` (another resident watches) or ``off``."""
    expected: list[str] = field(default_factory=list)
    active: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)
    polling: dict[str, str] = field(default_factory=dict)
    pending: dict[str, set[str]] = field(default_factory=dict)
    syncing: str | None = None
    events_seen: int = 0
    events_ignored: int = 0
    syncs: int = 0
    idle_batches: int = 0
    """Batches of changes that needed no sync (files gno-trio wrote and indexed itself)."""
    full_syncs: int = 0
    last_event_at: str | None = None
    last_sync_at: str | None = None
    last_sync: dict[str, Any] | None = None
    errors: deque[dict[str, str]] = field(default_factory=lambda: deque(maxlen=RECENT_ERRORS))

    def error(self, collection: str, rel_path: str, code: str, message: str) -> None:
        self.errors.append(
            {
                "collection": collection,
                "relPath": rel_path,
                "code": code,
                "message": message,
                "at": now_iso(),
            }
        )

    def report(self) -> dict[str, Any]:
        """GNO's ``background.watcher`` fields, then this watcher's own."""
        return {
            "expectedCollections": list(self.expected),
            "activeCollections": sorted(self.active),
            "failedCollections": [
                {"collection": name, "reason": reason}
                for name, reason in sorted(self.failed.items())
            ],
            "queuedCollections": sorted(name for name, paths in self.pending.items() if paths),
            "syncingCollections": [self.syncing] if self.syncing else [],
            "lastEventAt": self.last_event_at,
            "lastSyncAt": self.last_sync_at,
            "role": self.role,
            "pid": os.getpid(),
            "pollingCollections": [
                {"collection": name, "reason": reason}
                for name, reason in sorted(self.polling.items())
            ],
            "eventsSeen": self.events_seen,
            "eventsIgnored": self.events_ignored,
            "pendingPaths": sum(len(paths) for paths in self.pending.values()),
            "syncs": self.syncs,
            "batchesWithoutWork": self.idle_batches,
            "fullSyncs": self.full_syncs,
            "lastSync": self.last_sync,
            "errors": list(self.errors),
        }


__all__ = ["WatchBook"]
