"""``doctor`` as a user runs it, and the command line's own help: every option explained.

Doctor results are checked against GNO's ``doctor@1.0`` schema and for the
one thing a user needs from each check that fails: what to do about it.
"""

from __future__ import annotations

import argparse
import socket
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gno_trio.cli.main import build_parser
from gno_trio.cli.resident import RECORD_OPTION
from tests.conftest import write_corpus
from tests.support.cli_support import Cli
from tests.support.lease_holder import lease_held_elsewhere

SchemaCheck = Callable[[str, Any], None]


def _ready(cli: Cli) -> Path:
    notes = write_corpus(cli.home / "notes", {"a.md": "# A\n\nokapi\n"})
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    return notes


def _checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def test_a_healthy_index(cli: Cli, schema_check: SchemaCheck) -> None:
    _ready(cli)
    waiting = cli.json("doctor")
    schema_check("doctor", waiting)
    backlog = _checks(waiting)["embedding-backlog"]
    assert waiting["healthy"] is True and backlog["status"] == "warn"
    assert backlog["message"].startswith("1 chunk waits for embeddings (notes 1)")
    assert backlog["details"][0].startswith("Run: gno-trio embed")
    cli.run("embed")
    report = cli.json("doctor")
    schema_check("doctor", report)
    assert report["healthy"] is True
    checks = _checks(report)
    assert set(checks) >= {
        "config",
        "collections",
        "database",
        "index",
        "lock",
        "token-file",
        "port",
        "embed-model",
        "embedding-backlog",
    }
    assert all(c["status"] == "ok" for c in checks.values()), checks
    assert report["activation"]["usable"] is True
    human = cli.run("doctor").stdout
    assert "✓ database: Database found" in human and human.rstrip().endswith("0 warnings")
    assert "| database | ok |" in cli.run("doctor", "--md").stdout


def test_a_missing_index_is_an_error_with_the_command_that_fixes_it(
    cli: Cli, schema_check: SchemaCheck
) -> None:
    done = cli.run("--index", "other", "doctor", "--json", code=2)
    import json

    report = json.loads(done.stdout)
    schema_check("doctor", report)
    assert report["healthy"] is False
    database = _checks(report)["database"]
    assert database["status"] == "error"
    assert database["details"] == ["Run: gno-trio --index other init"]
    assert not (cli.data_dir / "index-other.sqlite").exists(), "doctor creates nothing"


def test_problems_are_reported_each_with_a_fix(cli: Cli) -> None:
    notes = _ready(cli)
    (notes / "bad.md").write_bytes(b"\x00\x01binary")
    cli.run("update")
    token = cli.home / "token"
    token.write_text("secret\n")
    token.chmod(0o644)
    config = (
        cli.config_file.read_text() + f"gateway:\n  tokenFile: {token}\n  port: {_busy_port()}\n"
    )
    cli.config_file.write_text(config)
    with lease_held_elsewhere(cli.data_dir / ".mcp-write.lock"):
        report = cli.json("doctor", code=2)
    checks = _checks(report)
    assert checks["token-file"]["status"] == "error"
    assert checks["token-file"]["details"] == [f"Run: chmod 600 {token}"]
    assert checks["lock"]["status"] == "warn" and checks["lock"]["details"]
    assert checks["ingest-errors"]["status"] == "warn"
    assert checks["port"]["status"] == "warn" and "--port" in checks["port"]["details"][0]
    for problem in (c for c in checks.values() if c["status"] != "ok"):
        assert problem.get("details"), problem


def test_a_model_that_cannot_run_here_is_an_error_with_a_fix(cli: Cli) -> None:
    _ready(cli)
    cli.config_file.write_text(
        cli.config_file.read_text()
        + "models:\n  activePreset: mine\n  presets:\n"
        + "    - {id: mine, name: Mine, embed: 'hf:org/model-GGUF/model.gguf'}\n"
    )
    report = cli.json("doctor", code=2)
    model = _checks(report)["embed-model"]
    assert model["status"] == "error" and "hf:org/model-GGUF/model.gguf" in model["message"]
    assert "builtin:use-multilingual-v3" in model["details"][0]
    assert "embedding-backlog" not in _checks(report)  # nothing to embed with


def test_the_backlog_fix_names_the_index(cli: Cli) -> None:
    notes = write_corpus(cli.home / "other-notes", {"b.md": "# B\n\nbeta\n"})
    cli.run("--index", "other", "init", str(notes), "--name", "other")
    cli.run("--index", "other", "update")
    report = cli.json("--index", "other", "doctor")
    assert _checks(report)["embedding-backlog"]["details"][0].startswith(
        "Run: gno-trio --index other embed"
    )


def test_a_broken_config_or_a_newer_database_is_diagnosed(cli: Cli) -> None:
    _ready(cli)
    good = cli.config_file.read_text()
    cli.config_file.write_text("collections: [oops\n")
    report = cli.json("doctor", code=2)
    assert _checks(report)["config"]["status"] == "error"
    cli.config_file.write_text(good)
    conn = sqlite3.connect(cli.db)
    conn.execute("UPDATE schema_meta SET value = '999' WHERE key = 'version'")
    conn.commit()
    conn.close()
    report = cli.json("doctor", code=2)
    assert "newer than this gno-trio supports" in _checks(report)["database"]["message"]


def test_a_missing_collection_folder_is_an_error(cli: Cli) -> None:
    notes = _ready(cli)
    for child in notes.iterdir():
        child.unlink()
    notes.rmdir()
    report = cli.json("doctor", code=2)
    assert _checks(report)["collections"]["status"] == "error"
    assert "collection remove" in _checks(report)["collections"]["details"][0]


def _busy_port() -> int:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    _HELD.append(holder)
    return int(holder.getsockname()[1])


_HELD: list[socket.socket] = []


@pytest.fixture(autouse=True)
def _release_ports() -> Iterator[None]:
    yield
    while _HELD:
        _HELD.pop().close()


# ---------------------------------------------------------------------------
# Help text
# ---------------------------------------------------------------------------


def _walk(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _walk(child, f"{path} {name}")
            continue
        if isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        yield path, action


def test_every_option_and_argument_has_help() -> None:
    internal = {RECORD_OPTION}  # the detached child's own option, hidden on purpose
    missing = [
        f"{path}: {'/'.join(action.option_strings) or action.dest}"
        for path, action in _walk(build_parser(), "gno-trio")
        if (not action.help or action.help == argparse.SUPPRESS)
        and not internal & set(action.option_strings)
    ]
    assert missing == []


def test_every_command_has_a_summary() -> None:
    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {choice.dest: choice.help for choice in commands._choices_actions}
    assert set(summaries) == set(commands.choices)
    assert all(summaries.values()), summaries
