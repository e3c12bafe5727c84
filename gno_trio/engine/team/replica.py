"""A host's index file as a cache of the team's rows: shipping writes, catching up.

PostgreSQL holds the truth of a team index (``gno_index_units``, see
:mod:`.units`); every host keeps its SQLite file caught up to the index's
``change_seq`` and stamped with it, so searches read a local file as the
embedded backend does and answer the same.

* **Writing** (:class:`TeamWriteLease`) needs the team's advisory lock and
  then this host's own lock file (other processes of the host catch up into
  the same file). Taking them, the writer first catches up (and restores
  from the store any unit a writer of this host committed locally but never
  shipped: it was never visible anywhere, the store is the truth). After the
  block, and after each committed batch of a long sync, the units the
  outbox names are shipped in one PostgreSQL transaction on the lock's own
  connection (a writer that lost its lock cannot commit there), which bumps
  ``change_seq``, stamps the units and ``NOTIFY``s ``gno_changes``.
* **Reading hosts** catch up on notice, on a poll (NOTIFY reaches only
  connected listeners) and when a command opens the index, holding only
  their own lock file.
* The first host of an empty team index ships everything its file holds
  (as the first host seeds the configuration); a host whose file belongs to
  no or another incarnation of the index starts it over from the store.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.store.database import ConnectionPool, write_transaction
from gno_trio.engine.store.lease import (
    DEFAULT_WAIT_SECONDS,
    LOCKED_MESSAGE,
    FileLease,
    HeldLease,
    wait_from_env,
)
from gno_trio.engine.team import outbox, units
from gno_trio.engine.team.changes import (
    CHANGES_CHANNEL,
    publish,
    store_failures,
    team_state,
)
from gno_trio.engine.team.database import TeamDatabase
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import sqlite3

    import psycopg

logger = logging.getLogger("gno_trio.engine.team")

_FETCH_ROWS: Final = 256
_REACH_POLL_SECONDS: Final = 0.05
"""How often :meth:`Replica.reach` looks again at a store that has not the change yet."""


class Replica:
    """This host's index file as a cache of one team index."""

    def __init__(
        self,
        database: TeamDatabase,
        index_name: str,
        pool: ConnectionPool,
        local_lease: FileLease,
        after_apply: Callable[[], None],
    ) -> None:
        self._database = database
        self.index_name = index_name
        self._pool = pool
        self.local_lease = local_lease
        self._after_apply = after_apply
        self._seeding: str | None = None
        self._lent: psycopg.Connection[Any] | None = None
        self._lent_lock = threading.Lock()
        self._known: tuple[str, int] | None = None
        self._known_lock = threading.Lock()
        with pool.connection() as conn, write_transaction(conn):
            outbox.install(conn)
        with store_failures("opening the shared index"), database.connection() as pg:
            team_state(pg, index_name)

    # -- where things stand -------------------------------------------------------

    def _state(self, pg: psycopg.Connection[Any]) -> tuple[str, int]:
        row = pg.execute(
            "SELECT epoch, change_seq FROM gno_index_state WHERE index_name = %s",
            (self.index_name,),
        ).fetchone()
        if row is None:
            raise GnoError("RUNTIME", f"The shared index {self.index_name} has no state row")
        return str(row[0]), int(row[1])

    def _pruned_through(self, pg: psycopg.Connection[Any]) -> int:
        """The last change whose tombstone was dropped: a file stamped before it may have
        missed a deletion (:func:`.changes.prune_tombstones`) and starts over."""
        row = pg.execute(
            "SELECT pruned_through FROM gno_index_state WHERE index_name = %s",
            (self.index_name,),
        ).fetchone()
        return 0 if row is None else int(row[0])

    def local_stamp(self) -> tuple[str | None, int]:
        with self._pool.connection() as conn:
            return outbox.stamp(conn)

    def _stamped(self, epoch: str, seq: int) -> None:
        """Remember that this host's file holds change ``seq`` of ``epoch`` (never backwards)."""
        with self._known_lock:
            known = self._known
            if known is None or known[0] != epoch or known[1] < seq:
                self._known = (epoch, seq)

    def known_change(self) -> tuple[str, int] | None:
        """``(epoch, change_seq)`` this process last shipped or caught up to (no I/O):
        what an answer given here reflects at least."""
        return self._known

    def reach(self, wanted: tuple[str, int], *, seconds: float) -> str:
        """Catch up until this host's file holds change ``wanted`` (read-your-writes).

        ``"reached"``; ``"behind"`` when ``seconds`` passed first (the change is
        not on the store yet, or a local writer kept the file); ``"other"`` when
        the store's index is another incarnation than the one ``wanted`` names.
        """
        epoch, seq = wanted
        deadline = time.monotonic() + seconds
        while True:
            known = self._known
            if known is not None and known[0] == epoch and known[1] >= seq:
                return "reached"
            left = deadline - time.monotonic()
            if self.catch_up(wait_seconds=max(0.0, min(1.0, left))):
                known = self._known
                if known is not None and known[0] != epoch:
                    return "other"
            if deadline - time.monotonic() <= 0:
                return "behind"
            time.sleep(_REACH_POLL_SECONDS)

    def change_seq(self) -> int:
        """The store's change sequence of this index now."""
        with store_failures("reading the change sequence"), self._database.connection() as pg:
            return self._state(pg)[1]

    # -- catching up ---------------------------------------------------------------

    def catch_up(self, *, wait_seconds: float = 0.0) -> bool:
        """Bring this host's file up to the store (taking only the host's lock file); whether
        it is now caught up. False when a local writer holds the file (it catches up
        itself) or when the file waits to seed an empty team index (:meth:`join`)."""
        with store_failures("catching up"), self._database.connection() as pg:
            epoch, seq = self._state(pg)
            if (epoch, seq) == self.local_stamp() and not self._pending():
                self._stamped(epoch, seq)
                return True
            try:
                with self.local_lease.hold(wait_seconds=wait_seconds):
                    done = self._catch_up(pg)
                    if done:
                        self._after_apply()
                    return done
            except GnoError as exc:
                if exc.code == "LOCKED":
                    return False
                raise

    def join(self, take_lease: Callable[[], contextlib.AbstractContextManager[object]]) -> None:
        """On opening: catch up, or (the first host of an empty team index) ship this file.

        When another process of this host holds the file (a writer, or a
        worker catching up at the same start) it brings the file up to date
        itself: this one serves what the file holds meanwhile.
        """
        if self.catch_up(wait_seconds=wait_from_env(DEFAULT_WAIT_SECONDS)):
            return
        with store_failures("reading the change sequence"), self._database.connection() as pg:
            epoch, seq = self._state(pg)
        if seq == 0 and self.local_stamp()[0] != epoch:
            try:
                with take_lease():  # the writer's way in seeds the team index and ships
                    pass
            except GnoError as exc:
                if exc.code != "LOCKED":
                    raise
                # Another process (of this host or another) writes, or seeds the team
                # index right now: its changes arrive here by the next catch-up.
                logger.info("not seeding team index %s: %s", self.index_name, exc.message)

    def _pending(self) -> bool:
        with self._pool.connection() as conn:
            return conn.execute("SELECT 1 FROM team_outbox LIMIT 1").fetchone() is not None

    def _catch_up(self, pg: psycopg.Connection[Any], *, writer: bool = False) -> bool:
        """Catch up holding the host's lock file; False when an empty team waits for a seed."""
        with self._pool.connection() as conn:
            epoch, seq = outbox.stamp(conn)
            pending = outbox.outbox(conn)
            with pg.transaction():
                pg.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                team_epoch, team_seq = self._state(pg)
                if epoch != team_epoch or seq > team_seq or seq < self._pruned_through(pg):
                    if team_seq == 0:
                        if writer:  # the first host: ship everything this file holds
                            with write_transaction(conn):
                                outbox.fill_outbox(conn)
                            self._seeding = team_epoch
                        return False
                    self._rebuild(conn, pg, team_epoch, team_seq)
                    return True
                if seq == team_seq and not pending:
                    self._stamped(team_epoch, team_seq)
                    return True
                self._follow(conn, pg, (team_epoch, team_seq), seq, pending)
        return True

    def _follow(
        self,
        conn: sqlite3.Connection,
        pg: psycopg.Connection[Any],
        team: tuple[str, int],
        seq: int,
        pending: Sequence[units.UnitKey],
    ) -> None:
        """Apply the units changed after ``seq`` and restore the ``pending`` ones from the store."""
        kinds = [kind for kind, _ in pending]
        keys = [key for _, key in pending]
        where = (
            "index_name = %s AND (change_seq > %s OR (kind, key) IN "
            "(SELECT * FROM unnest(%s::text[], %s::text[])))"
        )
        params = (self.index_name, seq, kinds, keys)
        changed = {
            (str(kind), str(key))
            for kind, key in pg.execute(
                f"SELECT kind, key FROM gno_index_units WHERE {where}", params
            )
        }
        changed.update(pending)
        with write_transaction(conn), units.applying(conn):
            units.remove(conn, changed)
            self._insert_bodies(conn, pg, f"{where} AND body IS NOT NULL", params)
            outbox.clear_outbox(conn)
            outbox.set_stamp(conn, *team)
        self._stamped(*team)

    def _rebuild(
        self, conn: sqlite3.Connection, pg: psycopg.Connection[Any], epoch: str, seq: int
    ) -> None:
        """Start this file over from the store's units (a new host, or another incarnation)."""
        logger.info("rebuilding the local copy of team index %s from the store", self.index_name)
        with write_transaction(conn):
            units.reset(conn)
            outbox.clear_outbox(conn)
            with units.applying(conn):
                self._insert_bodies(
                    conn, pg, "index_name = %s AND body IS NOT NULL", (self.index_name,)
                )
            outbox.set_stamp(conn, epoch, seq)
        self._stamped(epoch, seq)

    def _insert_bodies(
        self,
        conn: sqlite3.Connection,
        pg: psycopg.Connection[Any],
        where: str,
        params: Sequence[Any],
    ) -> None:
        cursor = pg.cursor(name="gno_catch_up")
        cursor.itersize = _FETCH_ROWS
        try:
            cursor.execute(
                f"SELECT kind, key, body FROM gno_index_units WHERE {where} "
                "ORDER BY array_position(%s::text[], kind)",
                (*params, list(units.KIND_ORDER)),
            )
            local = units.LocalColumns(conn)
            for kind, key, body in cursor:
                units.insert(conn, (str(kind), str(key)), bytes(body), local)
        finally:
            cursor.close()

    # -- writing ----------------------------------------------------------------------

    def prepare_writer(self, pg: psycopg.Connection[Any]) -> None:
        """Holding both locks: catch up (or prepare the seed) before the first write."""
        self._seeding = None
        with store_failures("catching up before writing"):
            self._catch_up(pg, writer=True)

    @contextlib.contextmanager
    def lending(self, pg: psycopg.Connection[Any]) -> Iterator[None]:
        """The lease's connection, for :meth:`ship_now` while the block holds the lease."""
        with self._lent_lock:
            self._lent = pg
        try:
            yield
        finally:
            with self._lent_lock:
                self._lent = None

    def ship_now(self) -> None:
        """Ship what the holder committed so far (after a sync's batch); outside a lease held
        by this process, nothing (the lease's end ships)."""
        with self._lent_lock:
            pg = self._lent
            if pg is not None:
                self.ship(pg)

    def ship(self, pg: psycopg.Connection[Any]) -> int | None:
        """Ship the units the outbox names; the new change sequence (None: nothing to ship)."""
        with self._pool.connection() as conn:
            pending = outbox.outbox(conn)
            epoch, seq = outbox.stamp(conn)
            if self._seeding is not None:
                epoch, seq = self._seeding, 0
            if epoch is None:
                return None
            if not pending:
                if self._seeding is not None:
                    with write_transaction(conn):
                        outbox.set_stamp(conn, epoch, 0)
                    self._seeding = None
                return None
            shipped = publish(pg, self.index_name, (epoch, seq), units.read_units(conn, pending))
            with write_transaction(conn):
                outbox.clear_outbox(conn, pending)
                outbox.set_stamp(conn, epoch, shipped)
            self._stamped(epoch, shipped)
            self._seeding = None
            return shipped


