"""The ``gno-trio`` command line, run for real as a subprocess.

Every run gets ``GNO_CONFIG_DIR``/``GNO_DATA_DIR``/``GNO_CACHE_DIR`` and
``HOME`` inside a temporary directory, so nothing touches the real user's
files. Exit codes are part of the contract: 0 ok, 1 invalid input, 2 runtime
failure.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.shared import required_program

SchemaCheck = Callable[[str, Any], None]

REPO = Path(__file__).resolve().parents[2]


NOTES = {
    "alpha.md": "---\ntags: [project]\n---\n# Alpha\n\nkubernetes rollout plan\n",
    "beta.md": "# Beta\nbanana split\n" + "".join(f"row {n}\n" for n in range(3, 21)),
    "deep/gamma.txt": "gamma zebra words\n",
}


@pytest.fixture
def notes(cli: Cli) -> Path:
    return write_corpus(cli.home / "notes", NOTES)


@pytest.fixture(scope="module")
def ready(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """An initialised and indexed sandbox shared by the read-only tests."""
    base = tmp_path_factory.mktemp("cli")
    sandbox = make_cli(base)
    root = write_corpus(sandbox.home / "notes", NOTES)
    sandbox.run("init", str(root), "--name", "notes")
    sandbox.run("update")
    return sandbox


# ---------------------------------------------------------------------------
# init, collections, update
# ---------------------------------------------------------------------------


def test_init_creates_config_and_database(cli: Cli, notes: Path) -> None:
    out = cli.run("init", str(notes), "--name", "Notes", "--pattern", "**/*.md").stdout
    assert str(cli.db) in out and "notes" in out
    config = yaml.safe_load(cli.config_file.read_text("utf-8"))
    assert config["collections"][0]["name"] == "notes"
    assert config["collections"][0]["pattern"] == "**/*.md"
    conn = sqlite3.connect(cli.db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # Safe to repeat: same folder, same name.
    before = cli.state()
    again = cli.json("init", str(notes), "--name", "notes")
    assert again["alreadyAdded"] is True and again["collection"] == "notes"
    assert cli.state() == before


def test_index_option_selects_the_database_file(cli: Cli) -> None:
    result = cli.json("--index", "Work", "init")
    assert result["dbPath"] == str(cli.data_dir / "index-work.sqlite")
    assert (cli.data_dir / "index-work.sqlite").exists() and not cli.db.exists()
    cli.run("init", "--index", "../x", code=1)


def test_collection_add_list_remove(cli: Cli, notes: Path) -> None:
    cli.run("init")
    added = cli.json("collection", "add", str(notes), "--name", "Notes")
    assert added == {"name": "notes", "path": str(notes), "pattern": "**/*"}
    listed = cli.run("collection", "list").stdout
    assert listed.split("\t")[:2] == ["notes", str(notes)]
    for args in (
        ("--json", "collection", "list"),
        ("collection", "--json", "list"),
        ("collection", "list", "--json"),
    ):
        assert json.loads(cli.run(*args).stdout)["collections"][0]["name"] == "notes"
    cli.run("update")
    removed = cli.json("collection", "remove", "NOTES")
    assert removed == {"removed": True, "collection": "notes", "documents": 3}
    assert cli.json("collection", "list") == {"collections": []}
    assert "No collections" in cli.run("collection", "list").stdout


def test_update_reports_counts_and_is_incremental(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    first = cli.run("update").stdout
    assert first.startswith("notes: 3 files, 3 added")
    (report,) = cli.json("update")["collections"]
    assert report["unchanged"] == 3 and report["added"] == 0
    (notes / "beta.md").unlink()
    (report,) = cli.json("update")["collections"]
    assert report["removed"] == 1


def test_update_progress_bar_goes_to_stderr(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    done = cli.run("update", "--progress")
    assert "Indexing [" in done.stderr and "3/3" in done.stderr
    assert "Indexing" not in done.stdout
    quiet = cli.run("update")  # stderr is not a terminal: no bar unless asked
    assert quiet.stderr == ""


def test_update_without_collections_is_a_validation_error(cli: Cli) -> None:
    cli.run("init")
    assert "No collections" in cli.run("update", code=1).stderr


def test_update_records_bad_files_and_finishes(cli: Cli, notes: Path) -> None:
    (notes / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (notes / "broken.md").write_text("---\ntitle: [oops\n---\nhedgehog\n", "utf-8")
    cli.run("init", str(notes), "--name", "notes")
    out = cli.run("update").stdout
    assert "binary.md: BINARY_FILE" in out
    assert "broken.md: FRONTMATTER_INVALID" in out
    status = cli.json("status")
    (collection,) = status["collections"]
    assert [(e["relPath"], e["code"]) for e in collection["errors"]] == [
        ("binary.md", "BINARY_FILE")
    ]
    assert collection["documentCount"] == 4
    human = cli.run("status").stdout
    assert "binary.md: BINARY_FILE" in human and "1 error," in human
    assert "hedgehog" in cli.run("search", "hedgehog").stdout


# ---------------------------------------------------------------------------
# Reading commands
# ---------------------------------------------------------------------------


def test_search_human_and_json(ready: Cli, schema_check: SchemaCheck) -> None:
    human = ready.run("search", "kubernetes").stdout
    assert human.startswith('Found 1 result for "kubernetes"')
    assert "gno://notes/alpha.md:6" in human and "kubernetes rollout plan" in human
    assert "<mark>" not in human
    result = ready.json("search", "banana", "-c", "notes", "--tags-any", "project,other")
    assert result["results"] == []
    result = ready.json("search", "banana")
    schema_check("search-results", result)
    (hit,) = result["results"]
    assert hit["uri"] == "gno://notes/beta.md" and "<mark>banana</mark>" in hit["snippet"]
    assert 'No results for "nothingmatches"' in ready.run("search", "nothingmatches").stdout


def test_get_human_and_json(ready: Cli, schema_check: SchemaCheck) -> None:
    assert ready.run("get", "notes/beta.md", "--from", "3", "-l", "2").stdout == "row 3\nrow 4\n"
    assert ready.run("get", "notes/alpha.md").stdout == NOTES["alpha.md"]
    assert ready.run("get", "notes/beta.md", "--from", "99").stdout == ""
    numbered = ready.run("get", "gno://notes/beta.md", "-l", "1", "--line-numbers").stdout
    assert numbered == "1: # Beta\n"
    doc = ready.json("get", "notes/beta.md", "--from", "2", "-l", "2")
    schema_check("get", doc)
    assert doc["returnedLines"] == {"start": 2, "end": 3}
    by_docid = ready.json("get", doc["docid"])
    assert by_docid["uri"] == "gno://notes/beta.md"


def test_multi_get_by_glob_and_refs(ready: Cli, schema_check: SchemaCheck) -> None:
    result = ready.json("multi-get", "notes/*.md", "--max-bytes", "20")
    schema_check("multi-get", result)
    assert [d["uri"] for d in result["documents"]] == [
        "gno://notes/alpha.md",
        "gno://notes/beta.md",
    ]
    assert all(d["truncated"] for d in result["documents"])
    refs = ready.run("multi-get", "notes/alpha.md", "notes/missing.md")
    assert refs.stdout.startswith("==> gno://notes/alpha.md")
    assert "skipped notes/missing.md: not found" in refs.stderr


def test_ls_status_and_changes(ready: Cli, schema_check: SchemaCheck) -> None:
    listing = ready.run("ls").stdout.splitlines()
    assert [line.split()[1] for line in listing] == [
        "gno://notes/alpha.md",
        "gno://notes/beta.md",
        "gno://notes/deep/gamma.txt",
    ]
    assert ready.json("ls", "notes", "--prefix", "deep/")["meta"]["total"] == 1
    status = ready.json("status")
    assert status["totalDocuments"] == 3 and status["collections"][0]["name"] == "notes"
    schema_check("status", status)
    assert status["resident"]["mode"] == "direct-cli" and status["resident"]["resident"] is False
    assert status["activation"]["collections"][0]["ready"] is True
    assert status["onboarding"]["stage"] == "ready" and status["health"]["state"] == "healthy"
    assert "notes: 3 docs" in ready.run("status").stdout
    changes = ready.json("changes", "--limit", "2")
    schema_check("changes", changes)
    assert changes["page"]["truncated"] is True
    rest = ready.json("changes", "--since", changes["page"]["nextCursor"])
    assert len(rest["changes"]) == 1
    human = ready.run("changes").stdout
    assert "create" in human and "gno://notes/deep/gamma.txt" in human
    assert human.rstrip().splitlines()[-1].startswith("next: gno-change-v1.")


# ---------------------------------------------------------------------------
# Exit codes and errors
# ---------------------------------------------------------------------------


INVALID_INPUTS: list[tuple[tuple[str, ...], str]] = [
    (("search", ""), "INVALID_INPUT"),
    (("search", '"unclosed'), "INVALID_INPUT"),
    (("search", "--", "-banana"), "INVALID_INPUT"),
    (("search", "banana", "-c", "nope"), "NOT_FOUND"),
    (("search", "banana", "-n", "0"), "INVALID_INPUT"),
    (("search", "banana", "--since", "someday"), "INVALID_INPUT"),
    (("get", "notes/missing.md"), "NOT_FOUND"),
    (("get", "#zzzzzz"), "INVALID_INPUT"),
    (("get", "notes/beta.md", "--from", "0"), "INVALID_INPUT"),
    (("multi-get", "notes/alpha.md", "--max-bytes", "0"), "INVALID_INPUT"),
    (("ls", "nope"), "NOT_FOUND"),
    (("changes", "--since", "gno-change-v1.!!"), "VALIDATION"),
    (("changes", "--limit", "0"), "VALIDATION"),
    (("collection", "remove", "nope"), "NOT_FOUND"),
    (("update", "nope"), "NOT_FOUND"),
]


def test_invalid_input_exits_1_with_a_stable_code_and_changes_nothing(ready: Cli) -> None:
    before = ready.state()
    outcomes = ready.run_many([args for args, _ in INVALID_INPUTS])
    for (args, code_name), (code, _, stderr) in zip(INVALID_INPUTS, outcomes, strict=True):
        assert code == 1, (args, stderr)
        assert stderr.startswith(f"Error: {code_name}: "), (args, stderr)
    assert ready.state() == before


def test_errors_with_json_are_json_on_stdout(ready: Cli) -> None:
    done = ready.run("--json", "get", "notes/missing.md", code=1)
    assert json.loads(done.stdout) == {
        "error": "NOT_FOUND",
        "message": "Document not found: notes/missing.md",
    }
    assert json.loads(ready.run("search", "", "--json", code=1).stdout)["error"] == "INVALID_INPUT"


def test_usage_errors_exit_1(cli: Cli) -> None:
    cli.run(code=1)
    cli.run("frobnicate", code=1)
    cli.run("get", code=1)
    cli.run("search", "x", "-n", "many", code=1)


def test_invalid_collection_names(cli: Cli, notes: Path) -> None:
    cli.run("init")
    before = cli.state()
    for name in ("-bad", "has space", "x" * 65):
        done = cli.run("collection", "add", str(notes), "--name=" + name, code=1)
        assert done.stderr.startswith("Error: INVALID_NAME: "), name
    assert cli.state() == before


def test_duplicate_collection(cli: Cli, notes: Path) -> None:
    cli.run("init", str(notes), "--name", "notes")
    other = write_corpus(cli.home / "other", {"x.md": "x"})
    before = cli.state()
    assert "DUPLICATE" in cli.run("collection", "add", str(other), "--name", "NOTES", code=1).stderr
    assert "DUPLICATE" in cli.run("collection", "add", str(notes), "--name", "x", code=1).stderr
    assert "DUPLICATE" in cli.run("init", str(notes), "--name", "x", code=1).stderr
    assert cli.state() == before


def test_forbidden_and_missing_roots(cli: Cli) -> None:
    (cli.home / ".ssh").mkdir()
    cli.run("init")
    before = cli.state()
    roots = ["/", "/etc", str(cli.home), str(cli.home / ".ssh"), "~", "~/.ssh"]
    outcomes = cli.run_many([("collection", "add", root, "--name", "x") for root in roots])
    for root, (code, _, stderr) in zip(roots, outcomes, strict=True):
        assert code == 1 and stderr.startswith("Error: FORBIDDEN_ROOT: "), (root, stderr)
    missing = cli.run("collection", "add", str(cli.home / "nope"), "--name", "x", code=1)
    assert missing.stderr.startswith("Error: PATH_NOT_FOUND: ")
    assert cli.state() == before


def test_read_commands_do_not_create_an_index(cli: Cli) -> None:
    commands = [("status",), ("search", "x"), ("ls",), ("changes",), ("get", "a/b.md")]
    for args, (code, _, stderr) in zip(commands, cli.run_many(commands), strict=True):
        assert code == 2 and stderr.startswith("Error: NOT_INITIALIZED: "), (args, stderr)
    assert not cli.data_dir.exists()


def test_newer_schema_is_a_runtime_error(cli: Cli) -> None:
    cli.run("init")
    conn = sqlite3.connect(cli.db)
    conn.execute("UPDATE schema_meta SET value = '999' WHERE key = 'version'")
    conn.commit()
    conn.close()
    done = cli.run("status", code=2)
    assert "newer" in done.stderr and "999" in done.stderr


def test_unusable_data_directory_is_a_runtime_error(cli: Cli) -> None:
    blocker = cli.home / "not-a-dir"
    blocker.write_text("file")
    cli.env["GNO_DATA_DIR"] = str(blocker / "data")
    done = cli.run("init", code=2)
    assert done.stderr.startswith("Error: RUNTIME: ")
    assert "Traceback" not in done.stderr


def test_invalid_config_is_a_validation_error(cli: Cli) -> None:
    cli.config_dir.mkdir()
    cli.config_file.write_text("collections: [{name: x}]\nbogusKey: 1\n", "utf-8")
    done = cli.run("init", code=1)
    assert done.stderr.startswith("Error: CONFIG_INVALID: ")
    assert "bogusKey" in done.stderr


def test_console_script_entry_point(tmp_path: Path) -> None:
    script = required_program("gno-trio")
    done = subprocess.run(
        [script, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.startswith("gno-trio ")
