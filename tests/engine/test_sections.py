"""``gno_section``: durable section targets, created from headings and resolved after edits.

Engine tests run over a real index whose note is rewritten between create
and resolve, to see each resolution status a user can meet. The wire test
spawns ``python -m gno_trio mcp`` and checks the answers against the
advertised schema and GNO's ``section@1.0``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine import Engine
from tests.conftest import bump_mtime, error_code
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree

GUIDE = (
    "---\ntitle: Guide\n---\n"
    "# Guide\n\nIntro 😀 text.\n\n"
    "## Install\n\nRun the installer first.\n\n"
    "## Usage\n\nCall the tool.\n\n"
    "```\n# not a heading\n```\n\n"
    "## Install\n\nSecond install section.\n"
)


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    write_tree(tmp_path / "vault" / "notes", {"guide.md": GUIDE})
    engine.collections.add(str(tmp_path / "vault" / "notes"), name="notes")
    engine.sync()
    return engine


def rewrite(engine: Engine, text: str) -> None:
    path = Path(engine.collection("notes").path) / "guide.md"
    path.write_text(text, encoding="utf-8")
    bump_mtime(path)
    engine.sync()


def create(engine: Engine, **where: Any) -> dict[str, Any]:
    return engine.documents.section("create", "notes/guide.md", **where)


def resolve(engine: Engine, target: dict[str, Any]) -> dict[str, Any]:
    return engine.documents.section("resolve", "gno://notes/guide.md", target=target)


def test_create_names_the_heading_by_path_occurrence_anchor_and_quote(vault: Engine) -> None:
    made = create(vault, anchor="install-1")
    target = made["target"]
    assert made["uri"] == "gno://notes/guide.md" and target["document"]["uri"] == made["uri"]
    assert target["headingPath"] == ["Guide", "Install"] and target["occurrence"] == 2
    assert target["quote"]["exact"] == "Second install section."
    assert target["hints"]["line"] == 20
    # offsets count UTF-16 code units of the indexed text (the emoji counts two)
    text = vault.documents.get("notes/guide.md", line_numbers=False)["content"]
    units = text.encode("utf-16-le")
    hints = target["hints"]
    assert (
        units[2 * hints["startOffset"] : 2 * hints["endOffset"]].decode("utf-16-le")
        == (target["quote"]["exact"])
    )
    assert create(vault, line=20)["target"] == target
    first = create(vault, anchor="#Install")["target"]
    assert (first["occurrence"], first["anchor"], first["hints"]["line"]) == (1, "install", 8)
    assert first["quote"]["prefix"].endswith("## Install\n\n")


def test_resolution_after_each_kind_of_edit(vault: Engine) -> None:
    target = create(vault, anchor="install-1")["target"]
    same = resolve(vault, target)
    assert same["status"] == "exact"
    assert same["citation"]["lineStart"] == 20 and same["citation"]["lineEnd"] == 22

    rewrite(vault, GUIDE.replace("# Guide\n", "# Guide\n\nA new first paragraph.\n"))
    moved = resolve(vault, target)
    assert (
        moved["status"] == "recovered" and moved["currentFingerprint"] != same["currentFingerprint"]
    )
    assert moved["citation"]["lineStart"] == 22

    rewrite(vault, GUIDE.replace("Second install section.", "Rewritten entirely."))
    assert "citation" not in (stale := resolve(vault, target))
    assert stale["status"] == "stale" and stale["diagnostics"]["candidateCount"] == 2

    rewrite(vault, GUIDE.replace("## Install\n\nSecond", "## Setup\n\nSecond"))
    # occurrence 2 of Guide > Install is gone; the quote lives under Setup now, which has
    # neither the heading path nor the anchor
    assert resolve(vault, target)["status"] == "stale"
    rewrite(vault, "# Other\n\nNothing here.\n")
    gone = resolve(vault, target)
    assert gone["status"] == "missing" and "citation" not in gone


def test_several_sections_holding_the_quote_are_ambiguous(vault: Engine) -> None:
    three = "# Log\n\n## Entry\n\nsame words\n\n## Entry\n\nsame words\n\n## Entry\n\nsame words\n"
    rewrite(vault, three)
    target = create(vault, line=11)["target"]
    assert target["occurrence"] == 3
    rewrite(vault, three.replace("## Entry\n\nsame words\n\n", "", 1))
    found = resolve(vault, target)
    assert found["status"] == "ambiguous" and "citation" not in found
    assert [c["line"] for c in found["diagnostics"]["candidates"]] == [3, 7]


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda e: create(e, anchor="install", line=8), "INVALID_INPUT"),
        (lambda e: create(e), "INVALID_INPUT"),
        (lambda e: create(e, anchor="nowhere"), "NOT_FOUND"),
        (lambda e: create(e, line=9), "NOT_FOUND"),
        (lambda e: create(e, line=17), "NOT_FOUND"),  # inside a code fence
        (lambda e: e.documents.section("resolve", "notes/guide.md"), "INVALID_INPUT"),
        (lambda e: e.documents.section("create", "notes/none.md", line=1), "NOT_FOUND"),
        (lambda e: e.documents.section("explode", "notes/guide.md"), "INVALID_INPUT"),
    ],
)
def test_bad_requests_are_refused(vault: Engine, call: Callable[[Engine], Any], code: str) -> None:
    assert error_code(lambda: call(vault)) == code


def test_a_target_for_another_document_is_refused(vault: Engine, tmp_path: Path) -> None:
    target = create(vault, anchor="usage")["target"]
    write_tree(Path(vault.collection("notes").path), {"other.md": "# Usage\n\nCall.\n"})
    vault.sync()
    wrong = lambda: vault.documents.section("resolve", "notes/other.md", target=target)  # noqa: E731
    assert error_code(wrong) == "INVALID_INPUT"


async def test_section_over_stdio(vault: Engine, schema_check: Callable[[str, Any], None]) -> None:
    async with mcp_server(server_environment(vault.location.dirs)) as pipe:
        listed = await pipe.list_tools()
        tool = listed["gno_section"]
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["inputSchema"]["additionalProperties"] is False
        assert tool["inputSchema"]["required"] == ["action", "ref"]
        made = await pipe.tool(
            "gno_section", {"action": "create", "ref": "notes/guide.md", "anchor": "usage"}
        )
        schema_check("section", made)
        raw = await pipe.session.tool(
            "gno_section", {"action": "resolve", "ref": "notes/guide.md", "target": made["target"]}
        )
        resolved = pipe.checked("gno_section", raw)
        schema_check("section", resolved)
        text = raw["content"][0]["text"]
        assert "fromLine=12 lineCount=7" in text
        assert json.loads(text.splitlines()[-1]) == resolved
        for bad in [
            {"action": "create", "ref": "notes/guide.md", "anchor": "usage", "extra": 1},
            {"action": "resolve", "ref": "notes/guide.md", "target": {"schemaVersion": "1"}},
            {"action": "create", "ref": "", "line": 1},
            {"action": "create", "ref": "notes/guide.md", "line": 0},
        ]:
            assert await pipe.tool_error("gno_section", bad) == "INVALID_INPUT", bad
