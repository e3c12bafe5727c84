"""Each request's own deadline, which bounds it once the server stops taking input.

While a connection is open a client decides how long it waits (it may
cancel). When input ends (stdin closes, SIGTERM, a resident's drain), the
requests already read are still answered: each keeps running until its own
deadline, :data:`ANSWER_DEADLINE_SECONDS` after it was read (GNO's default
``models.inferenceTimeout``), and one that passes it is answered with a
``-32000`` error instead of being dropped. A fixed drain counted from the
shutdown would drop a slow first call (a model still loading) however young
it was, and wait for nothing when every request is done.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Final

import trio

ANSWER_DEADLINE_SECONDS: Final = 30.0
SEND_GRACE_SECONDS: Final = 2.0
"""Past its deadline, the time an answer (or its deadline error) gets to reach the client."""


class AnswerDeadline:
    """One request's deadline: two scopes, unbounded until the server drains.

    ``answering`` goes around working out the answer; ``sending`` around
    working it out and sending it (:data:`SEND_GRACE_SECONDS` later), so a
    client that stopped reading cannot hold the request either. A transport
    that already has a scope around the whole request hands it in as
    ``sending``: a trio scope costs microseconds to enter and leave, on
    every call.
    """

    __slots__ = ("answering", "read_at", "seconds", "sending")

    def __init__(self, seconds: float, sending: trio.CancelScope | None = None) -> None:
        self.read_at = trio.current_time()
        self.seconds = seconds
        self.answering = trio.CancelScope()
        self.sending = trio.CancelScope() if sending is None else sending

    def arm(self) -> None:
        self.answering.deadline = self.read_at + self.seconds
        self.sending.deadline = self.answering.deadline + SEND_GRACE_SECONDS

    @property
    def passed(self) -> bool:
        """Whether working out the answer was stopped by the deadline."""
        return self.answering.cancelled_caught


class InFlightDeadlines:
    """The deadlines of the requests a server is serving, armed together when it drains."""

    def __init__(self, seconds: float = ANSWER_DEADLINE_SECONDS) -> None:
        self.seconds = seconds
        self._live: set[AnswerDeadline] = set()
        self._armed = False

    @contextlib.contextmanager
    def track(self, sending: trio.CancelScope | None = None) -> Iterator[AnswerDeadline]:
        """A deadline for the request served in the block (armed at once when draining);
        ``sending``: the caller's own scope around the whole request, to bound it."""
        deadline = AnswerDeadline(self.seconds, sending)
        if self._armed:
            deadline.arm()
        self._live.add(deadline)
        try:
            yield deadline
        finally:
            self._live.discard(deadline)

    def arm_all(self) -> float:
        """Bound every request from now on; the seconds until the last one must be sent."""
        self._armed = True
        for deadline in self._live:
            deadline.arm()
        latest = max((d.sending.deadline for d in self._live), default=-math.inf)
        return max(0.0, latest - trio.current_time())


__all__ = ["ANSWER_DEADLINE_SECONDS", "SEND_GRACE_SECONDS", "AnswerDeadline", "InFlightDeadlines"]
