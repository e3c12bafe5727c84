"""``collection policy get|set|check`` and ``egress-audit``: egress boundaries from the shell."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_corpus
from tests.support.cli_support import TRACING, Cli, make_cli

SchemaCheck = Callable[[str, Any], None]


@pytest.fixture
def notes(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    cli.run("init", str(write_corpus(cli.home / "notes", {"a.md": "# A\n\nokapi\n"})))
    return cli


def test_policy_get_set_and_check(notes: Cli, schema_check: SchemaCheck) -> None:
    got = notes.json("collection", "policy", "get", "notes")
    schema_check("collection-egress-policy", got)
    assert (got["effectivePolicy"], got["source"], got["revision"]) == (
        "local_only",
        "config_default",
        0,
    )
    before = notes.state()
    refused = notes.json("collection", "policy", "set", "notes", "lan", code=1)
    assert "add --confirm-relaxation 0" in refused["message"]
    assert notes.state() == before
    relaxed = notes.json("collection", "policy", "set", "notes", "lan", "--confirm-relaxation", "0")
    schema_check("collection-egress-policy-set", relaxed)
    assert (relaxed["change"], relaxed["current"]["revision"]) == ("relaxed", 1)
    stale = notes.json(
        "collection", "policy", "set", "notes", "remote", "--confirm-relaxation", "0", code=2
    )
    assert stale["error"] == "CONFLICT" and "Stale confirmation" in stale["message"]
    tightened = notes.run("collection", "policy", "set", "notes", "local_only").stdout
    assert "egress policy tightened (lan -> local_only" in tightened

    check = notes.json(
        "collection",
        "policy",
        "check",
        "--action",
        "serve",
        "--destination",
        "remote",
        "--content-class",
        "snippet",
        "--authenticated",
        "--authorized",
    )
    schema_check("collection-egress-check", check)
    assert check["decision"]["allowed"] is False
    assert (
        "invalid choice"
        in notes.run(
            "collection",
            "policy",
            "check",
            "--action",
            "serve",
            "--destination",
            "mars",
            "--content-class",
            "snippet",
            code=1,
        ).stderr
    )
    assert notes.json("collection", "policy", "get", "nope", code=1)["error"] == "NOT_FOUND"


def test_egress_audit_lists_shows_and_deletes_receipts(notes: Cli) -> None:
    notes.config_file.write_text(notes.config_file.read_text() + TRACING)
    notes.run("update")
    built = notes.run("context", "build", "okapi", "--budget", "4000")
    found = re.search(r"^Trace: (\S+)$", built.stderr, re.MULTILINE)
    assert found is not None
    notes.run("trace", "export", found.group(1))  # judged as an export, with a receipt

    listed = notes.json("egress-audit", "list")
    receipts = listed["receipts"]
    assert [(r["action"], r["decision"]) for r in receipts] == [("export", "allow")]
    audit_id = receipts[0]["auditId"]
    assert notes.json("egress-audit", "show", audit_id)["receipt"] == receipts[0]
    assert notes.json("egress-audit", "status")["receipts"] == 1
    assert notes.run("egress-audit", "status").stdout.startswith("Egress audit log: 1 receipts")
    assert notes.json("egress-audit", "delete", audit_id)["auditId"] == audit_id
    assert notes.json("egress-audit", "list")["receipts"] == []
    assert "--yes egress-audit purge" in notes.json("egress-audit", "purge", code=1)["message"]
    assert notes.json("--yes", "egress-audit", "purge")["deleted"] == 0
