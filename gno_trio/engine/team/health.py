"""What ``doctor`` reports of a PostgreSQL store, read without changing anything.

The doctor connects once (no pool, no migrations) and answers what an
operator asks before and while running a team:

* ``store``: can it be reached, are our tables there and not newer than
  this build, who holds the index's write lease, how many 2025-era sessions
  and running jobs it holds;
* ``store-server``: is the server PostgreSQL 13 or later;
* ``store-privileges``: may this URL's role read and write every table of
  ours, and create the ones still missing (the README's two roles);
* ``store-connections``: do the gno-trio processes connected now, at their
  budget each, fit the server's ``max_connections`` less its reserved slots;
* ``store-lag``: how far this host's copy of the index is behind the
  store's change sequence, and whether it belongs to the store's epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from gno_trio.engine.team.database import PROCESS_CONNECTIONS, connect, known_versions
from gno_trio.engine.team.lease import AdvisoryLease, lease_holder
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import psycopg

MIN_SERVER_VERSION: Final = 130000
"""PostgreSQL 13: UNLOGGED tables, advisory locks, LISTEN/NOTIFY, ``to_regclass``, all older."""

_TABLE_RIGHTS: Final = ("SELECT", "INSERT", "UPDATE", "DELETE")

_OUR_TABLES: Final = """
SELECT c.relname,
       has_table_privilege(c.oid, 'SELECT') AND has_table_privilege(c.oid, 'INSERT')
       AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE')
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND c.relname LIKE 'gno\\_%'
  AND n.nspname = ANY (current_schemas(false))
ORDER BY c.relname
"""

_CONNECTIONS: Final = """
SELECT count(*) FILTER (WHERE application_name NOT LIKE 'gno-trio:%'),
       count(DISTINCT application_name) FILTER (WHERE application_name LIKE 'gno-trio:%'),
       count(*) FILTER (WHERE application_name LIKE 'gno-trio:%')
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
"""


class Finding(NamedTuple):
    """One doctor check: ``name``, ``status`` (ok, warn, error), ``message``, what to do."""

    name: str
    status: str
    message: str
    fixes: tuple[str, ...] = ()


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
    server_version: int = 0
    """``server_version_num`` (180006 for 18.6)."""
    may_create: bool = False
    """Whether this role may create tables in the schema ours go to."""
    short_rights: tuple[str, ...] = ()
    """Our tables this role may not read and write."""
    budget: ConnectionBudget | None = None
    index_state: tuple[str, int, int] | None = None
    """The index's ``(epoch, change_seq, pruned_through)`` on the store; None: not there."""


