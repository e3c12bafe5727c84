"""The writer's outbox of a team cache: triggers that record every unit a write touches.

:func:`install` makes an index file a team cache: the ``team_outbox`` table
the triggers fill (the key of every unit a local transaction touches,
inside that transaction, so a committed write always has its outbox rows),
and ``team_replica``, which holds the file's stamp (the epoch and change
sequence it was caught up to) and, while the team's units are applied, the
flag row the triggers skip on. Only team mode installs any of it; ``store
copy --from`` takes it out again (:func:`uninstall`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from gno_trio.engine.store.database import StoreUnreadable, connect
from gno_trio.engine.team.units import (
    APPLYING,
    DOCUMENT,
    DOCUMENT_INDEX,
    KINDS,
    Table,
    UnitKey,
)
from gno_trio.errors import GnoError

LOCAL_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS team_outbox (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS team_replica (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _key_expr(table: Table, row: str) -> str:
    """The unit's key as text: compared with the outbox's TEXT ``key`` column as an integer
    it would be, the comparison would take numeric affinity and skip the primary key, and
    every marked row would scan the whole outbox (a prune of 90,000 journal entries, or a
    backend switch of 100,000 documents, then takes hours)."""
    if table.columns:
        return f"json_array({', '.join(f'{row}.{column}' for column in table.columns)})"
    return f"CAST({row}.{table.key} AS TEXT)"


def _mark(code: str, key: str) -> str:
    # Not INSERT OR IGNORE: an outer UPSERT's conflict rule would override it.
    return (
        f"INSERT INTO team_outbox (kind, key) SELECT '{code}', {key} WHERE NOT EXISTS "
        f"(SELECT 1 FROM team_outbox WHERE kind = '{code}' AND key = {key});"
    )


def _backend_triggers(when: str) -> Iterable[str]:
    """A switch of backend rewrites ``documents_fts`` without touching ``documents``:
    every document is shipped again, with its full-text row as the writer now keeps it."""
    unit = _mark(DOCUMENT_INDEX.code, "'document_index'")
    every_document = (
        f"INSERT INTO team_outbox (kind, key) SELECT '{DOCUMENT.code}', "
        "CAST(id AS TEXT) FROM documents WHERE NOT EXISTS (SELECT 1 FROM team_outbox o "
        f"WHERE o.kind = '{DOCUMENT.code}' AND o.key = CAST(documents.id AS TEXT));"
    )
    switched = f"{when} AND new.key = 'document_index' AND new.value IN ('fts5', 'tantivy')"
    yield (
        "CREATE TRIGGER team_outbox_backend_switch AFTER INSERT ON schema_meta "
        f"{switched} BEGIN {unit} {every_document} END"
    )
    # The row is there from the first migration on, so a switch is an UPDATE (an UPSERT's);
    # a sync's pause of tantivy's queue (QUEUE_PAUSED and back) switches nothing.
    yield (
        "CREATE TRIGGER team_outbox_backend_switch_update AFTER UPDATE ON "
        f"schema_meta {switched} AND (old.value = 'fts5') <> (new.value = 'fts5') "
        f"BEGIN {unit} {every_document} END"
    )
    for op, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
        yield (
            f"CREATE TRIGGER team_outbox_backend_generation_{op.lower()} "
            f"AFTER {op} ON schema_meta {when} AND {row}.key = 'document_index_generation' "
            f"BEGIN {unit} END"
        )


def _triggers() -> Iterable[str]:
    when = f"WHEN NOT EXISTS (SELECT 1 FROM team_replica WHERE key = '{APPLYING}')"
    yield from _backend_triggers(when)
    for kind in KINDS:
        if kind is DOCUMENT_INDEX:
            continue
        for table in kind.tables:
            for op, rows in (
                ("INSERT", ("NEW",)),
                ("UPDATE", ("OLD", "NEW")),
                ("DELETE", ("OLD",)),
            ):
                inserts = " ".join(_mark(kind.code, _key_expr(table, row)) for row in rows)
                yield (
                    f"CREATE TRIGGER team_outbox_{table.name}_{op.lower()} "
                    f"AFTER {op} ON {table.name} {when} BEGIN {inserts} END"
                )


def install(conn: sqlite3.Connection) -> None:
    """Make ``conn``'s file a team cache: the outbox, the stamp table and the triggers.

    Idempotent; runs in the caller's transaction. The triggers are made anew
    each time, so a cache made by an older build gets this build's. Only team
    mode calls it, so an embedded index file never carries any of it.
    """
    for statement in LOCAL_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    _drop_triggers(conn)
    for statement in _triggers():
        conn.execute(statement)


def _drop_triggers(conn: sqlite3.Connection) -> None:
    names = [
        str(row[0])
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'team_outbox_%'"
        )
    ]
    for name in names:
        conn.execute(f'DROP TRIGGER "{name}"')


def uninstall(conn: sqlite3.Connection) -> None:
    """Make a team cache a plain index file again (the triggers and tables of
    :func:`install` dropped), in the caller's transaction."""
    _drop_triggers(conn)
    conn.execute("DROP TABLE IF EXISTS team_outbox")
    conn.execute("DROP TABLE IF EXISTS team_replica")


