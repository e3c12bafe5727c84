"""``--quiet`` prints the result and nothing else: no notes, receipts or warnings on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import write_corpus
from tests.support.cli_support import TRACING, Cli, make_cli


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    sandbox = make_cli(tmp_path_factory.mktemp("quiet"))
    root = write_corpus(sandbox.home / "notes", {"a.md": "# A\n\nquokka facts\nmore\n"})
    sandbox.run("init", str(root), "--name", "notes")
    with sandbox.config_file.open("a", encoding="utf-8") as config:
        config.write(TRACING)
    sandbox.run("update")
    return sandbox


def test_search_prints_its_trace_receipt_unless_quiet(traced: Cli) -> None:
    loud = traced.run("search", "quokka")
    assert loud.stderr.startswith("Trace: ")
    quiet = traced.run("search", "quokka", "--quiet")
    assert quiet.stdout == loud.stdout and "gno://notes/a.md" in quiet.stdout
    assert quiet.stderr == ""


def test_get_with_a_trace_id_prints_only_the_lines_when_quiet(traced: Cli) -> None:
    trace_id = traced.run("search", "quokka").stderr.split()[1]
    got = traced.run(
        "get", "notes/a.md", "--from", "3", "-l", "1", "--trace-id", trace_id, "--quiet"
    )
    assert (got.stdout, got.stderr) == ("quokka facts\n", "")


def _add_by_hand(cli: Cli, name: str, folder: Path) -> None:
    config = yaml.safe_load(cli.config_file.read_text(encoding="utf-8"))
    config["collections"].append({"name": name, "path": str(folder)})
    cli.config_file.write_text(yaml.safe_dump(config), encoding="utf-8")


def test_a_config_edit_applied_by_update_is_not_reported_when_quiet(
    traced: Cli, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _add_by_hand(traced, "loud", write_corpus(tmp_path_factory.mktemp("loud"), {"b.md": "# B\n"}))
    assert "collection loud added" in traced.run("update").stderr
    _add_by_hand(traced, "hush", write_corpus(tmp_path_factory.mktemp("hush"), {"c.md": "# C\n"}))
    assert traced.run("update", "--quiet").stderr == ""
    assert [c["name"] for c in traced.json("collection", "list")["collections"]] == [
        "notes",
        "loud",
        "hush",
    ]