@dataclass(frozen=True, slots=True)
class ConnectionBudget:
    """The server's connection slots against what gno-trio processes may take of them."""

    max_connections: int
    reserved: int
    others: int
    """Client connections open now that are not gno-trio's (this look's own excluded)."""
    processes: int
    """gno-trio processes connected now (one ``application_name`` each)."""
    held: int
    """Connections those processes hold now."""

    @property
    def usable(self) -> int:
        return self.max_connections - self.reserved

    @property
    def needed(self) -> int:
        """What the server must have room for: every process at its full budget, and the rest."""
        return self.others + self.processes * PROCESS_CONNECTIONS

    @property
    def room(self) -> int:
        """How many more gno-trio processes fit, at their full budget each."""
        return max(0, (self.usable - self.needed) // PROCESS_CONNECTIONS)


def store_health(store: TeamStore, index_name: str) -> StoreHealth:
    """Look at ``store`` for ``index_name``'s coordination state; never raises for the store."""
    try:
        conn = connect(store)
    except GnoError as exc:
        return StoreHealth(reachable=False, problem=exc.message)
    with conn:
        server = _setting(conn, "server_version_num")
        may_create = _one(conn, "SELECT has_schema_privilege(current_schema(), 'CREATE')")
        budget = _budget(conn)
        exists = _one(conn, "SELECT to_regclass('gno_team_migrations') IS NOT NULL")
        common: dict[str, Any] = {
            "reachable": True,
            "server_version": server,
            "may_create": bool(may_create),
            "budget": budget,
        }
        if not exists:
            return StoreHealth(pending=len(known_versions()), **common)
        short = tuple(row[0] for row in conn.execute(_OUR_TABLES) if not row[1])
        if "gno_team_migrations" in short:  # nothing else can be read either
            return StoreHealth(short_rights=short, **common)
        applied = {row[0] for row in conn.execute("SELECT version FROM gno_team_migrations")}
        ours = known_versions()
        newer = sorted(applied - ours)
        if newer:
            return StoreHealth(
                problem=f"the store has migrations this build does not know ({newer}): "
                "upgrade gno-trio on this host",
                **common,
            )
        common["short_rights"] = short
        holder = lease_holder(conn, AdvisoryLease.key_for(index_name))
        sessions = _counted(conn, "gno_gateway_sessions", "", short)
        jobs = _counted(conn, "gno_jobs", " WHERE state = 'running'", short)
        index_state = None if ours - applied else _index_state(conn, index_name, short)
    return StoreHealth(
        pending=len(ours - applied),
        holder=holder,
        sessions=sessions,
        running_jobs=jobs,
        index_state=index_state,
        **common,
    )


def _index_state(
    conn: psycopg.Connection[Any], index_name: str, short: tuple[str, ...]
) -> tuple[str, int, int] | None:
    """Read only when every migration is applied (the doctor reports the lag then)."""
    exists = _one(conn, "SELECT to_regclass('gno_index_state') IS NOT NULL")
    if not exists or "gno_index_state" in short:
        return None
    row = conn.execute(
        "SELECT epoch, change_seq, pruned_through FROM gno_index_state WHERE index_name = %s",
        (index_name,),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]))


