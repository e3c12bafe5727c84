"""The 2026-07-28 listen streams one gateway holds: counted per identity, told when it stops."""

from __future__ import annotations

from collections import Counter

import trio

from gno_trio.protocol.subscriptions import MAX_LISTENS


class ListenBook:
    """Open ``subscriptions/listen`` streams by caller identity, and the gateway's closing bell.

    A stream holds no capacity slot (it would starve requests), so this book
    is what bounds them: at most :data:`MAX_LISTENS` per identity.
    """

    def __init__(self, per_identity: int = MAX_LISTENS) -> None:
        self.per_identity = per_identity
        self._held: Counter[str] = Counter()
        self.closing = trio.Event()
        """Set when the gateway drains: every stream then completes gracefully."""

    def __len__(self) -> int:
        return sum(self._held.values())

    def take(self, identity: str) -> bool:
        """Count one more stream of ``identity``; False when it already holds its share."""
        if self._held[identity] >= self.per_identity:
            return False
        self._held[identity] += 1
        return True

    def give_back(self, identity: str) -> None:
        self._held[identity] -= 1
        if self._held[identity] <= 0:
            del self._held[identity]


__all__ = ["ListenBook"]
