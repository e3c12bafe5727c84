"""Every successful answer of every tool matches the outputSchema the tool itself declares.

The shared corpora (``mcp-docs``, ``gno-evals``) hold what real notes hold:
byte-identical files, many languages, deep folders. Over an index of one of
them plus the walk's scratch notes, :func:`tests.support.official_walk.walk` calls
every tool (writes on) through the app in process, then once more reads the
corpus's own documents; each ``structuredContent`` is validated with
``jsonschema`` against the schema ``tools/list`` advertises for that tool, as
a client that checks answers would. ``gno-evals`` is embedded first, so the
semantic tools answer too; ``mcp-docs`` (7 MB) is searched lexically only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gno_trio.protocol.versions import Era
from gno_trio.server.context import RequestContext
from gno_trio.server.schemas import output_schema_errors
from tests.support.http_gateway_support import engine_app
from tests.support.official_walk import (
    STEPS,
    Called,
    Outcome,
    WalkState,
    build_walk_index,
    fixture_read_steps,
    walk,
    walk_extra_folder,
    walk_problems,
)
from tests.support.shared import FIXTURES, required

LEGACY = "2025-11-25"
# (fixture, a word its documents use, whether to embed it first)
CORPORA = [("gno-evals", "error", True), ("mcp-docs", "protocol", False)]
# Nothing on a local index records an egress receipt, so there is none to show or delete.
NEVER_SUCCEED = frozenset({"gno_egress_audit_show", "gno_egress_audit_delete"})
SEMANTIC = frozenset({"gno_vsearch", "gno_similar"})


def _corpus(name: str) -> Path:
    return required(FIXTURES / name / "corpus", f"the shared {name} fixture corpus")


def _schema_problems(called: list[Called], listed: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for c in called:
        result = c.result or {}
        if result.get("isError") or "structuredContent" not in result:
            continue
        schema = listed[c.tool]["outputSchema"]
        problems += [
            f"{c.describe()}: {problem}"
            for problem in output_schema_errors(schema, result["structuredContent"])
        ]
    return problems


@pytest.mark.parametrize(("fixture", "word", "embed"), CORPORA)
async def test_every_answer_matches_its_declared_output_schema(
    fixture: str, word: str, embed: bool, tmp_path: Path
) -> None:
    dirs = build_walk_index(tmp_path, fixture=_corpus(fixture), embed=embed)
    with engine_app(dirs, write_enabled=True) as (app, _engine):
        ctx = RequestContext(era=Era.LEGACY, protocol_version=LEGACY, session_id="schemas")
        listed = {
            tool["name"]: tool
            for tool in (await app.handle_request("tools/list", {}, ctx))["tools"]
        }

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            params = {"name": name, "arguments": arguments}
            return {"result": dict(await app.handle_request("tools/call", params, ctx))}

        state = WalkState(label=fixture, extra=walk_extra_folder(tmp_path, fixture))
        called = await walk(call, listed, state, STEPS)
        reads = WalkState(label=f"{fixture}-reads", extra=state.extra)
        called += await walk(call, listed, reads, fixture_read_steps(word))
        assert reads.doc.startswith("gno://fixture/"), "the second pass reads the corpus"

    assert walk_problems(called, listed) == []
    problems = _schema_problems(called, listed)
    assert problems == [], "\n".join(problems)
    answered = {c.tool for c in called if c.kind == "valid" and not (c.result or {}).get("isError")}
    allowed = NEVER_SUCCEED | (frozenset() if embed else SEMANTIC)
    assert set(listed) - answered <= allowed, sorted(set(listed) - answered)
