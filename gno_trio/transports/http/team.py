"""The HTTP gateway in team mode: sessions, labels, session ends and cancels shared via the store.

Every gateway of the deployment (any host, any worker) keeps its 2025-era
session rows in the store's table instead of a per-host file, labels callers
with the deployment's key, and listens on the store's ``gno_sessions``
channel: a session ended on any gateway (DELETE, token rotation, idle
expiry) ends at once here too, with its GET stream; and on ``gno_cancel``:
a ``notifications/cancelled`` that reached another gateway stops the request
running here. NOTIFY reaches only
connected listeners, so the reaper's own pass (which re-reads the table)
stays the safety net after a lost connection.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Final

import trio

from gno_trio.engine import Team
from gno_trio.errors import GnoError
from gno_trio.transports.http.shared_sessions import SharedSessionStore
from gno_trio.transports.http.wire import Header, Refused, RequestHeaders, invalid_request_reply

logger = logging.getLogger("gno_trio.transports.http")

_WAIT_SECONDS: Final = 1.0
"""How long one wait for notifications blocks its thread (and delays a shutdown at most)."""
_RETRY_SECONDS: Final = 2.0


CHANGE_SEQ_HEADER: Final = "gno-change-seq"
"""On every ``/mcp`` and ``/api/`` answer of a team gateway: ``<epoch>:<change_seq>``, the
change of the team's index this answer reflects at least (a write's own, once shipped)."""
MIN_CHANGE_SEQ_HEADER: Final = "gno-min-change-seq"
"""On a request: answer only once this host holds that change (read-your-writes)."""
REACH_SECONDS: Final = 5.0
"""How long a request carrying :data:`MIN_CHANGE_SEQ_HEADER` waits for its change."""


def change_headers(team: Team | None) -> tuple[Header, ...]:
    """The response header naming the change this gateway's answer reflects (no I/O)."""
    token = None if team is None else team.known_change()
    return () if token is None else ((CHANGE_SEQ_HEADER.encode(), token.encode("ascii")),)


async def reach_wanted_change(team: Team | None, headers: RequestHeaders) -> None:
    """Hold the request until this host holds the change its ``Gno-Min-Change-Seq`` names.

    Without team mode the header is ignored (one client may talk to embedded and
    team gateways alike). Malformed: 400. Not reached within
    :data:`REACH_SECONDS`: 503 with ``Retry-After`` (the change is not here yet,
    never a stale answer). Another incarnation of the index: 409 (waiting
    cannot help). The wait runs in a worker thread.
    """
    if team is None:  # the embedded gateway's hot path: not even a header lookup
        return
    wanted = headers.get(MIN_CHANGE_SEQ_HEADER)
    if wanted is None:
        return
    try:
        outcome = await trio.to_thread.run_sync(
            partial(team.reach_change, wanted, seconds=REACH_SECONDS)
        )
    except GnoError as exc:
        if exc.code == "INVALID_INPUT":
            raise Refused(
                invalid_request_reply(400, f"Gno-Min-Change-Seq: {exc.message}", reason="change")
            ) from None
        raise
    if outcome == "behind":
        raise Refused(
            invalid_request_reply(
                503,
                f"This gateway has not caught up with change {wanted} of the team's index "
                f"within {REACH_SECONDS:g} s; retry",
                reason="change",
                headers=((b"retry-after", b"1"),),
            )
        )
    if outcome == "other":
        raise Refused(
            invalid_request_reply(
                409,
                f"Change {wanted} belongs to another incarnation of the team's index",
                reason="change",
            )
        )


def team_wall_clock() -> float:
    """Session times in team mode: wall-clock seconds, comparable across hosts."""
    return time.time()


async def _heard(team: Team, sessions: SharedSessionStore, notes: list[tuple[str, str]]) -> None:
    ended = [payload for channel, payload in notes if channel == team.sessions_channel]
    if ended:
        await sessions.ended_elsewhere(ended)
    for channel, payload in notes:
        if channel == team.cancel_channel:
            try:
                cancel = json.loads(payload)
                sessions.cancelled_elsewhere(str(cancel["session"]), cancel["request"])
            except (ValueError, KeyError, TypeError):
                logger.warning("ignored a malformed cancel notice: %r", payload[:200])


def _about(team: Team, channel: str, expected: str, payload: str) -> bool:
    """Whether a notice on ``channel`` is the ``expected`` one about this index
    (``<index>:<revision or change>``)."""
    return channel == expected and payload.rpartition(":")[0] == team.index_name


_NOT_ADOPTED: Final = "could not write the team's configuration here yet"
_NOT_CAUGHT_UP: Final = "could not catch up with the team's index yet"


async def _follow(team: Team, work: Callable[[], object], failed: str) -> None:
    """Run ``work`` (a team method) in a thread; a failure waits for the next notice or poll."""
    try:
        await trio.to_thread.run_sync(work)
    except (GnoError, OSError) as exc:
        logger.warning("%s: %s", failed, exc)


async def hear_other_gateways(team: Team, sessions: SharedSessionStore) -> None:
    """Act here, at once, on what other gateways announce; runs until cancelled.

    A session ended elsewhere ends here too (with its GET stream); a
    ``notifications/cancelled`` sent to another gateway for a request running
    here stops it; a configuration changed elsewhere is written to this
    host's ``index.yml``, so its policies (and the authorization epoch) follow,
    including a change made while this listener was away (its notice is lost);
    a write shipped elsewhere is caught up into this host's index file at once
    (every resident process also polls, in case a notice was lost).
    """
    channels = [
        team.sessions_channel,
        team.cancel_channel,
        team.config_channel,
        team.changes_channel,
    ]
    while True:
        try:
            listener = await trio.to_thread.run_sync(team.listen, channels)
        except GnoError as exc:
            logger.warning("not hearing session ends from the store yet: %s", exc.message)
            await trio.sleep(_RETRY_SECONDS)
            continue
        try:
            # what changed while nobody here listened
            await _follow(team, team.adopt_config, _NOT_ADOPTED)
            while True:
                notes = await trio.to_thread.run_sync(listener.wait, _WAIT_SECONDS)
                await _heard(team, sessions, notes)
                if any(_about(team, c, team.config_channel, p) for c, p in notes):
                    await _follow(team, team.adopt_config, _NOT_ADOPTED)
                if any(_about(team, c, team.changes_channel, p) for c, p in notes):
                    await _follow(team, team.catch_up, _NOT_CAUGHT_UP)
        except GnoError as exc:
            logger.warning("lost the store's session notices, listening again: %s", exc.message)
        finally:
            listener.close()
        await trio.sleep(_RETRY_SECONDS)


__all__ = [
    "CHANGE_SEQ_HEADER",
    "MIN_CHANGE_SEQ_HEADER",
    "change_headers",
    "hear_other_gateways",
    "reach_wanted_change",
    "team_wall_clock",
]
