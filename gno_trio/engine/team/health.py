"""What ``doctor`` reports of a PostgreSQL store, read without changing anything.

The doctor connects once (no pool, no migrations): can the store be reached,
are our tables there and not newer than this build, who holds the write
lease of the index, and how many 2025-era sessions and running jobs it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from gno_trio.engine.team.database import connect, known_versions
from gno_trio.engine.team.lease import AdvisoryLease, lease_holder
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """One look at a store; ``problem`` set when it cannot be used as it is."""

    reachable: bool
    problem: str | None = None
    pending: int = 0
    """Migrations this build has that the store lacks (the next gateway applies them)."""
    holder: tuple[int | None, str | None] | None = None
    sessions: int = 0
    running_jobs: int = 0


def store_health(store: TeamStore, index_name: str) -> StoreHealth:
    """Look at ``store`` for ``index_name``'s coordination state; never raises for the store."""
    try:
        conn = connect(store)
    except GnoError as exc:
        return StoreHealth(reachable=False, problem=exc.message)
    with conn:
        exists = conn.execute("SELECT to_regclass('gno_team_migrations') IS NOT NULL").fetchone()
        if exists is None or not exists[0]:
            return StoreHealth(reachable=True, pending=len(known_versions()))
        applied = {row[0] for row in conn.execute("SELECT version FROM gno_team_migrations")}
        ours = known_versions()
        newer = sorted(applied - ours)
        if newer:
            return StoreHealth(
                reachable=True,
                problem=f"the store has migrations this build does not know ({newer}): "
                "upgrade gno-trio on this host",
            )
        holder = lease_holder(conn, AdvisoryLease.key_for(index_name))
        sessions = conn.execute("SELECT count(*) FROM gno_gateway_sessions").fetchone()
        jobs = conn.execute("SELECT count(*) FROM gno_jobs WHERE state = 'running'").fetchone()
    return StoreHealth(
        reachable=True,
        pending=len(ours - applied),
        holder=holder,
        sessions=int(sessions[0]) if sessions else 0,
        running_jobs=int(jobs[0]) if jobs else 0,
    )


__all__ = ["StoreHealth", "store_health"]