def _one(conn: psycopg.Connection[Any], sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def _setting(conn: psycopg.Connection[Any], name: str) -> int:
    value = _one(conn, f"SELECT current_setting('{name}', true)")
    return int(value) if value not in (None, "") else 0


def _counted(conn: psycopg.Connection[Any], table: str, where: str, short: tuple[str, ...]) -> int:
    if table in short:
        return 0
    return int(_one(conn, f"SELECT count(*) FROM {table}{where}") or 0)


def _budget(conn: psycopg.Connection[Any]) -> ConnectionBudget:
    # reserved_connections (PostgreSQL 16+) are kept for roles granted pg_use_reserved_connections.
    reserved = _setting(conn, "superuser_reserved_connections") + _setting(
        conn, "reserved_connections"
    )
    row = conn.execute(_CONNECTIONS).fetchone()
    others, processes, held = (int(value or 0) for value in (row or (0, 0, 0)))
    return ConnectionBudget(
        max_connections=_setting(conn, "max_connections"),
        reserved=reserved,
        others=others,
        processes=processes,
        held=held,
    )


def store_findings(
    store: TeamStore, index_name: str, local: tuple[str | None, int] | None
) -> list[Finding]:
    """The doctor's checks of ``store`` (see the module's docstring); ``local`` is this
    host's stamp of its cache of the index (None: the file is no team cache)."""
    health = store_health(store, index_name)
    if not health.reachable:
        return [
            Finding(
                "store",
                "error",
                health.problem or f"Cannot reach {store.shown}",
                ("Check the URL, the credentials and that the server accepts connections",),
            )
        ]
    findings = [_state(store, health), _server(health), _rights(health)]
    if health.budget is not None:
        findings.append(_connections(health.budget))
    if health.problem is None and not health.pending:
        findings.append(_lag(index_name, health.index_state, local))
    return findings


def _lag(
    index_name: str, team: tuple[str, int, int] | None, local: tuple[str | None, int] | None
) -> Finding:
    """How far this host's cache of the index is behind the store's change sequence."""
    if team is None or team[1] == 0:
        return Finding("store-lag", "ok", f"The store holds no changes of index {index_name} yet")
    epoch, seq, pruned = team
    if local is None:
        return Finding(
            "store-lag",
            "ok",
            f"This host holds no team copy of index {index_name} yet (the store is at "
            f"change {seq}): the first command run with --store copies it",
        )
    stamp_epoch, stamp_seq = local
    starts_over = "the next command run with --store starts this host's copy over from the store"
    if stamp_epoch != epoch:
        return Finding(
            "store-lag",
            "warn",
            f"This host's copy of index {index_name} belongs to another incarnation of it "
            f"(epoch {stamp_epoch or 'none'}, the store's is {epoch})",
            (starts_over,),
        )
    if stamp_seq == seq:
        return Finding(
            "store-lag", "ok", f"This host's copy is caught up to change {seq} of the store"
        )
    if stamp_seq > seq or stamp_seq < pruned:
        why = "ahead of" if stamp_seq > seq else "too far behind"
        return Finding(
            "store-lag",
            "warn",
            f"This host's copy (change {stamp_seq}) is {why} the store (change {seq})",
            (starts_over,),
        )
    return Finding(
        "store-lag",
        "warn",
        f"This host's copy is {seq - stamp_seq} changes behind the store (change "
        f"{stamp_seq} of {seq})",
        ("A gateway run with --store catches up on its own; so does any command run with it",),
    )


def _state(store: TeamStore, health: StoreHealth) -> Finding:
    if health.problem is not None:
        return Finding("store", "error", f"{store.shown}: {health.problem}")
    if health.pending:
        return Finding(
            "store",
            "warn",
            f"{store.shown} lacks {health.pending} of gno-trio's tables or changes",
            ("The next gateway or writer started with this --store creates them",),
        )
    state = f"{health.sessions} sessions, {health.running_jobs} running jobs"
    if health.holder is not None:
        pid, host = health.holder
        who = f"process {pid} on {host}" if pid is not None else "another client"
        return Finding(
            "store",
            "warn",
            f"{store.shown} reachable ({state}); {who} holds the write lease: writes wait for it",
        )
    return Finding("store", "ok", f"{store.shown} reachable ({state}); the write lease is free")


def _server(health: StoreHealth) -> Finding:
    version = health.server_version
    minor = version % 10000 if version >= 100000 else version // 100 % 100  # 9.6 was 90600
    shown = f"{version // 10000}.{minor}"
    if version < MIN_SERVER_VERSION:
        return Finding(
            "store-server",
            "error",
            f"PostgreSQL {shown} is older than 13, the oldest a team store runs on",
            ("Upgrade the server, or point --store at a PostgreSQL 13 or later",),
        )
    return Finding("store-server", "ok", f"PostgreSQL {shown} (13 or later; no extension needed)")


def _rights(health: StoreHealth) -> Finding:
    if health.short_rights:
        return Finding(
            "store-privileges",
            "error",
            "This role may not " + "/".join(_TABLE_RIGHTS) + " every gno-trio table: missing on "
            + ", ".join(health.short_rights),
            (
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "
                "this role (see the README's team mode roles)",
            ),
        )  # fmt: skip
    if health.pending and not health.may_create:
        return Finding(
            "store-privileges",
            "error",
            "This role may not create gno-trio's missing tables, so it cannot start a gateway",
            (
                "Run one command with --store naming the role that owns the tables "
                "(e.g. gno-trio status), then serve as this one",
            ),
        )
    owner = "; it may also create tables" if health.may_create else ""
    return Finding("store-privileges", "ok", f"This role may read and write the tables{owner}")


def _connections(budget: ConnectionBudget) -> Finding:
    processes = "process holds" if budget.processes == 1 else "processes hold"
    share = (
        f"{budget.processes} gno-trio {processes} {budget.held} connections "
        f"(up to {PROCESS_CONNECTIONS} each), other clients {budget.others}; the server allows "
        f"{budget.usable} (max_connections {budget.max_connections} less {budget.reserved} "
        "reserved)"
    )
    if budget.needed > budget.usable:
        return Finding(
            "store-connections",
            "warn",
            f"{share}: at their full budget they need {budget.needed}",
            (
                "Raise max_connections, run fewer --workers or hosts, or put PgBouncer "
                "in session mode in front of the server",
            ),
        )
    return Finding(
        "store-connections", "ok", f"{share}: room for {budget.room} more gno-trio processes"
    )


__all__ = [
    "MIN_SERVER_VERSION",
    "ConnectionBudget",
    "Finding",
    "StoreHealth",
    "store_findings",
    "store_health",
]
