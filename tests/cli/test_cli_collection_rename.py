"""``collection rename OLD NEW``: one step that moves URIs, index rows, contexts and config."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BACKENDS, choose_backend, write_corpus
from tests.support.cli_support import Cli, make_cli

NOTES = {
    "plan.md": "---\ntags: [roadmap]\n---\n# Plan\n\nokapi rollout, see [[other]]\n",
    "sub/other.md": "# Other\n\nzebra crossing\n",
}
ELSEWHERE = {"index.md": "# Index\n\nlinks to [[notes:plan]] and [[plan]]\n"}


def _indexed(tmp_path: Path, backend: str | None = None) -> Cli:
    cli = make_cli(tmp_path)
    if backend is not None:
        choose_backend(cli.config_dir, backend)
    cli.run("init", str(write_corpus(cli.home / "notes", NOTES)), "--name", "notes")
    cli.run("collection", "add", str(write_corpus(cli.home / "else", ELSEWHERE)), "--name", "else")
    cli.run("update")
    return cli


@pytest.mark.parametrize("backend", BACKENDS)
def test_rename_moves_every_read_to_the_new_name(tmp_path: Path, backend: str) -> None:
    cli = _indexed(tmp_path, backend)
    cli.run("context", "add", "notes:", "Personal notes")
    cli.run("context", "add", "gno://notes/sub", "Sub folder")
    docid = cli.json("get", "notes/plan.md")["docid"]

    result = cli.json("collection", "rename", "Notes", "projects")
    assert result == {
        "renamed": True,
        "from": "notes",
        "to": "projects",
        "documents": 2,
        "activeDocuments": 2,
        "linksNamingOldName": 1,  # else/index.md's [[notes:plan]]
        "documentsWithSuchLinks": 1,
    }

    hits = cli.json("search", "okapi")["results"]
    assert [h["uri"] for h in hits] == ["gno://projects/plan.md"]
    assert hits[0]["context"].splitlines() == ["Personal notes"]
    assert [h["uri"] for h in cli.json("search", "zebra", "-c", "projects")["results"]] == [
        "gno://projects/sub/other.md"
    ]
    assert cli.json("search", "roadmap", "-c", "projects")["results"][0]["uri"] == (
        "gno://projects/plan.md"
    )
    assert cli.json("search", "okapi", "-c", "notes", code=1)["error"] == "NOT_FOUND"
    doc = cli.json("get", "gno://projects/plan.md")
    assert (doc["docid"], doc["uri"]) == (docid, "gno://projects/plan.md")
    for ref in ("notes/plan.md", "gno://notes/plan.md"):
        assert cli.json("get", ref, code=1)["error"] == "NOT_FOUND"
    assert [d["uri"] for d in cli.json("ls", "projects")["documents"]] == [
        "gno://projects/plan.md",
        "gno://projects/sub/other.md",
    ]

    links = cli.json("links", "projects/plan.md")["links"]
    assert [link.get("resolvedUri") for link in links] == ["gno://projects/sub/other.md"]
    backlinks = cli.json("backlinks", "projects/sub/other.md")["backlinks"]
    assert [b["sourceUri"] for b in backlinks] == ["gno://projects/plan.md"]

    assert [(c["scope"], c["text"]) for c in cli.json("context", "list")] == [
        ("projects:", "Personal notes"),
        ("gno://projects/sub", "Sub folder"),
    ]
    names = [c["name"] for c in cli.json("collection", "list")["collections"]]
    assert names == ["projects", "else"]
    config = cli.config_file.read_text()
    assert "name: projects" in config and "name: notes" not in config

    feed = cli.json("changes", "--collection", "projects")["changes"]
    renames = [c for c in feed if c["kind"] == "rename"]
    assert {(c["previous"]["uri"], c["current"]["uri"]) for c in renames} == {
        ("gno://notes/plan.md", "gno://projects/plan.md"),
        ("gno://notes/sub/other.md", "gno://projects/sub/other.md"),
    }
    assert [c["kind"] for c in feed].count("create") == 2  # the history stays with it

    report = cli.json("update")["collections"]
    assert {(r["collection"], r["added"], r["removed"], r["unchanged"]) for r in report} == {
        ("projects", 0, 0, 2),
        ("else", 0, 0, 1),
    }
    assert cli.json("search", "okapi")["results"][0]["uri"] == "gno://projects/plan.md"


def test_refused_renames_change_nothing(tmp_path: Path) -> None:
    cli = _indexed(tmp_path)
    before = cli.state()
    for args, code in (
        (("notes", "else"), "DUPLICATE"),
        (("notes", "NOTES"), "DUPLICATE"),
        (("nope", "fresh"), "NOT_FOUND"),
        (("notes", "bad name"), "INVALID_NAME"),
        (("notes", "_x"), "INVALID_NAME"),
    ):
        refused = cli.json("collection", "rename", *args, code=1)
        assert refused["error"] == code, (args, refused)
    assert "Collection already exists: else" in (
        cli.run("collection", "rename", "notes", "else", code=1).stderr
    )
    assert cli.state() == before


def test_a_rename_whose_commit_fails_leaves_index_and_config_as_they_were(
    tmp_path: Path,
) -> None:
    """The config is written, then the database cannot commit: the old config comes back.

    The file size limit lets the small config file (and SQLite's 32 KiB
    shared-memory file) be written but not the write-ahead log of a
    transaction that moves a few hundred documents.
    """
    cli = make_cli(tmp_path)
    many = {f"n{i:03}.md": f"# Note {i}\n\nbody {i}\n" for i in range(300)}
    cli.run("init", str(write_corpus(cli.home / "notes", many)), "--name", "notes")
    cli.run("update")
    before = cli.state()

    def little_room() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (32 * 1024, 32 * 1024))

    done = subprocess.run(
        [sys.executable, "-m", "gno_trio", "collection", "rename", "notes", "projects", "--json"],
        env={**cli.env, "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=cli.home,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=little_room,
        check=False,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "RUNTIME" in done.stderr
    assert cli.state() == before
    assert cli.json("get", "notes/n001.md")["uri"] == "gno://notes/n001.md"
    cli.run("collection", "rename", "notes", "projects")  # with room it works
    assert cli.json("get", "projects/n001.md")["uri"] == "gno://projects/n001.md"


def test_rename_onto_the_name_of_a_removed_collection(tmp_path: Path) -> None:
    """Rows a removed collection left behind under the new name make way for the renamed one."""
    cli = _indexed(tmp_path)
    old = write_corpus(cli.home / "old", {"plan.md": "# Old plan\n\nwalrus\n"})
    cli.run("collection", "add", str(old), "--name", "projects")
    cli.run("update")
    cli.run("collection", "remove", "projects")
    cli.run("collection", "rename", "notes", "projects")
    assert cli.json("get", "projects/plan.md")["title"] == "Plan"
    assert cli.json("search", "walrus")["results"] == []
    assert cli.json("search", "okapi")["results"][0]["uri"] == "gno://projects/plan.md"


def test_vectors_follow_the_renamed_collection(tmp_path: Path) -> None:
    cli = _indexed(tmp_path)
    cli.run("embed")
    cli.run("collection", "rename", "notes", "projects")
    assert cli.json("status")["embeddingBacklog"] == 0  # nothing to embed again
    found = cli.json("vsearch", "pedestrian crossing", "-c", "projects", "-n", "1")
    assert [h["uri"] for h in found["results"]] == ["gno://projects/sub/other.md"]


def test_rename_has_help(tmp_path: Path) -> None:
    text = make_cli(tmp_path).run("collection", "rename", "--help").stdout
    assert "current name" in text and "new name" in text
