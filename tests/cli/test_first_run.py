"""A first run as README.rst tells it: the quick start, a failed ``init``, the client entries.

The quick start is read from README.rst itself, so the commands tested are
the commands printed: a virtual environment before ``pip install`` (a
distribution's Python refuses it outside one, PEP 668), a notes folder that
does not exist yet, and ``init``'s closing hint naming the README's next step.
Codex's entries (printed by ``serve``, shown by ``mcp install --dry-run``)
must parse as TOML, and ``serve --status``/``--stop`` must see a gateway
started in the foreground.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_support import COMMAND_TIMEOUT_S, REPO, Cli, make_cli

README = REPO / "README.rst"


def quick_start() -> tuple[list[str], list[str]]:
    """The steps (split at ``&&``) of the README's install and test commands."""
    text = README.read_text(encoding="utf-8")
    section = text.split("Quick start\n===========\n", 1)[1].split("\n====", 1)[0]
    blocks = re.findall(r"::\n\n((?:    .*\n)+)", section)
    install, tests = (block.strip() for block in blocks[:2])
    return install.split(" && "), tests.split(" && ")


def test_the_readme_installs_into_a_virtual_environment_first() -> None:
    install, tests = quick_start()
    venv = install.index("python3 -m venv .venv")
    assert install[venv + 1] == ". .venv/bin/activate"
    assert install.index("python3 -m pip install .") > venv + 1
    assert tests[0] == ". .venv/bin/activate" and tests[-1] == "python3 -m pytest"
    assert "python3-venv" in README.read_text(encoding="utf-8")


def test_the_quick_start_works_with_a_notes_folder_that_does_not_exist(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    install, _ = quick_start()
    steps = install[install.index("python3 -m pip install .") + 1 :]
    assert steps[-1] == "gno-trio serve"  # runs until stopped: served in the test below
    notes = cli.home / "notes"
    assert not notes.exists()
    init_hint = None
    for position, step in enumerate(steps[:-1]):
        words = [word.replace("~", str(cli.home)) for word in step.split()]
        if words[:2] == ["mkdir", "-p"]:
            subprocess.run(words, check=True)
            continue
        assert words[0] == "gno-trio", step
        done = cli.run(*words[1:])
        if words[1] == "init":
            init_hint = (done.stdout, steps[position + 1])
    assert init_hint is not None
    printed, next_step = init_hint
    assert f"`{next_step}`" in printed  # init names the README's next command
    assert cli.json("status")["totalDocuments"] == 0 and notes.is_dir()


def test_init_without_its_folder_says_how_and_leaves_nothing_behind(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    missing = cli.home / "notes"
    failed = cli.run("init", str(missing), "--name", "notes", code=1)
    assert "PATH_NOT_FOUND" in failed.stderr and f"mkdir -p {missing}" in failed.stderr
    assert not cli.config_dir.exists() and not cli.data_dir.exists()
    missing.mkdir()
    cli.run("init", str(missing), "--name", "Bad Name!", code=1)
    assert not cli.config_file.exists() and not cli.db.exists()
    cli.run("init", str(missing), "--name", "notes")
    before = cli.state()
    cli.run("init", str(tmp_path / "elsewhere"), "--name", "other", code=1)
    assert cli.state() == before  # a failed init keeps an existing index as it was


def test_mcp_install_dry_run_shows_the_codex_entry_as_valid_toml(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    cli.run("init")
    shown = cli.run("mcp", "install", "--target", "codex", "--dry-run").stdout
    entry = tomllib.loads(shown.split("The entry, as the file would hold it:\n", 1)[1])
    gno = entry["mcp_servers"]["gno"]
    assert gno["command"].endswith("gno-trio") and gno["args"][-1] == "mcp"
    assert gno["env"]["GNO_DATA_DIR"] == str(cli.data_dir)
    as_json = cli.json("mcp", "install", "--target", "codex", "--dry-run")["installed"]
    assert tomllib.loads(as_json["entryText"]) == entry
    assert not (cli.home / ".codex").exists()


@pytest.fixture
def foreground(tmp_path: Path) -> Iterator[tuple[Cli, subprocess.Popen[str], str]]:
    """``serve`` started in the foreground, as the README's quick start leaves it running."""
    cli = make_cli(tmp_path)
    cli.run("init")
    token = tmp_path / "token"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gno_trio", "serve", "--port", "0", "--mcp-token-file", str(token)],
        env=cli.env,
        cwd=cli.home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    printed = []
    try:
        for line in proc.stdout:  # the announcement ends with the last client's entry
            printed.append(line)
            if line.startswith("  zed"):
                break
        yield cli, proc, "".join(printed)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=COMMAND_TIMEOUT_S)
        proc.stdout.close()


def test_serve_prints_a_codex_entry_that_parses_as_toml(
    foreground: tuple[Cli, subprocess.Popen[str], str],
) -> None:
    _, _, printed = foreground
    after = printed.split("  codex:\n", 1)[1]
    block = after[: re.search(r"^  \S", after, re.MULTILINE).start()]  # up to the next client
    codex = tomllib.loads(block)["mcp_servers"]["gno"]
    assert codex["url"].startswith("http://127.0.0.1:") and codex["url"].endswith("/mcp")
    assert codex["http_headers"]["Authorization"].startswith("Bearer <contents of ")
    assert json.loads(printed.split("  cursor", 1)[1].split("\n", 1)[0])["mcpServers"]["gno"]


def test_status_and_stop_see_a_gateway_started_in_the_foreground(
    foreground: tuple[Cli, subprocess.Popen[str], str],
) -> None:
    cli, proc, _ = foreground
    found = json.loads(cli.run("serve", "--status", "--json").stdout)
    assert found["running"] is True and found["pid"] == proc.pid
    assert "Log: none" in cli.run("serve", "--status").stdout
    stopped = json.loads(cli.run("serve", "--stop", "--json").stdout)
    assert stopped["stopped"] is True and stopped["pid"] == proc.pid
    assert proc.wait(timeout=COMMAND_TIMEOUT_S) is not None
    assert not (cli.data_dir / "serve.pid").exists()
    cli.run("serve", "--status", code=3)
