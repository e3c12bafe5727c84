"""Moving an index between the embedded backend and a team store, both ways.

``store copy --to``: every unit of an embedded index file (:mod:`.units`) is
written to an empty team index as its first change, with the index's
configuration when the store has none yet; the file is only read.
``store copy --from``: a fresh data directory catches up from the store (a
catch-up from change 0) and then becomes a plain embedded index again, with
the team's configuration in its ``index.yml``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gno_trio.engine.store.database import ConnectionPool, connect, read_snapshot, write_transaction
from gno_trio.engine.store.lease import FileLease
from gno_trio.engine.team import outbox, units
from gno_trio.engine.team.changes import publish, team_state
from gno_trio.engine.team.database import open_team
from gno_trio.engine.team.lease import AdvisoryLease
from gno_trio.engine.team.plane import Team
from gno_trio.engine.team.shared import TeamConfig
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError


def _counts(units_shipped: list[units.UnitKey]) -> dict[str, int]:
    documents = sum(1 for kind, _ in units_shipped if kind == "d")
    return {"units": len(units_shipped), "documents": documents}


def copy_to_store(store: TeamStore, index: str, db_path: Path, config_path: Path) -> dict[str, Any]:
    """Ship the whole of the embedded index ``index`` (its file ``db_path``) to ``store``,
    whose copy of it must be empty.

    ``CONFLICT`` when the store already holds changes of this index: a copy
    never mixes two indexes. The store's configuration row is seeded from
    this ``index.yml`` if it has none.
    """
    database = open_team(store)
    try:
        with AdvisoryLease(database, index).holding() as (_, pg):
            epoch, seq = team_state(pg, index)
            if seq > 0:
                raise GnoError(
                    "CONFLICT",
                    f"The store already holds index {index} (change {seq}); copy into a "
                    "store without it, or join the team with --store instead",
                )
            conn = connect(db_path, readonly=True)
            try:
                with read_snapshot(conn):
                    keys = units.all_units(conn)
                    shipped = publish(pg, index, (epoch, 0), units.read_units(conn, keys))
            finally:
                conn.close()
        config = TeamConfig(database, index)
        if config.read()[0] is None and config_path.exists():
            config.replace(config_path.read_text(encoding="utf-8"), 0)
    finally:
        database.close()
    return {"index": index, "store": store.shown, "changeSeq": shipped, **_counts(keys)}


def copy_from_store(
    store: TeamStore,
    index: str,
    pool: ConnectionPool,
    config_path: Path,
    local_lease: FileLease,
    after_apply: Callable[[], None],
) -> dict[str, Any]:
    """Fill the index of ``pool`` (which must hold no document) from ``store``'s copy of
    ``index``, and leave a plain embedded index with the team's configuration."""
    with pool.connection() as conn:
        if conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None:
            raise GnoError(
                "CONFLICT",
                f"Index {index} already holds documents here; copy into a fresh data "
                "directory (or another --index)",
            )
    team = Team.open(store, index)
    try:
        team.share_config(config_path)
        with team.database.connection() as pg:
            _, seq = team_state(pg, index)
        if seq == 0:
            raise GnoError("NOT_FOUND", f"The store holds no index {index}")
        team.replicate(pool, local_lease, lambda: None)
        assert team.replica is not None
        if not team.replica.catch_up(wait_seconds=5.0):
            raise GnoError("LOCKED", "Another writer holds this data directory; try again")
        with pool.connection() as conn:
            with write_transaction(conn):
                outbox.uninstall(conn)
            copied = units.all_units(conn)
    finally:
        team.close()
    after_apply()
    return {"index": index, "store": store.shown, "changeSeq": seq, **_counts(copied)}


__all__ = ["copy_from_store", "copy_to_store"]
