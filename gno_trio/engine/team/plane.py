"""One index's coordination plane on a PostgreSQL store: what an opened engine joins.

:class:`Team` bundles what the surfaces of a team-mode process use: the
write lease the kernel takes, the session rows of the HTTP gateway, the job
records of the runtime, the deployment's caller-label key, the config row
and a listener on the NOTIFY channels. Documents, chunks, vectors, memory
and traces are not here yet: they stay in the data directory's SQLite file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from gno_trio.engine.team.database import TeamDatabase, open_team
from gno_trio.engine.team.jobs import TeamJobs
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.engine.team.notify import Listener
from gno_trio.engine.team.sessions import CANCEL_CHANNEL, SESSIONS_CHANNEL, TeamSessions
from gno_trio.engine.team.shared import TeamConfig, deployment_caller_key
from gno_trio.engine.team.url import TeamStore

SHARED_STATE: Final = "the write lease, 2025-era sessions, caller labels and background job records"
"""What team mode shares today, in the words start-up and the README use."""
LOCAL_STATE: Final = "documents, search indexes, vectors, memory and traces"
"""What still lives in each gateway's data directory."""


class Team:
    """The coordination state of one index shared through a PostgreSQL store."""

    sessions_channel: Final = SESSIONS_CHANNEL
    cancel_channel: Final = CANCEL_CHANNEL

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self.database = database
        self.index_name = index_name
        self.lease = AdvisoryLease(database, index_name)
        self.config = TeamConfig(database, index_name)

    @classmethod
    def open(cls, store: TeamStore, index_name: str) -> Team:
        """Connect and migrate; ``RUNTIME`` naming the cause when the store cannot be used."""
        return cls(open_team(store), index_name)

    @property
    def store(self) -> TeamStore:
        return self.database.store

    def sessions(self) -> TeamSessions:
        return TeamSessions(self.database)

    def jobs(self) -> TeamJobs:
        return TeamJobs(self.database)

    def caller_key(self) -> bytes:
        return deployment_caller_key(self.database)

    def listen(self, channels: Sequence[str]) -> Listener:
        return Listener(self.database, channels)

    def close(self) -> None:
        self.database.close()


__all__ = ["LOCAL_STATE", "SHARED_STATE", "Team"]
