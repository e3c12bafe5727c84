"""One index's coordination plane on a PostgreSQL store: what an opened engine joins.

:class:`Team` bundles what the surfaces of a team-mode process use: the
write lease the kernel takes, the session rows of the HTTP gateway, the job
records of the runtime, the deployment's caller-label key, the config row
a listener on the NOTIFY channels, the stores of the aggregates shared as
rows (:meth:`Team.stores`: the egress audit and the retrieval traces), and
the replica that makes the data directory's index file a cache of the
team's documents, content, vectors, memory and journal (:meth:`Team.replicate`,
:mod:`.replica`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from gno_trio.engine.store.atomic import replace as write_file_atomically
from gno_trio.engine.store.config_file import NEW_CONFIG_MODE
from gno_trio.engine.store.database import ConnectionPool
from gno_trio.engine.store.lease import FileLease
from gno_trio.engine.team.changes import CHANGES_CHANNEL, change_token, parse_change_token
from gno_trio.engine.team.database import TeamDatabase, open_team
from gno_trio.engine.team.jobs import TeamJobs
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.engine.team.notify import Listener
from gno_trio.engine.team.replica import Replica, TeamWriteLease
from gno_trio.engine.team.sessions import CANCEL_CHANNEL, SESSIONS_CHANNEL, TeamSessions
from gno_trio.engine.team.shared import CONFIG_CHANNEL, TeamConfig, deployment_caller_key
from gno_trio.engine.team.stores import TeamStores
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError

SHARED_STATE: Final = (
    "the configuration (index.yml), the write lease, 2025-era sessions, caller labels, "
    "background job records, the egress audit, retrieval traces, and the index itself "
    "(documents, chunks, vectors, memory and the change journal)"
)
"""What team mode shares today, in the words start-up and the README use."""
LOCAL_STATE: Final = "search indexes and a cache of the index caught up from the store"
"""What lives in each gateway's data directory."""


class Team:
    """The coordination state of one index shared through a PostgreSQL store."""

    sessions_channel: Final = SESSIONS_CHANNEL
    config_channel: Final = CONFIG_CHANNEL
    cancel_channel: Final = CANCEL_CHANNEL
    changes_channel: Final = CHANGES_CHANNEL

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self.database = database
        self.index_name = index_name
        self.lease = AdvisoryLease(database, index_name)
        self.config = TeamConfig(database, index_name)
        self._config_path: Path | None = None
        self._revision = 0
        self._adopting = threading.Lock()
        self.replica: Replica | None = None
        """This host's index file as a cache of the team's rows, once a kernel joined."""

    # -- the shared configuration: the config row, mirrored into index.yml ------------

    def share_config(self, path: Path) -> None:
        """Make ``path`` (this host's ``index.yml``) a mirror of the team's configuration.

        The first host to join seeds the row from its file; every other host's
        file is replaced by the row's text (hand edits give way to ``config``
        commands). Everything that reads ``index.yml`` keeps working, and a
        change of the file's policies bumps the gateway's authorization epoch
        as it always did.
        """
        self._config_path = path
        body, _ = self.config.read()
        if body is None and path.exists():
            try:
                self._revision = self.config.replace(path.read_text(encoding="utf-8"), 0)
                return
            except GnoError:  # another host seeded it first: take theirs
                pass
        self.adopt_config()

    def adopt_config(self) -> bool:
        """Bring the mirrored file to the row's revision; whether the file changed."""
        if self._config_path is None:
            return False
        with self._adopting:  # the listener and request threads: the newest read is written last
            return self._adopt(self._config_path)

    def follow_config(self) -> bool:
        """Adopt the row if its revision moved since this host last read it; whether it did.

        One indexed lookup when nothing changed. A gateway calls this before
        it answers a judged request, so the authorization epoch never rests
        on a ``NOTIFY`` having arrived (one is lost while a listener
        reconnects, and may simply be late).
        """
        if self._config_path is None or self.config.revision() == self._revision:
            return False
        return self.adopt_config()

    def _adopt(self, path: Path) -> bool:
        body, revision = self.config.read()
        if body is None:
            self._revision = revision
            return False
        try:
            current: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        changed = current != body
        if changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Not under the lease: leave the folder's temporaries to the writers that hold it.
            write_file_atomically(path, body, new_mode=NEW_CONFIG_MODE, clean=False)
        self._revision = revision  # only once the file says so: a failed write is tried again
        return changed

    def publish_config(self, body: str) -> None:
        """Make ``body`` the team's configuration (the writer holds the lease).

        ``CONFLICT`` when the row moved since this host last read it; the
        writer's file is then left as it was.
        """
        self._revision = self.config.replace(body, self._revision)

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

    def stores(self) -> TeamStores:
        """The stores of the index's aggregates: the shared ones here, the rest local."""
        return TeamStores(self.database, self.index_name)

    def replicate(
        self, pool: ConnectionPool, local_lease: FileLease, after_apply: Callable[[], None]
    ) -> TeamWriteLease:
        """Make the index file of ``pool`` a cache of the team's rows; the write lease that
        ships its writes (``local_lease`` is the host's own lock of that file)."""
        self.replica = Replica(self.database, self.index_name, pool, local_lease, after_apply)
        return TeamWriteLease(self.lease, self.replica)

    def catch_up(self) -> bool:
        """Bring this host's file up to the team's rows if it is behind (never waits for a
        local writer: it catches up itself); whether it is up to date."""
        return True if self.replica is None else self.replica.catch_up()

    def known_change(self) -> str | None:
        """The change token (``<epoch>:<change_seq>``) this process last shipped or caught up
        to, without I/O: what an answer given now reflects at least (None: none yet)."""
        known = None if self.replica is None else self.replica.known_change()
        return None if known is None else change_token(known)

    def reach_change(self, token: str, *, seconds: float) -> str:
        """Catch up until this host holds the change ``token`` names (read-your-writes);
        ``"reached"``, ``"behind"`` (not within ``seconds``) or ``"other"`` (the token names
        another incarnation of the index). ``INVALID_INPUT`` for a malformed token."""
        wanted = parse_change_token(token)
        return "reached" if self.replica is None else self.replica.reach(wanted, seconds=seconds)

    def caller_key(self) -> bytes:
        return deployment_caller_key(self.database)

    def listen(self, channels: Sequence[str]) -> Listener:
        return Listener(self.database, channels)

    def close(self) -> None:
        self.database.close()


__all__ = ["LOCAL_STATE", "SHARED_STATE", "Team"]
