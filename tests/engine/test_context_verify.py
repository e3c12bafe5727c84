"""``gno_context_verify``: a saved Capsule held against the index after edits, over stdio too.

A Capsule is compiled from a real index, the index is then changed in each
way a user can change it, and the receipt must name exactly what changed.
Answers are validated against GNO's ``context-capsule-verification`` schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from gno_trio.config import Context
from gno_trio.engine import ContextRequest, Engine
from tests.conftest import bump_mtime, error_code
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree
from tests.support.tool_results import tool_error_code

NOTES = {
    "tea.md": "# Tea\n\nGreen tea steeps at eighty degrees for two minutes.\n",
    "coffee.md": "# Coffee\n\nEspresso needs a fine grind and nine bars of pressure.\n",
}
GOAL = "how long does green tea steep"


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    write_tree(tmp_path / "vault" / "notes", NOTES)
    engine.collections.add(str(tmp_path / "vault" / "notes"), name="notes")
    engine.sync()
    return engine


def compile_capsule(engine: Engine) -> dict[str, Any]:
    return engine.capsules.compile(ContextRequest(goal=GOAL, budget_tokens=12000))


def edit(engine: Engine, name: str, text: str | None) -> None:
    path = Path(engine.collection("notes").path) / name
    if text is None:
        path.unlink()
    else:
        path.write_text(text, "utf-8")
        bump_mtime(path)
    engine.sync()


def test_an_untouched_index_verifies_unchanged(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    capsule = compile_capsule(vault)
    receipt = vault.capsules.verify(capsule)
    schema_check("context-capsule-verification", receipt)
    assert (receipt["contentStatus"], receipt["rankingStatus"]) == ("unchanged", "unchanged")
    assert receipt["fingerprintStatus"] == "unchanged" and receipt["fingerprintReasons"] == []
    assert receipt["capsuleId"] == capsule["capsuleId"]
    tea = next(e for e in receipt["evidence"] if e["uri"] == "gno://notes/tea.md")
    assert tea["contentCode"] == "verified_unchanged" and tea["currentRetrievalRank"] == 1


def test_edits_deletions_and_config_changes_are_named(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    capsule = compile_capsule(vault)
    edit(vault, "tea.md", NOTES["tea.md"].replace("two minutes", "three minutes"))
    stale = vault.capsules.verify(capsule)
    schema_check("context-capsule-verification", stale)
    tea = next(e for e in stale["evidence"] if e["uri"] == "gno://notes/tea.md")
    assert (tea["contentStatus"], tea["contentCode"]) == ("stale", "source_stale")
    assert tea["rankingStatus"] == "unavailable" and tea["currentRetrievalRank"] is None
    assert stale["contentStatus"] == "stale" and stale["rankingStatus"] == "unavailable"
    assert "index_changed" in stale["fingerprintReasons"]

    edit(vault, "tea.md", None)
    gone = vault.capsules.verify(capsule)
    tea = next(e for e in gone["evidence"] if e["uri"] == "gno://notes/tea.md")
    assert (tea["contentStatus"], tea["contentCode"]) == ("missing", "source_missing")
    assert tea["currentSourceHash"] is None and gone["contentCode"] == "content_missing"


def test_a_configuration_change_is_a_named_drift(vault: Engine) -> None:
    capsule = compile_capsule(vault)
    guidance = (Context(scope_type="global", scope_key="/", text="Prefer primary sources"),)
    vault.update_config(lambda current: attrs.evolve(current, contexts=guidance))
    drifted = vault.capsules.verify(capsule)
    assert drifted["fingerprintStatus"] == "drifted"
    assert drifted["fingerprintReasons"][0] == "config_changed"
    assert "index_changed" not in drifted["fingerprintReasons"]
    assert drifted["contentStatus"] == "unchanged"


@pytest.mark.parametrize(
    "spoil",
    [
        lambda c: c.update(goal="something else"),  # edited: the id no longer matches
        lambda c: c.pop("evidence"),
        lambda c: c.update(schemaVersion="9"),
        lambda c: c["evidence"][0].update(startLine=0),
        lambda c: c["scope"].update(indexName="other"),
    ],
)
def test_a_spoilt_capsule_is_refused_before_any_evidence_is_read(
    vault: Engine, spoil: Callable[[dict[str, Any]], object]
) -> None:
    capsule = copy.deepcopy(compile_capsule(vault))
    spoil(capsule)
    assert error_code(lambda: vault.capsules.verify(capsule)) == "invalid_input"


async def test_context_verify_over_stdio(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    async with mcp_server(server_environment(vault.location.dirs)) as pipe:
        listed = await pipe.list_tools()
        assert listed["gno_context_verify"]["inputSchema"]["required"] == ["capsule"]
        capsule = await pipe.tool("gno_context", {"goal": GOAL, "budgetTokens": 12000})
        raw = await pipe.session.tool("gno_context_verify", {"capsule": capsule})
        receipt = pipe.checked("gno_context_verify", raw)
        schema_check("context-capsule-verification", receipt)
        assert json.loads(raw["content"][0]["text"]) == receipt
        summary = await pipe.session.tool(
            "gno_context_verify", {"capsule": capsule, "format": "md"}
        )
        assert "- content: unchanged (verified_unchanged)" in summary["content"][0]["text"]
        capsule["goal"] = "tampered"
        for spoilt in (capsule, {}):
            refused = await pipe.session.tool("gno_context_verify", {"capsule": spoilt})
            assert refused["isError"] is True
            assert tool_error_code(refused) == "invalid_input"
            assert refused["content"][0]["text"].startswith("Error: invalid_input: ")
        assert await pipe.tool_error("gno_context_verify", {}) == "INVALID_INPUT"
