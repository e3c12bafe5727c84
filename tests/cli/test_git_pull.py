"""``update --git-pull``, ``index --git-pull`` and ``gitPull: true`` on the MCP write tools.

A local bare repository is the remote: a second clone pushes to it, and the
collection (another clone) is pulled fast-forward before it is synced. A
folder that is not a work tree, a remote the collection's egress policy
forbids and a pull that is not a fast-forward are each refused or reported
per collection, while the files as they are still get indexed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_support import Cli, make_cli
from tests.support.loopback_json import ModelServer
from tests.support.shared import required_program
from tests.support.stdio_session import finished_job, spawn, tool


@pytest.fixture(autouse=True)
def _git_installed() -> None:
    required_program("git")


IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        env={**os.environ, **IDENTITY},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit(work: Path, rel: str, text: str) -> None:
    (work / rel).write_text(text, encoding="utf-8")
    git(work, "add", rel)
    git(work, "commit", "-q", "-m", f"add {rel}")


class Repos:
    """A bare remote, the collection's clone and a second clone that pushes to the remote."""

    def __init__(self, base: Path) -> None:
        self.remote = base / "remote.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(self.remote))
        self.author = base / "author"
        git(base, "clone", "-q", str(self.remote), str(self.author))
        git(self.author, "checkout", "-q", "-b", "main")
        commit(self.author, "first.md", "# First\n\nmarmot notes\n")
        git(self.author, "push", "-q", "-u", "origin", "main")
        self.notes = base / "notes"
        git(base, "clone", "-q", str(self.remote), str(self.notes))

    def push(self, rel: str, text: str) -> None:
        commit(self.author, rel, text)
        git(self.author, "push", "-q", "origin", "main")


@pytest.fixture
def repos(tmp_path: Path) -> Repos:
    return Repos(tmp_path)


@pytest.fixture
def cli(tmp_path: Path, repos: Repos) -> Cli:
    sandbox = make_cli(tmp_path / "sandbox")
    sandbox.env.update(IDENTITY)  # the user's own git settings stay out of the test
    sandbox.run("init", str(repos.notes), "--name", "notes")
    sandbox.run("update")
    return sandbox


def json_of(done: subprocess.CompletedProcess[str]) -> Any:
    """The command's result: the first JSON document on stdout (a failure's error follows it)."""
    return json.JSONDecoder().raw_decode(done.stdout)[0]


def uris(cli: Cli, word: str) -> list[str]:
    return [hit["uri"] for hit in cli.json("search", word)["results"]]


def test_update_git_pull_fast_forwards_then_syncs(cli: Cli, repos: Repos) -> None:
    repos.push("second.md", "# Second\n\nwombat notes\n")
    assert uris(cli, "wombat") == []
    done = cli.json("update", "--git-pull")
    (pulled,) = done["gitPull"]
    assert pulled["collection"] == "notes" and pulled["status"] == "updated"
    assert pulled["remote"] == "origin" and pulled["destinationZone"] == "local_process"
    assert pulled["head"] == git(repos.author, "rev-parse", "HEAD")
    assert uris(cli, "wombat") == ["gno://notes/second.md"]
    again = cli.run("update", "--git-pull")
    assert "notes: git pull --ff-only -> up to date" in again.stderr
    assert "gitPull" not in cli.json("update")  # without the flag nothing is pulled


def test_git_and_proxy_variables_of_the_caller_do_not_reach_git(cli: Cli, repos: Repos) -> None:
    repos.push("third.md", "# Third\n\nnumbat notes\n")
    elsewhere = {
        "GIT_DIR": str(repos.author / ".git"),
        "GIT_WORK_TREE": str(repos.author),
        "GIT_ASKPASS": "/bin/false",
        "https_proxy": "http://127.0.0.1:9",
    }
    result = json_of(cli.run("update", "--git-pull", "--json", env=elsewhere))
    assert result["gitPull"][0]["status"] == "updated"
    assert (repos.notes / "third.md").is_file()


def test_a_folder_that_is_not_a_work_tree_is_refused_and_still_indexed(
    cli: Cli, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "p.md").write_text("# P\n\nplatypus\n", encoding="utf-8")
    cli.run("collection", "add", str(plain), "--name", "plain")
    refused = cli.run("update", "plain", "--git-pull", code=2)
    assert "plain: git pull --ff-only -> refused: NOT_A_GIT_REPOSITORY" in refused.stderr
    assert "Error: GIT_PULL_FAILED" in refused.stderr
    assert uris(cli, "platypus") == ["gno://plain/p.md"]


