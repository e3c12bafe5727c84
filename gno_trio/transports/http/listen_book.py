"""Long-lived streams per caller identity (listen, REST events), and the gateway's closing bell.

One gateway process counts its own streams; when several processes serve
one port (``serve --workers N``) or one team, a :class:`StreamLedger` (the
shared session registry) counts every process's, so the per-identity cap is
the same whatever the number of workers.
"""

from __future__ import annotations

from collections import Counter
from typing import Final, Protocol

import trio

from gno_trio.protocol.subscriptions import MAX_LISTENS

_GIVE_BACK_SECONDS: Final = 10.0
"""At most this long to give a share back, even while shutting down."""
LISTEN_STREAMS: Final = "listen"
"""The kind of 2026-07-28 ``subscriptions/listen`` streams."""
EVENT_STREAMS: Final = "events"
"""The kind of REST ``/api/events`` streams."""


class StreamLedger(Protocol):
    """Stream shares counted across processes: each share is a claim that lapses unrenewed.

    ``take`` answers the claim of a new share of ``identity``'s ``kind``
    streams, or None when ``limit`` are held already (by any process);
    ``give_back`` ends it. The ledger renews the claims it handed out for
    as long as its process lives.
    """

    async def take(self, kind: str, identity: str, limit: int) -> str | None: ...
    async def give_back(self, claim: str) -> None: ...


class ListenBook:
    """Open streams of one kind by caller identity, and the gateway's closing bell.

    A stream holds no capacity slot (it would starve requests), so this book
    is what bounds them: at most :data:`MAX_LISTENS` per identity, counted
    in ``ledger`` across every process when there is one.
    """

    def __init__(
        self, kind: str, per_identity: int = MAX_LISTENS, ledger: StreamLedger | None = None
    ) -> None:
        self.kind = kind
        self.per_identity = per_identity
        self._ledger = ledger
        self._held: Counter[str] = Counter()
        self.closing = trio.Event()
        """Set when the gateway drains: every stream then completes gracefully."""

    def __len__(self) -> int:
        return sum(self._held.values())

    async def take(self, identity: str) -> str | None:
        """A share of ``identity``'s streams (give it back), or None when it holds them all."""
        if self._held[identity] >= self.per_identity:
            return None
        self._held[identity] += 1  # counted before the ledger's answer: no local overshoot
        claim: str | None = "local"
        if self._ledger is not None:
            try:
                claim = await self._ledger.take(self.kind, identity, self.per_identity)
            except BaseException:
                self._count_off(identity)
                raise
        if claim is None:
            self._count_off(identity)
        return claim

    async def give_back(self, identity: str, claim: str) -> None:
        self._count_off(identity)
        if self._ledger is not None:  # a share not given back lapses with its lease
            with trio.CancelScope(shield=True), trio.move_on_after(_GIVE_BACK_SECONDS):
                await self._ledger.give_back(claim)

    def _count_off(self, identity: str) -> None:
        self._held[identity] -= 1
        if self._held[identity] <= 0:
            del self._held[identity]


__all__ = ["EVENT_STREAMS", "LISTEN_STREAMS", "ListenBook", "StreamLedger"]
