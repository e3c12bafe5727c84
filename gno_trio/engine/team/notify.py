"""Listening on the store's NOTIFY channels: what other hosts announce.

A :class:`Listener` holds one connection of its own that has ``LISTEN``ed
on its channels; :meth:`Listener.wait` blocks a worker thread until
something arrives or its timeout passes. NOTIFY is delivered only at commit
and only to connected listeners, so whoever relies on it also has a slower
safety net (the session reaper re-reads the table on its own pass).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Final

from gno_trio.engine.team.database import TeamDatabase, cancel

_MAX_BATCH: Final = 256


class Listener:
    """Notifications on ``channels`` of one store, for one consumer."""

    def __init__(self, database: TeamDatabase, channels: Sequence[str]) -> None:
        self._conn = database.dedicated()
        for channel in channels:
            self._conn.execute(f'LISTEN "{channel}"')

    def wait(self, timeout: float) -> list[tuple[str, str]]:
        """``(channel, payload)`` pairs that arrived, waiting up to ``timeout`` seconds for one.

        ``RUNTIME`` when the connection is lost (the caller opens a new listener).
        """
        import psycopg

        from gno_trio.errors import GnoError

        try:
            notes = list(self._conn.notifies(timeout=timeout, stop_after=1))
            if notes:  # then whatever else is already here, without waiting again
                notes += self._conn.notifies(timeout=0.0, stop_after=_MAX_BATCH)
            return [(note.channel, note.payload) for note in notes]
        except psycopg.Error as exc:
            raise GnoError("RUNTIME", f"Lost the store's notifications: {exc}") from exc

    def close(self) -> None:
        cancel(self._conn)
        with contextlib.suppress(Exception):
            self._conn.close()


__all__ = ["Listener"]
