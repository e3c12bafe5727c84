"""``gno_context``: budgeted, extractive Context Capsules, in the engine and over MCP.

One index is built per module: the shared ``gno-evals`` corpus plus a small
``notes`` collection written here, whose ``index.yml`` entry sets an explicit
``lan`` egress policy and carries configured contexts (global, collection and
prefix scope). The engine tests compile Capsules directly; the wire tests
spawn ``python -m gno_trio mcp`` and speak raw JSON-RPC to it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.config import Context
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Scope
from gno_trio.engine.canonical import canonical_json
from gno_trio.engine.context import (
    CONTEXT_ERROR_CODES,
    ContextRequest,
    agent_projection_text,
    compile_capsule,
)
from gno_trio.errors import GnoError
from gno_trio.server.schemas import output_schema, output_schema_errors
from tests.support.capsules import check_capsule
from tests.support.shared import EVALS_CORPUS, required
from tests.support.stdio_session import StdioSession, open_mcp_server
from tests.support.tool_results import tool_error_code, tool_error_message

NOTES = {
    "launch-a.md": (
        "---\ntitle: Launch proposal A\ntags: [launch]\n---\n"
        "# Launch proposal A\n\n"
        "Proposal A launches the zebra service in March with a staged rollout.\n"
        "\n## Risks\n\nThe staged rollout doubles the on-call load for two weeks.\n"
    ),
    "launch-b.md": (
        "---\ntitle: Launch proposal B\ntags: [launch]\n---\n"
        "# Launch proposal B\n\n"
        "Proposal B launches the zebra service in May as a single cut-over.\n"
        "\n## Costs\n\nA cut-over needs a maintenance window of four hours.\n"
    ),
    "groceries.md": "# Groceries\n\nApples, bread and oat milk.\n",
}
GLOBAL_GUIDANCE = "Everything indexed is a draft unless it says otherwise."
NOTES_GUIDANCE = "Notes are written by the product team."
PREFIX_GUIDANCE = "Proposal A was withdrawn in April."
LAUNCH_GOAL = "Compare the launch proposals"
TOKEN_GOAL = "How do I refresh an expired token?"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Dirs, Engine]]:
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    base = tmp_path_factory.mktemp("gno-context")
    notes = base / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as setup:
        setup.collections.add(str(EVALS_CORPUS), name="evals")
        added = setup.collections.add(str(notes), name="notes")
        config = setup.config.with_collection(attrs.evolve(added, egress_policy="lan"))
        contexts = (
            Context(scope_type="global", scope_key="/", text=GLOBAL_GUIDANCE),
            Context(scope_type="collection", scope_key="notes:", text=NOTES_GUIDANCE),
            Context(scope_type="prefix", scope_key="gno://notes/launch-a", text=PREFIX_GUIDANCE),
        )
        setup.update_config(lambda _: attrs.evolve(config, contexts=contexts))
        setup.sync()
    engine = Engine.open(dirs=dirs)
    try:
        yield dirs, engine
    finally:
        engine.close()


@pytest.fixture(scope="module")
def engine(index: tuple[Dirs, Engine]) -> Engine:
    return index[1]


SCOPE_FIELDS = {field.name for field in dataclasses.fields(Scope)}


def compile_for(engine: Engine, goal: str = LAUNCH_GOAL, **options: Any) -> dict[str, Any]:
    """Compile a Capsule; scope options (``collections``, ``tags_all`` ...) go into its Scope."""
    options.setdefault("budget_tokens", 20_000)
    scope = Scope(**{k: options.pop(k) for k in SCOPE_FIELDS & options.keys()})
    request = ContextRequest(goal=goal, scope=scope, **options)
    with engine.connection() as conn:
        return compile_capsule(conn, engine.config, engine.location.index_name, request)


def compile_error(engine: Engine, goal: str = LAUNCH_GOAL, **options: Any) -> GnoError:
    with pytest.raises(GnoError) as raised:
        compile_for(engine, goal, **options)
    return raised.value


# ---------------------------------------------------------------------------
# The Capsule itself
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("goal", "options"),
    [
        (LAUNCH_GOAL, {}),
        (TOKEN_GOAL, {"budget_tokens": 12_000}),
        (TOKEN_GOAL, {"depth_policy": "thorough", "budget_tokens": 60_000}),
        ("zebra", {"collections": ["notes"], "depth_policy": "fast"}),
    ],
)
def test_capsule_satisfies_both_schemas_and_measures_itself(
    engine: Engine, goal: str, options: dict[str, Any]
) -> None:
    capsule = compile_for(engine, goal, **options)
    check_capsule(capsule)
    assert capsule["schemaVersion"] == "1.1"
    assert capsule["goal"] == goal
    assert capsule["guidance"]["evidenceTrust"] == "untrusted_data"
    assert {item["trust"] for item in capsule["evidence"]} == {"untrusted"}


def test_compiling_twice_gives_identical_bytes_and_id(engine: Engine) -> None:
    first = compile_for(engine, TOKEN_GOAL, budget_tokens=15_000)
    second = compile_for(engine, TOKEN_GOAL, budget_tokens=15_000)
    assert canonical_json(first) == canonical_json(second)
    assert first["capsuleId"] == second["capsuleId"]
    # The same request spelled differently is the same Capsule.
    respelled = compile_for(
        engine,
        f"  {TOKEN_GOAL}\n",
        budget_tokens=15_000,
        collections=["notes", "EVALS", "evals"],
    )
    canonical = compile_for(
        engine, TOKEN_GOAL, budget_tokens=15_000, collections=["evals", "notes"]
    )
    assert respelled["capsuleId"] == canonical["capsuleId"]
    # A different budget is a different Capsule.
    assert compile_for(engine, TOKEN_GOAL, budget_tokens=15_001)["capsuleId"] != first["capsuleId"]


def test_every_passage_is_exactly_the_lines_gno_get_returns(engine: Engine) -> None:
    capsule = compile_for(engine, TOKEN_GOAL, budget_tokens=60_000, depth_policy="thorough")
    assert len(capsule["evidence"]) >= 2
    for item in capsule["evidence"]:
        start, end = item["startLine"], item["endLine"]
        read = engine.documents.get(
            item["uri"], from_line=start, line_count=end - start + 1, line_numbers=False
        )
        assert read["content"] == item["text"]
        assert read["returnedLines"] == {"start": start, "end": end}
        assert item["passageHash"] == hashlib.sha256(item["text"].encode()).hexdigest()
        assert item["sourceHash"] == read["source"]["sourceHash"]
        assert item["mirrorHash"] == read["conversion"]["mirrorHash"]
        assert item["docid"] == read["docid"]


def test_headings_and_titles_come_from_the_document(engine: Engine) -> None:
    capsule = compile_for(engine, "staged rollout on-call load", collections=["notes"])
    first = capsule["evidence"][0]
    assert first["uri"] == "gno://notes/launch-a.md"
    assert first["title"] == "Launch proposal A"
    assert first["heading"] is not None and first["heading"].startswith("Launch proposal A")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    budget=st.integers(min_value=1, max_value=40_000),
    margin_tokens=st.integers(min_value=0, max_value=3_000),
    margin_bytes=st.integers(min_value=0, max_value=20_000),
    byte_factor=st.sampled_from([None, 0.5, 1, 2, 4]),
)
def test_any_budget_either_fits_entirely_or_is_refused(
    engine: Engine, budget: int, margin_tokens: int, margin_bytes: int, byte_factor: float | None
) -> None:
    budget_bytes = None if byte_factor is None else max(1, int(budget * byte_factor))
    options = {
        "budget_tokens": budget,
        "budget_bytes": budget_bytes,
        "safety_margin_tokens": min(margin_tokens, budget - 1),
        "safety_margin_bytes": min(margin_bytes, (budget_bytes or budget * 4) - 1),
    }
    try:
        capsule = compile_for(engine, TOKEN_GOAL, **options)
    except GnoError as error:
        assert error.code == "invalid_budget", error.message
        return
    check_capsule(capsule)


def test_tight_budget_keeps_fewer_passages_and_says_what_it_left_out(engine: Engine) -> None:
    roomy = compile_for(engine, TOKEN_GOAL, budget_tokens=200_000)
    assert roomy["truncated"] is False
    tight = compile_for(engine, TOKEN_GOAL, budget_tokens=1_500)
    check_capsule(tight)
    assert 1 <= len(tight["evidence"]) < len(roomy["evidence"])
    assert tight["truncated"] is True
    assert tight["omissions"]["reasonCounts"]["global_budget"] >= 1
    assert tight["budget"]["usedTokens"] <= 1_500
    listed = tight["omissions"]["items"]
    assert listed == sorted(listed, key=lambda item: item["reason"] != "global_budget")
    # Every candidate is either evidence or an omission, never both.
    evidence_ids = {item["evidenceId"] for item in tight["evidence"]}
    assert evidence_ids.isdisjoint(item["candidateId"] for item in listed)


def test_budget_too_small_for_any_passage_is_invalid_budget_naming_the_minimum(
    engine: Engine,
) -> None:
    error = compile_error(engine, TOKEN_GOAL, budget_tokens=100)
    assert error.code == "invalid_budget"
    needed = int(error.message.split("budgetTokens of at least ")[1].split(" ")[0])
    capsule = compile_for(engine, TOKEN_GOAL, budget_tokens=needed)
    check_capsule(capsule)
    assert len(capsule["evidence"]) == 1
    assert compile_error(engine, TOKEN_GOAL, budget_tokens=needed - 1).code == "invalid_budget"


def test_safety_margins_are_kept_free(engine: Engine) -> None:
    by_tokens = compile_for(
        engine, TOKEN_GOAL, budget_tokens=20_000, safety_margin_tokens=9_000, budget_bytes=30_000
    )
    check_capsule(by_tokens)
    assert by_tokens["budget"]["usedTokens"] <= 11_000
    assert by_tokens["budget"]["requestedBytes"] == 30_000
    by_bytes = compile_for(
        engine, TOKEN_GOAL, budget_tokens=30_000, budget_bytes=20_000, safety_margin_bytes=9_000
    )
    check_capsule(by_bytes)
    assert by_bytes["budget"]["usedBytes"] <= 11_000


# ---------------------------------------------------------------------------
# Coverage, capabilities, guidance, egress
# ---------------------------------------------------------------------------


def test_coverage_reports_each_facet_and_the_missing_one(engine: Engine) -> None:
    capsule = compile_for(engine, "zebra rollout quuxfrobnicator", collections=["notes"])
    coverage = capsule["coverage"]
    assert coverage["requestedFacets"] == ["quuxfrobnicator", "rollout", "zebra"]
    assert coverage["complete"] is False
    assert coverage["unresolvedFacets"] == ["quuxfrobnicator"]
    assert coverage["gaps"] == [{"facet": "quuxfrobnicator", "code": "facet_not_found"}]
    assert {"code": "incomplete_coverage"} in capsule["warnings"]
    evidence = {item["evidenceId"]: item for item in capsule["evidence"]}
    for covered in coverage["coveredFacets"]:
        for evidence_id in covered["evidenceIds"]:
            assert covered["facet"] in evidence[evidence_id]["facets"]


def test_comparison_goal_gets_both_proposals(engine: Engine) -> None:
    capsule = compile_for(engine, LAUNCH_GOAL, collections=["notes"])
    uris = {item["uri"] for item in capsule["evidence"]}
    assert {"gno://notes/launch-a.md", "gno://notes/launch-b.md"} <= uris
    assert "gno://notes/groceries.md" not in uris
    assert capsule["coverage"]["complete"] is True


def test_fast_requests_no_models_and_balanced_says_they_were_unavailable(
    engine: Engine,
) -> None:
    fast = compile_for(engine, TOKEN_GOAL, depth_policy="fast")
    states = fast["retrieval"]["capabilityStates"]
    assert {state["outcome"] for state in states.values()} == {"not_requested"}
    assert fast["fallbacks"] == [{"code": "tokenizer_unavailable", "capability": "token_count"}]
    assert fast["retrieval"]["request"]["graphRequested"] is False

    balanced = compile_for(engine, TOKEN_GOAL)
    states = balanced["retrieval"]["capabilityStates"]
    assert {name: state["outcome"] for name, state in states.items()} == {
        "semanticSearch": "unavailable",
        "reranking": "unavailable",
        "graphExpansion": "unavailable",
    }
    assert {(f["capability"], f["code"]) for f in balanced["fallbacks"]} == {
        ("semantic_search", "embedding_unavailable"),
        ("reranking", "reranking_unavailable"),
        ("graph_expansion", "graph_unavailable"),
        ("token_count", "tokenizer_unavailable"),
    }
    for capsule in (fast, balanced):
        capabilities = capsule["capabilities"]
        assert capabilities["lexicalSearch"] is True
        assert not capabilities["semanticSearch"] and not capabilities["reranking"]
        fingerprints = capsule["fingerprints"]
        assert fingerprints["embeddingModel"] is None and fingerprints["rerankModel"] is None
        assert {"code": "token_estimate_used"} in capsule["warnings"]

    no_rerank = compile_for(engine, TOKEN_GOAL, no_rerank=True)
    assert no_rerank["retrieval"]["capabilityStates"]["reranking"]["outcome"] == "not_requested"


def test_depth_policy_changes_how_many_passages_are_considered(engine: Engine) -> None:
    counts = {}
    for depth in ("fast", "balanced", "thorough"):
        capsule = compile_for(engine, TOKEN_GOAL, depth_policy=depth, budget_tokens=300_000)
        counts[depth] = len(capsule["evidence"]) + capsule["omissions"]["total"]
        expected_limit = 80 if depth == "thorough" else 40
        assert capsule["retrieval"]["request"]["candidateLimit"] == expected_limit
    assert counts["fast"] < counts["balanced"] <= counts["thorough"]


def test_configured_contexts_are_bound_to_the_passages_they_scope(engine: Engine) -> None:
    capsule = compile_for(engine, "zebra service launches", budget_tokens=40_000)
    guidance = {entry["contextId"]: entry for entry in capsule["guidance"]["configuredContexts"]}
    texts = {entry["text"]: entry["contextId"] for entry in guidance.values()}
    assert capsule["capabilities"]["configuredContext"] is True
    by_uri = {item["uri"]: set(item["contextIds"]) for item in capsule["evidence"]}
    assert by_uri["gno://notes/launch-a.md"] == {
        texts[GLOBAL_GUIDANCE],
        texts[NOTES_GUIDANCE],
        texts[PREFIX_GUIDANCE],
    }
    assert by_uri["gno://notes/launch-b.md"] == {texts[GLOBAL_GUIDANCE], texts[NOTES_GUIDANCE]}
    bound = set().union(*by_uri.values())
    assert bound == set(guidance), "every guidance entry is bound, every binding resolves"
    assert guidance[texts[NOTES_GUIDANCE]]["scopeKey"] == "notes:"


def test_egress_class_follows_each_collection_policy(engine: Engine) -> None:
    capsule = compile_for(engine, "zebra token", budget_tokens=60_000)
    classes = {item["collection"]: item["egress"] for item in capsule["evidence"]}
    assert classes == {"notes": "lan", "evals": "local_only"}
    assert capsule["egressLineage"]["effectivePolicy"] == "local_only"
    notes_only = compile_for(engine, "zebra", collections=["notes"])
    assert notes_only["egressLineage"]["effectivePolicy"] == "lan"
    assert notes_only["egressLineage"]["sources"] == [
        {"collection": "notes", "policy": "lan", "source": "explicit"}
    ]


def test_scope_filters_keep_evidence_inside_them(engine: Engine) -> None:
    notes = compile_for(engine, "zebra token", collections=["notes"])
    assert all(item["uri"].startswith("gno://notes/") for item in notes["evidence"])
    assert notes["scope"]["collections"] == ["notes"]
    english = compile_for(engine, TOKEN_GOAL, uri_prefix="gno://evals/en/")
    assert all(item["uri"].startswith("gno://evals/en/") for item in english["evidence"])
    tagged = compile_for(engine, "zebra", tags_all=["#Launch"])
    assert tagged["scope"]["tagsAll"] == ["launch"]
    assert {item["collection"] for item in tagged["evidence"]} == {"notes"}


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown collection", {"collections": ["nope"]}, "invalid_filter"),
    ("prefix in unknown collection", {"uri_prefix": "gno://nope/"}, "invalid_filter"),
    ("prefix that is not a gno URI", {"uri_prefix": "notes/launch"}, "invalid_uri"),
    (
        "prefix outside the requested collections",
        {"uri_prefix": "gno://evals/en/", "collections": ["notes"]},
        "invalid_uri",
    ),
    ("zero budget", {"budget_tokens": 0}, "invalid_budget"),
    ("zero byte budget", {"budget_bytes": 0}, "invalid_budget"),
    ("margin as large as the budget", {"safety_margin_tokens": 20_000}, "invalid_budget"),
    ("negative margin", {"safety_margin_bytes": -1}, "invalid_budget"),
    ("unreadable date", {"since": "the day after"}, "invalid_filter"),
    ("reversed dates", {"since": "2026-02-01", "until": "2026-01-01"}, "invalid_filter"),
    ("two hyde entries", {"query_modes": [("hyde", "a"), ("hyde", "b")]}, "invalid_filter"),
    ("tag with a space", {"tags_any": ["two words"]}, "invalid_filter"),
    ("unknown depth", {"depth_policy": "deep"}, "invalid_filter"),
    ("bad language tag", {"lang": "english please"}, "invalid_filter"),
    ("score above one", {"min_score": 1.5}, "invalid_filter"),
    ("empty query", {"query": "   "}, "invalid_goal"),
]


@pytest.mark.parametrize(("label", "options", "code"), ERRORS, ids=[e[0] for e in ERRORS])
def test_invalid_requests_fail_with_their_context_code(
    engine: Engine, label: str, options: dict[str, Any], code: str
) -> None:
    error = compile_error(engine, LAUNCH_GOAL, **options)
    assert error.code == code, (label, error.message)


@pytest.mark.parametrize("goal", ["", "   \n\t ", "?! -- ...", "x" * 16_385])
def test_goal_without_searchable_text_is_invalid_goal(engine: Engine, goal: str) -> None:
    assert compile_error(engine, goal).code == "invalid_goal"


def test_goal_nothing_matches_is_no_evidence(engine: Engine) -> None:
    error = compile_error(engine, "xyzzyplughfrobozz")
    assert error.code == "no_evidence"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(goal=st.text(max_size=60), query=st.none() | st.text(max_size=30))
def test_arbitrary_goal_text_compiles_or_fails_with_a_context_code(
    engine: Engine, goal: str, query: str | None
) -> None:
    try:
        capsule = compile_for(engine, goal, query=query, budget_tokens=30_000)
    except GnoError as error:
        assert error.code in CONTEXT_ERROR_CODES, error
        return
    assert output_schema_errors(output_schema("context-capsule"), capsule) == []


# ---------------------------------------------------------------------------
# The model-visible projection
# ---------------------------------------------------------------------------


def test_projection_is_the_compact_versioned_view_of_the_capsule(engine: Engine) -> None:
    capsule = compile_for(engine, "zebra token quuxfrobnicator", budget_tokens=12_000)
    text = agent_projection_text(capsule)
    projection = json.loads(text)
    assert text == canonical_json(projection)
    assert set(projection) == {"v", "id", "b", "r", "e", "g", "c", "o", "t", "trust"}
    assert projection["v"] == "gno-context-agent-v1"
    assert projection["id"] == capsule["capsuleId"]
    budget = capsule["budget"]
    assert projection["b"] == [
        budget["requestedTokens"],
        budget["requestedBytes"],
        budget["usedTokens"],
        budget["usedBytes"],
        "unicode_conservative",
        None,
    ]
    depth, index_fp, config_fp, retrieval_fp, embed_fp, rerank_fp, enabled, fallbacks = projection[
        "r"
    ]
    assert depth == "balanced"
    assert index_fp == capsule["retrieval"]["indexSnapshot"]["after"]
    assert (config_fp, retrieval_fp) == (
        capsule["fingerprints"]["config"],
        capsule["fingerprints"]["retrieval"],
    )
    assert embed_fp is None and rerank_fp is None
    assert "lexicalSearch" in enabled and "semanticSearch" not in enabled
    assert "semantic_search:embedding_unavailable" in fallbacks
    assert len(projection["e"]) == len(capsule["evidence"])
    for row, item in zip(projection["e"], capsule["evidence"], strict=True):
        assert row == [
            item["uri"],
            item["startLine"],
            item["endLine"],
            item["sourceHash"],
            item["mirrorHash"],
            item["passageHash"],
            item["text"],
            item["title"],
            item["heading"],
            item["contextIds"],
            item["egress"],
        ]
    trust, boundary, guidance = projection["g"]
    assert (trust, boundary) == ("untrusted_data", "hard_delimited")
    assert all(len(entry) == 4 for entry in guidance)
    covered, gaps = projection["c"]
    assert ["quuxfrobnicator", "facet_not_found"] in gaps
    assert covered == [entry["facet"] for entry in capsule["coverage"]["coveredFacets"]]
    total, pairs = projection["o"]
    assert total == capsule["omissions"]["total"] == sum(count for _, count in pairs)
    assert all(count > 0 for _, count in pairs)
    assert projection["t"] == capsule["truncated"]
    assert projection["trust"] == "untrusted_data"


# ---------------------------------------------------------------------------
# Over MCP: python -m gno_trio mcp
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_env(index: tuple[Dirs, Engine]) -> dict[str, str]:
    dirs = index[0]
    environment = {k: v for k, v in os.environ.items() if k != "GNO_MCP_ENABLE_WRITE"}
    return {
        **environment,
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
    }


@asynccontextmanager
async def spawn(env: Mapping[str, str], tmp_path: Path, *args: str) -> AsyncIterator[StdioSession]:
    stderr_path = tmp_path / f"stderr-{uuid.uuid4().hex}.log"
    with stderr_path.open("wb") as stderr:
        async with open_mcp_server(
            env, *args, client_name="context-test", stderr=stderr, timeout=20
        ) as session:
            yield session


async def test_mcp_serves_the_capsule_and_its_projection(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path) as wire:
        tools = {tool["name"]: tool for tool in (await wire.call("tools/list"))["result"]["tools"]}
        listed = tools["gno_context"]
        assert listed["inputSchema"]["additionalProperties"] is False
        assert listed["inputSchema"]["required"] == ["goal", "budgetTokens"]
        assert listed["annotations"]["readOnlyHint"] is True
        result = await wire.tool(
            "gno_context", {"goal": TOKEN_GOAL, "budgetTokens": 12_000, "format": "md"}
        )
        assert "isError" not in result
        capsule = result["structuredContent"]
        assert output_schema_errors(listed["outputSchema"], capsule) == []
        check_capsule(capsule)
        text = result["content"][0]["text"]
        assert text == agent_projection_text(capsule)
        assert json.loads(text)["id"] == capsule["capsuleId"]
        again = await wire.tool("gno_context", {"goal": TOKEN_GOAL, "budgetTokens": 12_000})
        assert again["structuredContent"] == capsule


async def test_mcp_errors_carry_context_codes(server_env: dict[str, str], tmp_path: Path) -> None:
    async with spawn(server_env, tmp_path) as wire:
        unknown_field = await wire.tool(
            "gno_context", {"goal": "x", "budgetTokens": 9000, "colection": "a"}
        )
        assert unknown_field["isError"] is True
        assert tool_error_code(unknown_field) == "INVALID_INPUT"
        assert "colection" in unknown_field["content"][0]["text"]

        cases = [
            ({"goal": "zebra", "budgetTokens": 9000, "collections": ["nope"]}, "invalid_filter"),
            ({"goal": "  ", "budgetTokens": 9000}, "invalid_goal"),
            ({"goal": "zebra", "budgetTokens": 90, "safetyMarginTokens": 90}, "invalid_budget"),
            ({"goal": "zebra", "budgetTokens": 50}, "invalid_budget"),
            ({"goal": "xyzzyplughfrobozz", "budgetTokens": 9000}, "no_evidence"),
            ({"goal": "zebra", "budgetTokens": 9000, "uriPrefix": "notes/"}, "invalid_uri"),
        ]
        for arguments, code in cases:
            result = await wire.tool("gno_context", arguments)
            assert result["isError"] is True, arguments
            assert tool_error_code(result) == code, (arguments, result)
            assert tool_error_message(result), (arguments, result)


async def test_core_profile_offers_gno_context(server_env: dict[str, str], tmp_path: Path) -> None:
    async with spawn(server_env, tmp_path, "--tool-profile", "core") as wire:
        names = [tool["name"] for tool in (await wire.call("tools/list"))["result"]["tools"]]
        assert "gno_context" in names
        result = await wire.tool(
            "gno_context", {"goal": "zebra", "budgetTokens": 9000, "depthPolicy": "fast"}
        )
        assert result["structuredContent"]["retrieval"]["depthPolicy"] == "fast"
