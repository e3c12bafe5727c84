"""A team cache's outbox costs the same per row however many rows one statement marks.

Every write to a team cache records the units it touched in ``team_outbox``
by trigger. A statement that touches many rows (the journal's retention
dropping tens of thousands of entries after a large first sync, a switch of
the document index re-marking every document) must not make each marked row
look through every row marked before it: SQLite's instruction count per row
stays flat as the statement grows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.team import outbox


def team_cache(tmp_path: Path, fill: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """A migrated index file filled by ``fill``, then made a team cache."""
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        path = engine.location.db_path
    conn = sqlite3.connect(path, isolation_level=None)
    fill(conn)
    outbox.install(conn)
    return conn


def instructions(conn: sqlite3.Connection, sql: str) -> int:
    """SQLite virtual-machine instructions (in thousands) ``sql`` runs, triggers included."""
    ticks = 0

    def tick() -> int:
        nonlocal ticks
        ticks += 1
        return 0

    conn.set_progress_handler(tick, 1000)
    try:
        conn.execute(sql)
    finally:
        conn.set_progress_handler(None, 0)
    return ticks


def journal(rows: int) -> Callable[[sqlite3.Connection], None]:
    def fill(conn: sqlite3.Connection) -> None:
        conn.executemany(
            "INSERT INTO document_changes (kind, collection, observed_at, delta_json) "
            "VALUES ('added', 'notes', '2026-01-01T00:00:00.000Z', '{}')",
            [() for _ in range(rows)],
        )

    return fill


def documents(rows: int) -> Callable[[sqlite3.Connection], None]:
    def fill(conn: sqlite3.Connection) -> None:
        conn.executemany(
            "INSERT INTO documents (collection, rel_path, docid, uri, source_hash, source_mime, "
            "source_ext, source_size, source_mtime, indexed_at) VALUES ('notes', ?, ?, ?, 'h', "
            "'text/markdown', '.md', 1, 't', 't')",
            [(f"n{i}.md", f"#{i:06x}", f"gno://notes/n{i}.md") for i in range(rows)],
        )

    return fill


@pytest.mark.parametrize(
    ("fill", "statement"),
    [
        (journal, "DELETE FROM document_changes"),
        (
            documents,
            "UPDATE schema_meta SET value = 'tantivy' WHERE key = 'document_index'",
        ),
    ],
    ids=["journal retention", "backend switch"],
)
def test_marking_many_rows_costs_the_same_per_row(
    tmp_path: Path, fill: Callable[[int], Callable[[sqlite3.Connection], None]], statement: str
) -> None:
    costs = {}
    for rows in (500, 4000):
        conn = team_cache(tmp_path / str(rows), fill(rows))
        try:
            costs[rows] = instructions(conn, statement)
            marked = conn.execute("SELECT count(*) FROM team_outbox").fetchone()[0]
        finally:
            conn.close()
        assert marked >= rows, "every touched row is in the outbox"
    # Linear: 8x the rows, about 8x the work; a scan of the outbox per row makes it ~64x.
    assert costs[4000] < 12 * costs[500], costs
