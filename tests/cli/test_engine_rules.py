"""The engine owns its rules: every surface gets the same answer, and none can skip one.

Each test drives a real ``gno-trio`` (the CLI as a subprocess, the MCP server
over stdio) against real folders and a real index, and checks what a user
would see: exit codes, stable error codes, the change feed, ``index.yml`` on
disk. The rules: a mistyped config is an error, reads never write, every
writer takes the one lease, config writes are read-modify-write of the file
on disk, collection roots are policed, ``HAS_REFERENCES`` holds everywhere,
and stale temporary files do not outlive the next write.
"""

from __future__ import annotations

import json
import os
import pwd
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import yaml

from gno_trio.engine import HeldLease
from gno_trio.engine.store.lease import write_lease
from tests.conftest import db_snapshot, write_corpus
from tests.support.cli_support import Cli
from tests.support.stdio_session import open_mcp_server
from tests.support.tool_results import tool_error_code, tool_error_message

NOTES = {
    "alpha.md": "# Alpha\n\nkubernetes rollout plan\n",
    "beta.md": "# Beta\n\nbanana split\n",
}


@pytest.fixture
def notes(cli: Cli) -> Path:
    return write_corpus(cli.home / "notes", NOTES)


def document_count(cli: Cli) -> int:
    return int(cli.json("status")["totalDocuments"])


def journal_kinds(cli: Cli) -> list[str]:
    conn = sqlite3.connect(f"file:{cli.db}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT kind FROM document_changes ORDER BY id")]
    finally:
        conn.close()


# -- a config that does not exist is an error, never an empty index ----------------------------


