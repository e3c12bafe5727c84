"""``gno_audit``: the read-only integrity audit over a vault with known defects.

The vault holds a broken wiki link, a broken Markdown link, an orphan, an
invalid provenance block, a note edited after indexing and one deleted
after indexing. The audit must report each exactly once, with stable IDs,
and change nothing; the wire test checks the report against GNO's
``audit-report`` schema.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine import Engine
from tests.conftest import db_snapshot, error_code
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree

VAULT = {
    "home.md": "# Home\n\nStart at [[guide]] and [[missing note]].\n",
    "guide.md": "# Guide\n\nSee [setup](setup.md) and [gone](nowhere.md).\n",
    "setup.md": "# Setup\n\nAll good.\n",
    "orphan.md": "# Orphan\n\nNobody links here.\n",
    "captured.md": "---\nsource:\n  kind: telepathy\n  capturedAt: 2024-01-01\n---\n# Captured\n",
    "clipped.md": (
        "---\nsource:\n  kind: web\n  url: https://example.org/a\n"
        "  capturedAt: 2024-01-01T10:00:00Z\n---\n# Clipped\n"
    ),
    "edited.md": "# Edited\n\nBefore.\n",
    "deleted.md": "# Deleted\n\nSoon gone.\n",
}


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    root = write_tree(tmp_path / "vault" / "notes", VAULT)
    engine.collections.add(str(root), name="notes")
    engine.sync()
    (root / "edited.md").write_text("# Edited\n\nAfter, not yet indexed.\n", "utf-8")
    (root / "deleted.md").unlink()
    return engine


def by_rule(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rule["ruleId"]: rule for rule in report["rules"]}


def subjects(rule: dict[str, Any]) -> set[str]:
    return {f["subject"].removeprefix("gno://notes/") for f in rule["findings"]}


def test_each_defect_is_reported_once_and_nothing_changes(vault: Engine) -> None:
    before = db_snapshot(vault.location.db_path)
    report = vault.index.audit()
    rules = by_rule(report)
    assert report["status"] == "complete"
    assert subjects(rules["links.local-targets"]) == {"home.md", "guide.md"}
    assert rules["links.local-targets"]["findingCount"] == 2
    assert rules["links.orphans"]["status"] == "skip" and rules["links.orphans"]["skipReason"]
    assert subjects(rules["provenance.declared-source"]) == {"captured.md"}
    assert (
        "telepathy" in rules["provenance.declared-source"]["findings"][0]["evidence"][0]["summary"]
    )
    assert subjects(rules["freshness.index-current"]) == {"edited.md", "deleted.md"}
    assert rules["freshness.max-age"]["status"] == "skip"
    assert report["counts"]["findings"]["total"] == 5
    assert report["counts"]["examined"]["documents"] == 8
    assert db_snapshot(vault.location.db_path) == before
    again = vault.index.audit()
    assert [f["id"] for f in again["findings"]] == [f["id"] for f in report["findings"]]


def test_policy_inputs_turn_on_orphans_and_age(vault: Engine) -> None:
    report = vault.index.audit(orphan_roots=["notes/home.md"], max_age_days=1)
    rules = by_rule(report)
    assert subjects(rules["links.orphans"]) >= {"orphan.md", "captured.md", "clipped.md"}
    assert "setup.md" not in subjects(rules["links.orphans"])  # home -> guide -> setup
    ignored = vault.index.audit(
        category="links", orphan_roots=["notes/home.md"], orphan_ignore_prefixes=["gno://notes/c"]
    )
    assert not {"captured.md", "clipped.md"} & subjects(by_rule(ignored)["links.orphans"])
    old = Path(vault.collection("notes").path) / "setup.md"
    os.utime(old, (0, 0))
    vault.sync()
    aged = by_rule(vault.index.audit(category="freshness", max_age_days=30))["freshness.max-age"]
    assert subjects(aged) == {"setup.md"}


def test_scope_filters_and_truncation(vault: Engine) -> None:
    links_only = vault.index.audit(category="links", paths=["guide"])
    assert links_only["scope"]["categories"] == ["links"]
    assert links_only["counts"]["examined"]["documents"] == 1
    cut = vault.index.audit(max_findings=2)
    assert cut["counts"]["findings"] == {"total": 5, "returned": 2, "truncated": True}
    assert cut["truncation"] == {"findingsTruncated": True, "maxFindings": 2}
    assert error_code(lambda: vault.index.audit(collections=["ghost"])) == "NOT_FOUND"
    assert error_code(lambda: vault.index.audit(max_findings=0)) == "INVALID_INPUT"


def test_a_cancelled_audit_is_partial(vault: Engine) -> None:
    report = vault.index.audit(should_stop=lambda: True)
    assert report["status"] == "partial" and report["rules"] == []


async def test_audit_over_stdio(vault: Engine, schema_check: Callable[[str, Any], None]) -> None:
    async with mcp_server(server_environment(vault.location.dirs)) as pipe:
        listed = await pipe.list_tools()
        assert listed["gno_audit"]["annotations"]["readOnlyHint"] is True
        report = await pipe.tool("gno_audit", {})
        schema_check("audit-report", report)
        assert report["counts"]["findings"]["total"] == 5
        scoped = await pipe.tool(
            "gno_audit",
            {"category": "provenance", "collections": ["notes"], "tags": [], "maxFindings": 1},
        )
        schema_check("audit-report", scoped)
        assert scoped["scope"]["categories"] == ["provenance"]
        for bad in ({"category": "spelling"}, {"maxFindings": 1001}, {"extra": True}):
            assert await pipe.tool_error("gno_audit", bad) == "INVALID_INPUT", bad
