"""A team cache's units: the outbox that names them and the reads that ship them.

The outbox costs the same per row however many rows one statement marks.

Every write to a team cache records the units it touched in ``team_outbox``
by trigger. A statement that touches many rows (the journal's retention
dropping tens of thousands of entries after a large first sync, a switch of
the document index re-marking every document) must not make each marked row
look through every row marked before it: SQLite's instruction count per row
stays flat as the statement grows.

A ship reads its units a slice at a time, one query per table and slice;
each unit's body holds exactly the rows the unit-by-unit read gives.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Identity
from gno_trio.engine.team import outbox, units
from tests.support.shared import EVALS_CORPUS, required


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


def decoded(body: bytes | None) -> Any:
    """A body with each table's rows in one order (a slice's read orders them by key)."""
    if body is None:
        return None
    tables = msgspec.msgpack.decode(body)
    return [(name, columns, sorted(rows, key=repr)) for name, columns, rows in tables]


def test_units_read_a_slice_at_a_time_hold_what_one_by_one_reads_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(required(EVALS_CORPUS, "the shared gno-evals fixture corpus"), corpus)
    (corpus / "en" / "linked.md").write_text(
        "---\ntags: [zebra, okapi]\n---\n# Linked\n\nSee [[quagga]] and [the guide](guide.md).\n"
    )
    (corpus / "en" / "broken.pdf").write_bytes(b"%PDF-1.7 not really")  # an ingest error
    (tmp_path / "facts").mkdir()
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(corpus), name="notes")
        engine.collections.add(str(tmp_path / "facts"), name="facts", memory_managed=True)
        engine.sync()
        engine.memory.remember(
            text="The okapi is a forest giraffe.",
            collection="facts",
            scopes=["project:alpha"],
            identity=Identity(caller="tester", session="s"),
            decision="add",
        )
        engine.vectors.embed()
        path = engine.location.db_path
    monkeypatch.setattr(units, "UNITS_PER_READ", 7)
    conn = sqlite3.connect(path)
    try:
        keys = units.all_units(conn)
        keys.append(("d", "999999"))  # a deleted unit: no rows
        sliced = [shipped for part in units.read_units(conn, keys) for shipped in part]
        one_by_one = [(kind, key, units.read_unit(conn, (kind, key))) for kind, key in keys]
    finally:
        conn.close()
    assert len(keys) > 2 * units.UNITS_PER_READ, "more units than one slice"
    read_kinds = {kind for kind, _, body in one_by_one if body is not None}
    assert {"c", "v", "m", "d", "e", "j", "s"} <= read_kinds
    assert [(k, key) for k, key, _ in sliced] == keys
    assert [(k, key, decoded(body)) for k, key, body in sliced] == [
        (k, key, decoded(body)) for k, key, body in one_by_one
    ]
    tables = {name for _, _, body in one_by_one if body for name, _, _ in decoded(body)}
    assert {"doc_tags", "doc_links", "memory_records", "content_vectors", "documents_fts"} <= tables