class TeamWriteLease:
    """The write lease of a team index on one host: the team's lock, then the host's file lock.

    Always in that order (a writer waiting for the host's lock holds the
    team's lock, and the host's lock is otherwise held only by catch-ups,
    which never wait for the team's), so two writers never wait on each other.
    """

    def __init__(self, advisory: AdvisoryLease, replica: Replica) -> None:
        self._advisory = advisory
        self._replica = replica

    @property
    def where(self) -> str:
        return self._advisory.where

    @contextlib.contextmanager
    def hold(
        self,
        *,
        wait_seconds: float | None = None,
        busy_code: str = "LOCKED",
        busy_message: str = LOCKED_MESSAGE,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[HeldLease]:
        wait = wait_from_env(DEFAULT_WAIT_SECONDS) if wait_seconds is None else wait_seconds
        deadline = time.monotonic() + wait
        with (
            self._advisory.holding(
                wait_seconds=wait,
                busy_code=busy_code,
                busy_message=busy_message,
                should_stop=should_stop,
            ) as (held, pg),
            self._replica.local_lease.hold(
                wait_seconds=max(0.0, deadline - time.monotonic()),
                busy_code=busy_code,
                busy_message=busy_message,
                should_stop=should_stop,
            ),
        ):
            self._replica.prepare_writer(pg)
            failed = False
            try:
                with self._replica.lending(pg):
                    yield held
            except BaseException:
                failed = True
                raise
            finally:
                try:
                    self._replica.ship(pg)
                except GnoError as exc:
                    if not failed:
                        raise
                    logger.warning("the write could not be shared: %s", exc.message)

    def is_held(self) -> bool:
        return self._advisory.is_held()


__all__ = ["CHANGES_CHANNEL", "Replica", "TeamWriteLease"]
