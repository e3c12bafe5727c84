"""``init``/``collection add --update CMD --embed-model URI``: GNO's updateCmd and models.embed."""

from __future__ import annotations

import json

import yaml

from tests.conftest import write_corpus
from tests.support.cli_support import Cli

MAKE_NOTE = "printf '# Kiwi\\n\\nfresh kiwi\\n' > kiwi.md && echo fetched"


def _collection(cli: Cli, name: str) -> dict[str, object]:
    config = yaml.safe_load(cli.config_file.read_text())
    found: dict[str, object] = next(c for c in config["collections"] if c["name"] == name)
    return found


def test_update_runs_each_collections_update_command_before_indexing_it(cli: Cli) -> None:
    root = write_corpus(cli.home / "notes", {"a.md": "# A\n\nalpha\n"})
    cli.run("init", str(root), "--name", "notes", "--update", MAKE_NOTE)
    assert _collection(cli, "notes")["updateCmd"] == MAKE_NOTE
    done = cli.run("update", "--json")
    assert "notes: $ " in done.stderr and "-> ok" in done.stderr
    result = json.loads(done.stdout)
    assert result["updateCommands"] == [
        {
            "collection": "notes",
            "command": MAKE_NOTE,
            "exitCode": 0,
            "ok": True,
            "output": "fetched\n",
        }
    ]
    assert result["collections"][0]["added"] == 2
    assert cli.json("search", "kiwi")["results"][0]["uri"] == "gno://notes/kiwi.md"
    (root / "kiwi.md").unlink()
    indexed = cli.json("index", "--no-embed")["syncResult"]
    assert indexed["updateCommands"][0]["ok"] is True
    synced = indexed["collections"][0]
    assert (synced["removed"], synced["unchanged"]) == (0, 2)  # the command wrote kiwi.md again


def test_a_failing_update_command_is_reported_and_the_files_are_still_indexed(cli: Cli) -> None:
    root = write_corpus(cli.home / "notes", {"a.md": "# A\n\nalpha\n"})
    cli.run("init", str(root), "--name", "notes")
    other = write_corpus(cli.home / "other", {"b.md": "# B\n\nbeta\n"})
    cli.run("collection", "add", str(other), "--name", "other", "--update", "echo no net; exit 3")
    done = cli.run("update", code=2)
    assert "other: $ echo no net; exit 3  -> failed (exit 3)" in done.stderr
    assert "no net" in done.stderr
    assert "UPDATE_CMD_FAILED: The update command of other failed" in done.stderr
    assert cli.json("search", "beta")["results"][0]["uri"] == "gno://other/b.md"
    assert "updateCmd" not in _collection(cli, "notes")


def test_embed_model_is_stored_for_the_collection_and_checked(cli: Cli) -> None:
    root = write_corpus(cli.home / "notes", {"a.md": "# A\n\nalpha\n"})
    cli.run("init")
    before = cli.state()
    refused = cli.json(
        "collection", "add", str(root), "--name", "notes", "--embed-model", "hf:x/y.gguf", code=1
    )
    assert refused["error"] == "INVALID_INPUT" and "cannot run here" in refused["message"]
    assert cli.state() == before
    cli.run(
        "collection",
        "add",
        str(root),
        "--name",
        "notes",
        "--embed-model",
        "builtin:use-multilingual-v3",
    )
    assert _collection(cli, "notes")["models"] == {"embed": "builtin:use-multilingual-v3"}
    help_text = cli.run("collection", "add", "--help").stdout
    assert "--embed-model URI" in help_text and "--update CMD" in help_text
