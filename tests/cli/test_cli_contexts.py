"""``context add|list|check|rm``: guidance per scope, kept in index.yml, shown with results."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli


@pytest.fixture
def notes(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    root = write_corpus(cli.home / "notes", {"plan.md": "# Plan\n\nokapi rollout\n"})
    cli.run("init", str(root), "--name", "notes")
    cli.run("update")
    return cli


def test_contexts_are_added_listed_attached_to_results_and_removed(notes: Cli) -> None:
    assert notes.run("context", "list").stdout == "No contexts configured\n"
    added = notes.json("context", "add", "/", "\ufeffCompany handbook\r\n")
    assert added == {"scope": "/", "scopeType": "global", "text": "Company handbook"}
    notes.run("context", "add", "Notes:", "Personal notes")
    notes.run("context", "add", "notes:", "Second opinion")
    notes.run("context", "add", "gno://notes/plans", "Plans")
    assert [(c["scope"], c["text"]) for c in notes.json("context", "list")] == [
        ("/", "Company handbook"),
        ("notes:", "Personal notes"),
        ("notes:", "Second opinion"),
        ("gno://notes/plans", "Plans"),
    ]
    assert "| `notes:` | Personal notes |" in notes.run("context", "list", "--md").stdout
    hit = notes.json("search", "okapi")["results"][0]
    assert hit["context"].splitlines() == ["Company handbook", "Personal notes", "Second opinion"]
    assert "scopeKey: 'notes:'" in notes.config_file.read_text()

    before = notes.state()
    for args, code, needle in (
        (("context", "add", "/", "Company handbook"), "DUPLICATE", "already exists"),
        (("context", "add", "nope:", "x"), "NOT_FOUND", "Collection not found: nope"),
        (("context", "add", "notes", "x"), "INVALID_INPUT", "COLLECTION:"),
        (("context", "add", "/", "  "), "INVALID_INPUT", "needs some text"),
        (("context", "rm", "notes:"), "INVALID_INPUT", "give the text"),
        (("context", "rm", "/", "other"), "NOT_FOUND", "No context with that text for /"),
    ):
        refused = notes.json(*args, code=1)
        assert refused["error"] == code and needle in refused["message"], (args, refused)
    assert notes.state() == before

    removal = notes.json("collection", "remove", "notes", code=1)
    assert "gno-trio context rm notes:" in removal["message"]
    assert notes.run("context", "rm", "notes:", "Second opinion").stdout == (
        "Removed context for notes:  Second opinion\n"
    )
    notes.run("context", "rm", "notes:")
    notes.run("context", "rm", "gno://notes/plans")
    assert [c["scope"] for c in notes.json("context", "list")] == ["/"]


def test_context_check_warns_about_contexts_that_apply_to_nothing(notes: Cli) -> None:
    assert notes.json("context", "check") == {"valid": True, "warnings": [], "errors": []}
    notes.config_file.write_text(
        notes.config_file.read_text().replace(
            "contexts: []",
            "contexts:\n- {scopeType: collection, scopeKey: 'gone:', text: Old}\n"
            "- {scopeType: global, scopeKey: /, text: Twice}\n"
            "- {scopeType: global, scopeKey: /, text: Twice}\n",
        )
    )
    report = notes.json("context", "check")
    assert report["valid"] is True and len(report["warnings"]) == 2
    assert "collection gone is not configured" in report["warnings"][0]
    text = notes.run("context", "check").stdout
    assert text.startswith("3 contexts, 2 warnings\n! gone:")
