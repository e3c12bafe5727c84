"""``audit``: read-only integrity checks, with GNO's exit codes (0 clean, 4 findings, 1 bad)."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import write_corpus
from tests.support.cli_support import make_cli


def test_audit_exit_codes_report_and_output_file(
    tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    cli = make_cli(tmp_path)
    root = write_corpus(cli.home / "notes", {"a.md": "# A\n\nsee [[b]]\n", "b.md": "# B\n\nok\n"})
    cli.run("init", str(root), "--name", "notes")
    cli.run("update")
    clean = cli.run("audit", "links", "--json")
    report = json.loads(clean.stdout)
    schema_check("audit-report", report)
    assert report["status"] == "complete" and report["counts"]["findings"]["total"] == 0
    text = cli.run("audit").stdout
    assert text.startswith("Audit complete: ")
    assert "--orphan-root" in text and "orphanRoots" not in text  # names this command's flags

    (root / "a.md").write_text("# A\n\nsee [[b]] and [[missing]]\n")
    cli.run("update")
    before = cli.state()
    found = cli.run("audit", "links", "--json", code=4)
    findings = json.loads(found.stdout)["findings"]
    assert [f["subject"] for f in findings] == ["gno://notes/a.md"]
    assert "missing" in findings[0]["message"]

    out = cli.home / "audit.json"
    written = cli.run("audit", "--json", "--output", str(out), code=4)
    assert written.stdout == "" and f"to {out}" in written.stderr
    assert json.loads(out.read_text())["counts"]["findings"]["total"] == 1
    assert stat.S_IMODE(out.stat().st_mode) == 0o600

    refused = cli.json("audit", "--max-findings", "0", code=1)
    assert refused["error"] == "INVALID_INPUT" and "--max-findings" in refused["message"]
    assert cli.json("audit", "--collection", "nope", code=1)["error"] == "NOT_FOUND"
    assert cli.run("audit", "--output", str(cli.home / "no" / "x.json"), code=1)
    assert cli.state() == before  # an audit changes nothing