def refuse_detached(conn: sqlite3.Connection, index_name: str) -> None:
    """``CONFLICT`` when ``conn``'s file is a team cache opened without its store.

    Its triggers would keep filling an outbox no one ships, and its writes
    would fork the file from the team's copy (and be undone by the next
    catch-up): such a file is used with its store, or copied out of it.
    """
    held = cache_stamp(conn)
    if held is None:
        return
    seq = held[1]
    raise GnoError(
        "CONFLICT",
        f"Index {index_name} here is a cache of a team's shared index (caught up to change "
        f"{seq}); without its store it would drift from the team. Pass --store URL (or set "
        "GNO_STORE) to use it with the team, or make a plain index with `gno-trio store "
        "copy --from URL` in a fresh data directory",
    )


# -- the stamp ------------------------------------------------------------------


def stamp(conn: sqlite3.Connection) -> tuple[str | None, int]:
    """``(epoch, change_seq)`` this file holds; ``(None, 0)`` for a file never caught up."""
    rows = dict(
        conn.execute("SELECT key, value FROM team_replica WHERE key IN ('epoch', 'change_seq')")
    )
    return rows.get("epoch"), int(rows.get("change_seq", 0))


def cache_stamp(conn: sqlite3.Connection) -> tuple[str | None, int] | None:
    """:func:`stamp` of a team cache; None for a file team mode never made one."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'team_replica'"
    ).fetchone()
    return None if found is None else stamp(conn)


def file_stamp(db_path: Path) -> tuple[str | None, int] | None:
    """:func:`cache_stamp` of the index file at ``db_path``, opened read-only; None when
    there is no such file, or it cannot be read (the doctor's database check says why)."""
    if not db_path.exists():
        return None
    try:
        conn = connect(db_path, readonly=True)
    except GnoError:
        return None
    try:
        return cache_stamp(conn)
    except (StoreUnreadable, sqlite3.Error):
        return None
    finally:
        conn.close()


def set_stamp(conn: sqlite3.Connection, epoch: str, change_seq: int) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO team_replica (key, value) VALUES (?, ?)",
        [("epoch", epoch), ("change_seq", str(change_seq))],
    )


# -- the outbox -------------------------------------------------------------------


def outbox(conn: sqlite3.Connection) -> list[UnitKey]:
    return [
        (str(kind), str(key)) for kind, key in conn.execute("SELECT kind, key FROM team_outbox")
    ]


def clear_outbox(conn: sqlite3.Connection, keys: Sequence[UnitKey] | None = None) -> None:
    if keys is None:
        conn.execute("DELETE FROM team_outbox")
    else:
        conn.executemany("DELETE FROM team_outbox WHERE kind = ? AND key = ?", keys)


def fill_outbox(conn: sqlite3.Connection) -> None:
    """Record every unit of the file as changed (the first host of a team ships them all)."""
    for kind in KINDS:
        conn.execute(
            f"INSERT OR IGNORE INTO team_outbox (kind, key) "
            f"SELECT '{kind.code}', * FROM ({kind.enumerate_sql})"
        )


__all__ = [
    "LOCAL_SCHEMA",
    "cache_stamp",
    "clear_outbox",
    "file_stamp",
    "fill_outbox",
    "install",
    "outbox",
    "refuse_detached",
    "set_stamp",
    "stamp",
    "uninstall",
]
