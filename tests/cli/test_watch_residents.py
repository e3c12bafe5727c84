"""Real residents follow the folders: ``serve`` and an ``mcp`` child on one data directory.

A user's view: with ``gno-trio serve`` running, a note written into a
collection shows up in ``gno-trio search`` without an ``update``; an IDE's
``gno-trio mcp`` child started beside it does not sync too (``status``
names the one process that watches), and takes the watch over when the
gateway stops. ``--no-watch`` and ``watch.enabled: false`` leave the folders
alone. Every process started here is stopped, also when an assertion fails.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli

WAIT_S = 60.0


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    sandbox = make_cli(tmp_path)
    notes = write_corpus(tmp_path / "notes", {"tea.md": "# Tea\n\nGreen tea steeps briefly.\n"})
    sandbox.run("init", str(notes), "--name", "notes")
    return sandbox


@contextlib.contextmanager
def resident(
    cli: Cli, *args: str, stdout: int = subprocess.DEVNULL
) -> Iterator[subprocess.Popen[bytes]]:
    """A resident command running in the sandbox until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gno_trio", *args],
        env=cli.env,
        cwd=cli.home,
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT_S} s: {what}")
        time.sleep(0.1)


def watcher(cli: Cli) -> dict[str, Any]:
    found: dict[str, Any] = cli.json("status")["background"]["watcher"]
    return found


def found(cli: Cli, query: str) -> list[str]:
    return [hit["uri"] for hit in cli.json("search", query)["results"]]


def test_serve_follows_the_folder_and_an_mcp_child_takes_over(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    with resident(cli, "serve", "--port", "0", "--no-embed") as serve:
        until(
            lambda: (
                watcher(cli).get("pid") == serve.pid
                and watcher(cli)["activeCollections"] == ["notes"]
            ),
            "serve watches the collection",
        )
        (notes / "written.md").write_text("# Written\n\nWritten while serve runs: walnuts.\n")
        until(lambda: found(cli, "walnuts") == ["gno://notes/written.md"], "searchable")
        assert f"Watch: pid {serve.pid} follows notes" in cli.run("status").stdout

        with resident(cli, "mcp") as child:
            (notes / "second.md").write_text("# Second\n\nHazelnuts.\n")
            until(lambda: found(cli, "hazelnuts") == ["gno://notes/second.md"], "still followed")
            assert watcher(cli)["pid"] == serve.pid  # the child follows, it does not sync too

            serve.terminate()
            serve.wait(timeout=30)
            until(
                lambda: (
                    watcher(cli).get("pid") == child.pid
                    and watcher(cli)["activeCollections"] == ["notes"]
                ),
                "the mcp child takes over",
            )
            (notes / "third.md").write_text("# Third\n\nPecans.\n")
            until(lambda: found(cli, "pecans") == ["gno://notes/third.md"], "followed by mcp")
            assert child.stdin is not None
            child.stdin.close()  # the IDE goes away
            child.wait(timeout=30)
    # Nobody watches now: status says so with GNO's empty lists.
    assert watcher(cli)["activeCollections"] == [] and "pid" not in watcher(cli)
    assert "Watch: no resident follows the folders" in cli.run("status").stdout


def test_no_watch_and_the_config_key_leave_the_folders_alone(cli: Cli) -> None:
    port = _free_port()
    with resident(cli, "serve", "--port", str(port), "--no-embed", "--no-watch") as serve:
        until(lambda: _answers(port), "serve listens")
        with resident(cli, "mcp") as child:  # the watch is free: the IDE's child takes it
            until(lambda: watcher(cli).get("pid") == child.pid, "the mcp child watches")
        assert serve.poll() is None

    config = cli.config_file.read_text(encoding="utf-8")
    cli.config_file.write_text(config + "watch:\n  enabled: false\n", encoding="utf-8")
    with resident(cli, "mcp", stdout=subprocess.PIPE) as child:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        child.stdin.flush()
        assert json.loads(child.stdout.readline())["id"] == 1  # it serves, without a watch
        cli.config_file.write_text(config, encoding="utf-8")
        with resident(cli, "serve", "--port", "0", "--no-embed") as serve:
            until(lambda: watcher(cli).get("pid") == serve.pid, "serve watches, not the child")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/resident/status", timeout=5).is_success
    except httpx.HTTPError:
        return False
