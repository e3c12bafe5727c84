"""``cleanup [--dry-run]``: inactive documents go for good, with what only they used."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli

SHARED_TEXT = "# Shared\n\nthe same words in two folders\n"


def _rows(cli: Cli, sql: str) -> int:
    conn = sqlite3.connect(cli.db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_cleanup_deletes_what_no_active_document_uses(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    notes = write_corpus(
        cli.home / "notes",
        {"keep.md": "# Keep\n\nkayak paddle\n", "gone.md": "# Gone\n\nwalrus tusk\n"},
    )
    other = write_corpus(cli.home / "other", {"same.md": SHARED_TEXT, "own.md": "# Own\n\nbison\n"})
    cli.run("init", str(notes), "--name", "notes")
    write_corpus(notes, {"same.md": SHARED_TEXT})
    cli.run("collection", "add", str(other), "--name", "other")
    cli.run("update")
    cli.run("embed")
    (notes / "gone.md").unlink()
    cli.run("update")
    cli.run("collection", "remove", "other")
    assert _rows(cli, "SELECT COUNT(*) FROM documents WHERE active = 0") == 3

    before = cli.state()
    planned = cli.json("cleanup", "--dry-run")
    assert planned["dryRun"] is True
    # gone.md and other/own.md had texts of their own; other/same.md shares notes/same.md's.
    assert {k: v for k, v in planned["removed"].items() if k != "vectors"} == {
        "documents": 3,
        "contents": 2,
        "chunks": 2,
    }
    assert planned["removed"]["vectors"] >= 2
    assert cli.state() == before
    assert cli.run("cleanup", "--dry-run").stdout.startswith("Would remove 3 inactive documents")

    assert cli.json("cleanup")["removed"] == planned["removed"]
    assert _rows(cli, "SELECT COUNT(*) FROM documents WHERE active = 0") == 0
    assert _rows(cli, "SELECT COUNT(*) FROM content") == 2
    assert cli.json("cleanup")["removed"] == {
        "documents": 0,
        "contents": 0,
        "chunks": 0,
        "vectors": 0,
    }

    assert cli.json("search", "kayak")["results"][0]["uri"] == "gno://notes/keep.md"
    assert cli.json("search", "walrus")["results"] == []
    assert cli.json("get", "notes/gone.md", code=1)["error"] == "NOT_FOUND"
    assert cli.json("status")["embeddingBacklog"] == 0  # the kept texts keep their vectors
    found = cli.json("vsearch", "canoe", "-n", "1")["results"]
    assert found[0]["uri"] == "gno://notes/keep.md"

    cli.run("collection", "add", str(other), "--name", "other")
    again = {r["collection"]: r for r in cli.json("update")["collections"]}
    assert (again["other"]["added"], again["other"]["reactivated"]) == (2, 0)
    assert "count what would go, delete nothing" in cli.run("cleanup", "--help").stdout