def test_a_mistyped_config_path_is_an_error_and_changes_nothing(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    before = cli.state()
    assert document_count(cli) == 2
    for command in (("status",), ("search", "banana"), ("update",), ("ls",), ("changes",)):
        done = cli.run("--config", str(cli.home / "nonexistent.yml"), *command, code=1)
        assert done.stderr.startswith("Error: CONFIG_NOT_FOUND: "), done.stderr
        assert "nonexistent.yml" in done.stderr
    typo = {"GNO_CONFIG_DIR": str(cli.home / "typo")}
    for command in (("status",), ("update",), ("collection", "add", str(notes))):
        done = cli.run(*command, env=typo, code=1)
        assert "CONFIG_NOT_FOUND" in done.stderr, done.stderr
    assert not (cli.home / "typo").exists()
    assert cli.state() == before
    assert document_count(cli) == 2
    assert "inactivate" not in journal_kinds(cli)


def test_init_may_start_a_new_config_but_not_over_an_index_with_collections(
    cli: Cli, notes: Path
) -> None:
    fresh = cli.home / "fresh.yml"
    cli.run("--config", str(fresh), "init", str(notes), "--name", "notes")
    assert fresh.is_file()
    cli.run("--config", str(fresh), "update")
    other = cli.home / "other.yml"
    done = cli.run("--config", str(other), "collection", "add", str(notes), "--name", "x", code=1)
    assert "CONFIG_NOT_FOUND" in done.stderr and "already holds collections" in done.stderr
    assert not other.exists()


# -- reads never write; writers reconcile and say so ---------------------------------------------


def test_reads_never_write_and_the_next_writer_reports_the_reconciliation(
    cli: Cli, notes: Path
) -> None:
    second = write_corpus(cli.home / "second", {"c.md": "# C\n\nbanana cake\n"})
    cli.run("init", str(notes), "--name", "notes")
    cli.run("collection", "add", str(second), "--name", "second")
    cli.run("update")
    data = yaml.safe_load(cli.config_file.read_text("utf-8"))
    data["collections"] = [c for c in data["collections"] if c["name"] != "second"]
    cli.config_file.write_text(yaml.safe_dump(data), "utf-8")
    before = db_snapshot(cli.db)
    for command in (
        ("status",),
        ("ls",),
        ("search", "banana"),
        ("get", "notes/alpha.md"),
        ("changes",),
        ("collection", "list"),
    ):
        cli.run(*command)
    assert db_snapshot(cli.db) == before
    updated = cli.json("update")
    assert updated["configChanges"] == {
        "added": [],
        "updated": [],
        "removed": [{"collection": "second", "documents": 1}],
    }
    assert [c["name"] for c in cli.json("status")["collections"]] == ["notes"]
    assert cli.json("update")["configChanges"]["removed"] == []


def test_a_writer_reports_hand_edits_but_not_its_own_change(cli: Cli, notes: Path) -> None:
    hand = write_corpus(cli.home / "hand", {"h.md": "# H\n"})
    mine = write_corpus(cli.home / "mine", {"m.md": "# M\n"})
    assert cli.run("init", str(notes), "--name", "notes").stderr == ""
    data = yaml.safe_load(cli.config_file.read_text("utf-8"))
    data["collections"].append({"name": "hand", "path": str(hand)})
    cli.config_file.write_text(yaml.safe_dump(data), "utf-8")
    added = cli.run("collection", "add", str(mine), "--name", "mine")
    assert "collection hand added to the index" in added.stderr
    assert "mine" not in added.stderr
    assert cli.run("update").stderr == ""


# -- one lease for every writer -------------------------------------------------------------------


def test_two_concurrent_updates_record_each_change_once(cli: Cli) -> None:
    big = write_corpus(
        cli.home / "big",
        {f"folder{n % 12}/note-{n}.md": f"# Note {n}\n\nword{n} shared text\n" for n in range(600)},
    )
    cli.run("init", str(big), "--name", "big")
    env = dict(cli.env, GNO_WRITE_LOCK_WAIT_MS="120000")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gno_trio", "update", "--json"],
            env=env,
            cwd=cli.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [(proc.wait(timeout=300), *proc.communicate()) for proc in procs]
    assert all(code == 0 for code, _, _ in outcomes), outcomes
    added = sorted(json.loads(out)["collections"][0]["added"] for _, out, _ in outcomes)
    assert added == [0, 600]  # the second ran after the first and found nothing to do
    kinds = journal_kinds(cli)
    assert kinds.count("create") == 600 and len(kinds) == 600


def test_a_writer_that_gives_up_exits_4_and_names_the_holder(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    with write_lease(cli.data_dir / ".mcp-write.lock", wait_seconds=0) as held:
        assert isinstance(held, HeldLease)
        for command in (
            ("update",),
            ("collection", "remove", "notes"),
            ("capture", "a note", "-c", "notes"),
        ):
            done = cli.run(*command, env={"GNO_WRITE_LOCK_WAIT_MS": "300"}, code=4)
            assert "LOCKED" in done.stderr and f"process {os.getpid()}" in done.stderr
    assert document_count(cli) == 0


ROUNDS = 10


async def test_cli_update_racing_mcp_capture_and_remember_leaves_a_consistent_index(
    cli: Cli, notes: Path
) -> None:
    facts = cli.home / "facts"
    facts.mkdir()
    cli.run("init", str(notes), "--name", "notes")
    cli.run("collection", "add", str(facts), "--name", "facts", "--memory")
    env = dict(cli.env, GNO_WRITE_LOCK_WAIT_MS="60000")
    failures: list[str] = []

    async def updates() -> None:
        for _ in range(5):
            done = await trio.run_process(
                [sys.executable, "-m", "gno_trio", "update"],
                env=env,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
            if done.returncode != 0:
                failures.append(done.stderr.decode())

    async with (
        open_mcp_server(env, "--enable-write", client_name="race") as session,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(updates)
        nursery.start_soon(updates)
        for n in range(ROUNDS):
            captured = await session.tool(
                "gno_capture", {"collection": "notes", "content": f"race note {n} banana"}
            )
            assert not captured.get("isError"), captured
            assert captured["structuredContent"]["sync"]["status"] == "completed"
            remembered = await session.tool(
                "gno_remember",
                {
                    "text": f"Fact number {n} about the race.",
                    "collection": "facts",
                    "scopes": ["project:race"],
                    "decision": "add",
                },
            )
            assert not remembered.get("isError"), remembered
    assert failures == []
    conn = sqlite3.connect(f"file:{cli.db}?mode=ro", uri=True)
    try:
        orphans = conn.execute(
            "SELECT COUNT(*) FROM memory_records m LEFT JOIN documents d "
            "ON d.id = m.document_id WHERE d.id IS NULL OR d.active = 0"
        ).fetchone()[0]
        facts_indexed = conn.execute(
            "SELECT COUNT(*) FROM documents WHERE collection = 'facts' AND active = 1"
        ).fetchone()[0]
        creates = conn.execute(
            "SELECT COUNT(*) FROM document_changes WHERE kind = 'create'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert orphans == 0 and facts_indexed == ROUNDS
    assert creates == 2 + ROUNDS + ROUNDS  # each document created exactly once


# -- config writes are read-modify-write of the file on disk ------------------------------------


async def test_a_running_server_keeps_what_others_wrote_to_index_yml(cli: Cli, notes: Path) -> None:
    shared = write_corpus(cli.home / "shared", {"s.md": "# S\n\nshared\n"})
    later = write_corpus(cli.home / "later", {"l.md": "# L\n\nlater\n"})
    cli.run("init", str(notes), "--name", "notes")
    cli.run("collection", "add", str(shared), "--name", "shared")
    data = yaml.safe_load(cli.config_file.read_text("utf-8"))
    for entry in data["collections"]:
        entry["egressPolicy"] = "remote"
    cli.config_file.write_text(yaml.safe_dump(data), "utf-8")
    async with open_mcp_server(cli.env, "--enable-write", client_name="rmw") as session:
        # While the server runs: a collection added from the CLI, a policy tightened by hand.
        added = write_corpus(cli.home / "cli-added", {"c.md": "# C\n\ncli\n"})
        cli.run("collection", "add", str(added), "--name", "cliadded")
        data = yaml.safe_load(cli.config_file.read_text("utf-8"))
        for entry in data["collections"]:
            if entry["name"] == "shared":
                entry["egressPolicy"] = "local_only"
        cli.config_file.write_text(yaml.safe_dump(data), "utf-8")
        seen = await session.tool("gno_egress_policy_get", {"collection": "cliadded"})
        assert not seen.get("isError"), seen  # the server re-read index.yml
        job = await session.tool("gno_add_collection", {"path": str(later), "name": "later"})
        assert not job.get("isError"), job
        with trio.fail_after(30):
            while True:
                status = await session.tool(
                    "gno_job_status", {"jobId": job["structuredContent"]["jobId"]}
                )
                if status["structuredContent"]["status"] != "running":
                    break
                await trio.sleep(0.05)
        removed = await session.tool("gno_remove_collection", {"collection": "later"})
        assert not removed.get("isError"), removed
    final = {
        c["name"]: c for c in yaml.safe_load(cli.config_file.read_text("utf-8"))["collections"]
    }
    assert set(final) == {"notes", "shared", "cliadded"}
    assert final["shared"]["egressPolicy"] == "local_only"
    assert final["notes"]["egressPolicy"] == "remote"


# -- collection roots are policed on every surface ------------------------------------------------


def forbidden_roots(cli: Cli) -> list[str]:
    (cli.home / ".ssh").mkdir(exist_ok=True)
    link = cli.home / "innocent"
    if not link.exists():
        link.symlink_to(cli.home / ".ssh")
    roots = [str(cli.config_dir), str(cli.data_dir), str(cli.config_dir.parent), "/proc/self/cwd"]
    roots += [str(link), str(cli.home / ".ssh")]
    roots += [p for p in ("/etc/ssh", "/var/log", "/run", "/sys/kernel") if Path(p).is_dir()]
    # Token stores and browser profiles under ~/.config, and the account's own home
    # (the account database's, and the superuser's) while $HOME points elsewhere.
    gh = cli.home / ".config" / "gh"
    gh.mkdir(parents=True, exist_ok=True)
    (gh / "hosts.yml").write_text("github.com:\n  oauth_token: gho_0000\n")
    profile = cli.home / ".config" / "google-chrome" / "Default"
    profile.mkdir(parents=True, exist_ok=True)
    roots += [str(gh), str(profile), str(cli.home / ".config")]
    roots += [h for h in (pwd.getpwuid(os.getuid()).pw_dir, "/root") if Path(h).is_dir()]
    return roots


def test_forbidden_roots_are_refused_by_the_cli(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    (cli.data_dir / "inside").mkdir(parents=True, exist_ok=True)
    before = cli.state()
    roots = [*forbidden_roots(cli), str(cli.data_dir / "inside")]
    outcomes = cli.run_many([("collection", "add", root, "--name", "x") for root in roots])
    for root, (code, _, stderr) in zip(roots, outcomes, strict=True):
        assert code == 1 and stderr.startswith("Error: FORBIDDEN_ROOT: "), (root, stderr)
    assert cli.state() == before


def test_a_folder_of_ones_own_under_the_config_home_is_still_a_root(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    own = cli.home / ".config" / "nvim"
    own.mkdir(parents=True)
    (own / "init.lua").write_text("-- editor settings\n")
    cli.run("collection", "add", str(own), "--name", "editor")


async def test_forbidden_roots_are_refused_over_mcp(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    before = cli.state()
    async with open_mcp_server(cli.env, "--enable-write", client_name="roots") as session:
        for root in forbidden_roots(cli):
            result = await session.tool("gno_add_collection", {"path": root, "name": "x"})
            assert result.get("isError") is True, (root, result)
            assert tool_error_code(result) == "FORBIDDEN_ROOT", (root, result)
    assert cli.state() == before


async def test_a_relative_root_is_refused_over_mcp(cli: Cli, notes: Path) -> None:
    """The server's working directory is not the caller's: ``tests`` would name the server's."""
    cli.run("init", str(notes), "--name", "notes")
    before = cli.state()
    async with open_mcp_server(cli.env, "--enable-write", client_name="roots") as session:
        for root in ("tests", "./tests", "tests/../tests"):
            result = await session.tool("gno_add_collection", {"path": root, "name": "x"})
            assert result.get("isError") is True, (root, result)
            assert tool_error_code(result) == "INVALID_PATH", (root, result)
            assert "absolute" in tool_error_message(result), result
    assert cli.state() == before


def test_a_hand_edited_root_over_the_config_dir_cannot_be_written_through(
    cli: Cli, notes: Path
) -> None:
    cli.run("init", str(notes), "--name", "notes")
    data = yaml.safe_load(cli.config_file.read_text("utf-8"))
    data["collections"].append({"name": "cfg", "path": str(cli.config_dir)})
    cli.config_file.write_text(yaml.safe_dump(data), "utf-8")
    config_before = cli.config_file.read_bytes()
    done = cli.run(
        "capture", "egressPolicy: remote", "-c", "cfg", "--path", "index.yml", "--overwrite", code=1
    )
    assert done.stderr.startswith("Error: FORBIDDEN_ROOT: "), done.stderr
    assert cli.config_file.read_bytes() == config_before
    report = cli.json("update")["collections"]
    cfg = next(r for r in report if r["collection"] == "cfg")
    assert cfg["errors"][0]["code"] == "FORBIDDEN_ROOT" and cfg["added"] == 0


# -- one rule, one answer -------------------------------------------------------------------------


async def test_a_referenced_collection_is_refused_by_cli_and_mcp_alike(
    cli: Cli, notes: Path
) -> None:
    cli.run("init", str(notes), "--name", "notes")
    data = yaml.safe_load(cli.config_file.read_text("utf-8"))
    data["contexts"] = [{"scopeType": "collection", "scopeKey": "notes:", "text": "Team notes"}]
    cli.config_file.write_text(yaml.safe_dump(data), "utf-8")
    before = cli.state()
    done = cli.run("collection", "remove", "notes", code=1)
    assert done.stderr.startswith("Error: HAS_REFERENCES: "), done.stderr
    async with open_mcp_server(cli.env, "--enable-write", client_name="refs") as session:
        result = await session.tool("gno_remove_collection", {"collection": "notes"})
        assert tool_error_code(result) == "HAS_REFERENCES"
    assert cli.state() == before


# -- stale temporary files go at the next write ---------------------------------------------------


def test_stale_temporary_files_are_removed_by_the_next_write(cli: Cli, notes: Path) -> None:
    facts = cli.home / "facts"
    (facts / "facts" / "2020-01-01").mkdir(parents=True)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("collection", "add", str(facts), "--name", "facts", "--memory")
    stale_fact = facts / "facts" / "2020-01-01" / ".fact-0123456789abcdef.tmp"
    stale_fact.write_text("the full text of a fact a killed writer left behind", "utf-8")
    stale_note = notes / "inbox" / ".gno-capture-0123456789abcdef.tmp"
    stale_note.parent.mkdir()
    stale_note.write_text("half a note", "utf-8")
    stale_config = cli.config_dir / ".index.yml.k2j3h4.tmp"
    stale_config.write_text("collections: []\n", "utf-8")
    cli.run(
        "remember", "The kettle is descaled monthly.", "-c", "facts", "--scope", "home:x", "--add"
    )
    assert not stale_fact.exists()
    cli.run("capture", "a fresh note", "-c", "notes", "--folder", "inbox")
    assert not stale_note.exists()
    other = write_corpus(cli.home / "other", {"o.md": "# O\n"})
    cli.run("collection", "add", str(other), "--name", "other")
    assert not stale_config.exists()
    leftovers = [p for p in cli.home.rglob("*.tmp")] + list(cli.config_dir.glob("*.tmp"))
    assert leftovers == []
