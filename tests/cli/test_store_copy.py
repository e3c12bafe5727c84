"""``gno-trio store copy``: an embedded index to a team's store, and back into a fresh
data directory, answering the same searches on the way."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from gno_trio.engine.team.url import TeamStore
from tests.conftest import gno_env
from tests.support.shared import EVALS_CORPUS, required


def gno(base: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gno_trio", *argv],
        env=gno_env(base),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def searched(base: Path, *more: str) -> list[Any]:
    done = gno(base, "search", "memory index", "--json", *more)
    assert done.returncode == 0, done.stderr
    results: list[Any] = json.loads(done.stdout)["results"]
    return results


def test_an_index_copied_to_a_store_and_back_answers_the_same(
    tmp_path: Path, team_store: TeamStore
) -> None:
    corpus = required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    here, there = tmp_path / "here", tmp_path / "there"
    assert gno(here, "init", str(corpus), "--name", "notes").returncode == 0
    assert gno(here, "update").returncode == 0
    expected = searched(here)
    assert any(expected)

    sent = gno(here, "store", "copy", "--to", team_store.url, "--json")
    assert sent.returncode == 0, sent.stderr
    report = json.loads(sent.stdout)
    assert report["documents"] == len(list(corpus.rglob("*.md"))) and report["changeSeq"] == 1
    again = gno(here, "store", "copy", "--to", team_store.url)
    assert again.returncode != 0 and "CONFLICT" in again.stderr  # never mixes two indexes

    back = gno(there, "store", "copy", "--from", team_store.url)
    assert back.returncode == 0, back.stderr
    assert "Copied index default from" in back.stdout
    assert searched(there) == expected  # a plain embedded index again
    with sqlite3.connect(there / "data" / "index-default.sqlite") as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert not {name for name in names if name.startswith("team_")}
    refused = gno(there, "store", "copy", "--from", team_store.url)
    assert refused.returncode != 0 and "CONFLICT" in refused.stderr


def one_note(tmp_path: Path) -> Path:
    """A collection folder holding one note about the memory index."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Memory index\n\nThe memory index of the team.\n")
    return notes


def test_a_team_cache_opened_without_its_store_is_refused_and_left_as_it_was(
    tmp_path: Path, team_store: TeamStore
) -> None:
    notes = one_note(tmp_path)
    base = tmp_path / "host"
    joined = ("--store", team_store.url)
    assert gno(base, "init", str(notes), "--name", "notes", *joined).returncode == 0
    assert gno(base, "update", *joined).returncode == 0
    expected = searched(base, *joined)
    assert expected
    db = base / "data" / "index-default.sqlite"
    before = db.read_bytes()

    (notes / "b.md").write_text("# Memory index too\n\nA second note.\n")
    for argv in (("update",), ("search", "memory index")):
        done = gno(base, *argv)
        assert done.returncode != 0, done.stdout  # a write here would fork the team's copy
        assert "CONFLICT" in done.stderr and "--store" in done.stderr, done.stderr
        assert "store copy --from" in done.stderr
    assert db.read_bytes() == before  # nothing written, no outbox row waiting forever
    assert searched(base, *joined) == expected  # the team's cache as it was


def lag(base: Path, store: TeamStore) -> dict[str, Any]:
    done = gno(base, "doctor", "--store", store.url, "--json")
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    found: dict[str, Any] = checks["store-lag"]
    return found


def test_doctor_with_a_store_tells_how_far_this_hosts_copy_is_behind(
    tmp_path: Path, team_store: TeamStore
) -> None:
    notes = one_note(tmp_path)
    here, there = tmp_path / "here", tmp_path / "there"
    joined = ("--store", team_store.url)
    assert "holds no changes of index default" in lag(here, team_store)["message"]
    assert gno(here, "init", str(notes), "--name", "notes", *joined).returncode == 0
    assert gno(here, "update", *joined).returncode == 0
    with psycopg.connect(team_store.url) as pg:
        row = pg.execute("SELECT change_seq FROM gno_index_state").fetchone()
    assert row is not None
    now = lag(here, team_store)
    assert now["status"] == "ok" and f"caught up to change {row[0]}" in now["message"]

    (notes / "b.md").write_text("# Memory index too\n\nA second note.\n")
    (there / "config").mkdir(parents=True)  # the team's configuration arrives in it
    written = gno(there, "update", *joined)  # another host joins and writes
    assert written.returncode == 0, written.stderr
    with psycopg.connect(team_store.url) as pg:
        moved = pg.execute("SELECT change_seq FROM gno_index_state").fetchone()
    assert moved is not None and moved[0] > row[0]
    behind = lag(here, team_store)
    assert behind["status"] == "warn", behind
    assert f"{moved[0] - row[0]} changes behind the store" in behind["message"]
    assert lag(there, team_store)["status"] == "ok"
    assert gno(here, "search", "memory", *joined).returncode == 0  # opening catches up
    assert "caught up" in lag(here, team_store)["message"]

    with psycopg.connect(team_store.url) as pg:
        pg.execute("UPDATE gno_index_state SET epoch = 'another'")
    other = lag(here, team_store)
    assert other["status"] == "warn" and "another incarnation" in other["message"], other