def test_a_remote_the_egress_policy_forbids_is_never_contacted(cli: Cli, repos: Repos) -> None:
    git(repos.notes, "remote", "set-url", "origin", "https://git.example.invalid/notes.git")
    refused = cli.run("update", "--git-pull", "--json", code=2)
    (pulled,) = json_of(refused)["gitPull"]
    assert (pulled["status"], pulled["code"]) == ("refused", "EGRESS_DENIED")
    assert pulled["destinationZone"] == "remote" and "local_only" in pulled["message"]
    assert "example.invalid" not in refused.stdout + refused.stderr  # the URL is never echoed
    receipts = cli.json("egress-audit", "list")["receipts"]
    assert receipts[0]["decision"] == "deny"


def test_a_pull_that_is_not_a_fast_forward_fails_and_changes_nothing(
    cli: Cli, repos: Repos
) -> None:
    repos.push("theirs.md", "# Theirs\n")
    commit(repos.notes, "ours.md", "# Ours\n")
    head = git(repos.notes, "rev-parse", "HEAD")
    failed = cli.run("index", "--git-pull", "--no-embed", "--json", code=2)
    (pulled,) = json_of(failed)["syncResult"]["gitPull"]
    assert (pulled["status"], pulled["code"]) == ("failed", "GIT_PULL_FAILED")
    assert git(repos.notes, "rev-parse", "HEAD") == head
    assert not (repos.notes / "theirs.md").exists()


async def test_mcp_sync_and_add_collection_pull_when_asked(
    cli: Cli, repos: Repos, tmp_path: Path
) -> None:
    repos.push("second.md", "# Second\n\nwombat notes\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "p.md").write_text("# P\n", encoding="utf-8")
    env = cli.dirs_env
    async with spawn({**env, **IDENTITY}, tmp_path, "--enable-write") as wire:
        await wire.handshake()
        started = (await tool(wire, 1, "gno_sync", collection="notes", gitPull=True))[
            "structuredContent"
        ]
        assert started["options"] == {"gitPull": True, "runUpdateCmd": False}
        synced = await finished_job(wire, started["jobId"])
        (notes,) = synced["result"]["collections"]
        assert notes["gitPull"]["status"] == "updated" and notes["filesAdded"] == 1
        added = await tool(wire, 2, "gno_add_collection", path=str(plain), gitPull=True)
        status = await finished_job(wire, added["structuredContent"]["jobId"])
        (plain_result,) = status["result"]["collections"]
        assert plain_result["gitPull"]["code"] == "NOT_A_GIT_REPOSITORY"
        assert plain_result["filesAdded"] == 1
        refused = await wire.call(
            3, "tools/call", {"name": "gno_sync", "arguments": {"runUpdateCmd": True}}
        )
        assert refused["result"]["isError"] is True


@pytest.fixture
def http_remote(repos: Repos) -> Iterator[tuple[ModelServer, ModelServer]]:
    """The collection's remote as a loopback HTTP server, and a sink for an unjudged host."""
    remote, sink = ModelServer(), ModelServer()
    git(repos.notes, "remote", "set-url", "origin", remote.url("/notes.git"))
    try:
        yield remote, sink
    finally:
        remote.close()
        sink.close()


def test_git_follows_no_redirect_to_an_unjudged_host(
    cli: Cli, http_remote: tuple[ModelServer, ModelServer]
) -> None:
    remote, sink = http_remote
    remote.redirect_to = sink.url("/notes.git/info/refs?service=git-upload-pack")
    failed = cli.run("update", "--git-pull", "--json", code=2)
    (pulled,) = json_of(failed)["gitPull"]
    assert (pulled["destinationZone"], pulled["status"]) == ("loopback", "failed")
    assert remote.requests and sink.requests == []


def test_git_uses_no_proxy_from_its_configuration(
    cli: Cli, repos: Repos, http_remote: tuple[ModelServer, ModelServer]
) -> None:
    remote, proxy = http_remote
    git(repos.notes, "config", "http.proxy", proxy.url(""))
    git(repos.notes, "config", "remote.origin.proxy", proxy.url(""))
    cli.run("update", "--git-pull", "--json", code=2)  # the stand-in remote speaks no git
    assert remote.requests and proxy.requests == []
