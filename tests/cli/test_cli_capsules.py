"""``context build`` and ``context verify``: Context Capsules from the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gno_trio.config.dirs import resolve_dirs
from gno_trio.engine import ContextRequest, Engine
from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli

FENCED = "# Fences\n\nokapi notes with a fence:\n\n```\nnot the end\n````\n\nstill okapi\n"


@pytest.fixture
def notes(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    root = write_corpus(
        cli.home / "notes",
        {"plan.md": "# Plan\n\nokapi rollout in spring\n", "fences.md": FENCED},
    )
    cli.run("init", str(root), "--name", "notes")
    cli.run("update")
    return cli


def test_build_prints_markdown_or_the_same_capsule_the_engine_compiles(notes: Cli) -> None:
    capsule = notes.json("context", "build", "okapi rollout", "--budget", "4000")
    with Engine.open(dirs=resolve_dirs(notes.env), create=False) as engine:
        same = engine.capsules.compile(ContextRequest(goal="okapi rollout", budget_tokens=4000))
    assert capsule["capsuleId"] == same["capsuleId"]
    assert {e["uri"] for e in capsule["evidence"]} == {
        "gno://notes/plan.md",
        "gno://notes/fences.md",
    }

    md = notes.run("context", "build", "okapi rollout", "--budget", "4000").stdout
    assert md.startswith(f"# Context Capsule {capsule['capsuleId']}\n")
    assert '- **Goal:** "okapi rollout"' in md
    # The passage holding ``` and ```` lines sits in a fence of five backticks.
    block = re.search(r"^(`{5})text\n(.*?)\n\1$", md, re.MULTILINE | re.DOTALL)
    assert block is not None and "````\n" in block.group(2) + "\n"
    assert "Trace:" not in notes.run("context", "build", "okapi", "--budget", "4000").stderr


def test_output_file_then_verify_sees_the_text_change(notes: Cli) -> None:
    saved = notes.home / "capsule.json"
    done = notes.run(
        "context", "build", "okapi rollout", "--budget", "4000", "--json", "--output", str(saved)
    )
    assert done.stdout == "" and f"to {saved}" in done.stderr
    capsule = json.loads(saved.read_text())

    receipt = notes.json("context", "verify", str(saved))
    assert (receipt["capsuleId"], receipt["contentStatus"]) == (capsule["capsuleId"], "unchanged")
    piped = notes.run("context", "verify", "-", "--json", stdin=saved.read_text())
    assert json.loads(piped.stdout) == receipt
    assert (
        "- content: unchanged (verified_unchanged)"
        in notes.run("context", "verify", str(saved)).stdout
    )

    (notes.home / "notes" / "plan.md").write_text("# Plan\n\nokapi rollout moved to autumn\n")
    notes.run("update")
    changed = notes.json("context", "verify", str(saved))
    stale = {e["uri"]: e["contentStatus"] for e in changed["evidence"]}
    assert stale["gno://notes/plan.md"] != "unchanged"
    assert changed["contentStatus"] != "unchanged"

    capsule["goal"] = "tampered"
    saved.write_text(json.dumps(capsule))
    assert notes.json("context", "verify", str(saved), code=1)["error"] == "invalid_input"
    other = notes.json("--index", "other", "context", "verify", str(saved), code=1)
    assert "belongs to index 'default'" in other["message"]
    assert not (notes.data_dir / "index-other.sqlite").exists()


def test_bad_requests_exit_1_and_name_the_flags(notes: Cli) -> None:
    missing = notes.home / "nowhere" / "c.json"
    for args, code, needle in (
        (("", "--budget", "100"), "invalid_goal", "empty"),
        (("okapi", "--budget", "0"), "invalid_budget", "--budget"),
        (("okapi", "--budget", "100", "-c", "nope"), "invalid_filter", "nope"),
        (("okapi", "--budget", "100", "--output", str(missing)), "invalid_input", "does not exist"),
        (
            ("okapi", "--budget", "100", "--project-root", "/x", "--no-project-affinity"),
            "invalid_input",
            "--no-project-affinity",
        ),
    ):
        refused = notes.json("context", "build", *args, code=1)
        assert refused["error"] == code and needle in refused["message"], (args, refused)
    assert notes.json("context", "build", "zzqx", "--budget", "900", code=2)["error"] == (
        "no_evidence"
    )
    assert notes.json("context", "verify", str(missing), code=1)["error"] == "invalid_input"
    assert "token ceiling" in notes.run("context", "build", "--help").stdout
