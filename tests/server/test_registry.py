"""The tool registry: catalogue, profiles, write gate, descriptions and schemas."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator  # type: ignore[import-untyped]

from gno_trio.errors import GnoError
from gno_trio.server.registry import parse_profile
from gno_trio.server.schemas import (
    JSON_SCHEMA_DIALECT,
    OUTPUT_SCHEMA_NAMES,
    input_schema_for,
    input_schemas_for,
    output_schema,
    output_schema_errors,
)
from gno_trio.server.tooltypes import ToolSpec
from gno_trio.tools import CATALOGUE, CORE_READ, CORE_WRITE, TOOL_ORDER
from gno_trio.tools.capture import CaptureInput
from gno_trio.tools.index_state import ChangesInput, StatusInput
from gno_trio.tools.memory import MemoryReceipt, RecallInput, RememberInput
from gno_trio.tools.reading import GetInput, MultiGetInput
from gno_trio.tools.retrieval import QueryInput, SearchInput
from tests.support.shared import REFERENCE, SEED, required

EXPECTED_CORE_READ = {
    "gno_query",
    "gno_search",
    "gno_get",
    "gno_multi_get",
    "gno_context",
    "gno_changes",
    "gno_recall",
}
EXPECTED_CORE_WRITE = {"gno_capture", "gno_remember"}
IMPLEMENTED = tuple(CATALOGUE.definitions)


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (keyword, value) pair of a schema; property names are not keywords."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            if key in ("properties", "$defs") and isinstance(value, dict):
                for sub in value.values():
                    yield from _walk(sub)
            else:
                yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


# ---------------------------------------------------------------------------
# Catalogue and classification
# ---------------------------------------------------------------------------


def test_catalogue_has_53_unique_names_split_34_read_19_write() -> None:
    assert len(TOOL_ORDER) == 53
    assert len(set(TOOL_ORDER)) == 53
    assert len(CATALOGUE.read_names) == 34
    assert len(CATALOGUE.write_names) == 19
    assert set(CATALOGUE.read_names) | CATALOGUE.write_names == set(TOOL_ORDER)
    assert not set(CATALOGUE.read_names) & CATALOGUE.write_names


def test_memory_and_peek_are_classified_like_gno() -> None:
    assert "gno_remember" in CATALOGUE.write_names
    assert "gno_capture" in CATALOGUE.write_names
    assert "gno_recall" in CATALOGUE.read_names
    assert "gno_peek" in CATALOGUE.read_names
    assert "gno_job_status" in CATALOGUE.read_names


OBSERVED_135 = REFERENCE / "gno-1.35" / "observed" / "gno-1.35.0-tools-enable-write.json"
ADDED_IN_142 = {
    "gno_peek": "gno_status",
    "gno_recall": "gno_graph_path",
    "gno_remember": "gno_capture",
}
"""1.42's new tools and the tool each follows (peek precedes status; GNO-ENGINE.md 2.2)."""


def test_catalogue_order_is_gno_135_order_with_the_142_tools_in_place() -> None:
    required(OBSERVED_135, "GNO 1.35's observed tools/list")
    observed = [t["name"] for t in json.loads(OBSERVED_135.read_text("utf-8"))["result"]["tools"]]
    assert len(observed) == 50
    expected = list(observed)
    for added, neighbour in ADDED_IN_142.items():
        after = 0 if added == "gno_peek" else 1
        expected.insert(expected.index(neighbour) + after, added)
    assert list(TOOL_ORDER) == expected
    # GNO lists the two job tools last, after every write tool.
    assert TOOL_ORDER[-2:] == ("gno_job_status", "gno_list_jobs")
    assert CATALOGUE.select("full", False)[-2:] == ["gno_job_status", "gno_list_jobs"]
    assert CATALOGUE.select("full", False, among=TOOL_ORDER) == list(CATALOGUE.read_names)
    assert CATALOGUE.select("full", True, among=TOOL_ORDER) == list(TOOL_ORDER)


def test_every_tool_name_follows_the_gno_prefix_convention() -> None:
    for name in TOOL_ORDER:
        assert re.fullmatch(r"gno_[a-z_]+", name), name


def test_core_sets_are_exact() -> None:
    assert set(CORE_READ) == EXPECTED_CORE_READ
    assert len(CORE_READ) == 7
    assert set(CORE_WRITE) == EXPECTED_CORE_WRITE
    assert set(CORE_WRITE) <= CATALOGUE.write_names
    assert not set(CORE_READ) & CATALOGUE.write_names
    assert "gno_job_status" not in set(CORE_READ) | set(CORE_WRITE)


VECTOR_TOOLS = {
    "gno_vsearch",
    "gno_similar",
    "gno_embed",
    "gno_index",
    "gno_clear_collection_embeddings",
}
"""The tools semantic retrieval brings; every other catalogued tool is implemented."""


def test_definitions_cover_the_implemented_tools_in_catalogue_order() -> None:
    assert set(IMPLEMENTED) == set(TOOL_ORDER)  # all 53, the vector tools included
    assert set(IMPLEMENTED) >= VECTOR_TOOLS
    positions = [TOOL_ORDER.index(name) for name in IMPLEMENTED]
    assert positions == sorted(positions)
    for name, definition in CATALOGUE.definitions.items():
        assert definition.name == name
        assert definition.write == (name in CATALOGUE.write_names)


# ---------------------------------------------------------------------------
# Profiles and the write gate
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["full", "core"])
def test_parse_profile_accepts_the_two_profiles(value: str) -> None:
    assert parse_profile(value) == value


@pytest.mark.parametrize("value", ["", "Core", "FULL", "minimal", " core", "core "])
def test_parse_profile_rejects_anything_else_with_validation(value: str) -> None:
    with pytest.raises(GnoError) as caught:
        parse_profile(value)
    assert caught.value.code == "VALIDATION"
    assert caught.value.message == f"Unknown tool profile: {value} (expected core or full)"


@pytest.mark.parametrize(
    ("profile", "write_enabled", "expected_count"),
    [("full", False, 34), ("full", True, 53), ("core", False, 7), ("core", True, 9)],
)
def test_selection_sizes_over_the_whole_catalogue(
    profile: str, write_enabled: bool, expected_count: int
) -> None:
    names = CATALOGUE.select(profile, write_enabled, among=TOOL_ORDER)
    assert len(names) == expected_count
    assert names == [name for name in TOOL_ORDER if name in names]


def test_core_selection_is_exactly_the_allow_list() -> None:
    assert set(CATALOGUE.select("core", False, among=TOOL_ORDER)) == EXPECTED_CORE_READ
    assert set(CATALOGUE.select("core", True, among=TOOL_ORDER)) == (
        EXPECTED_CORE_READ | EXPECTED_CORE_WRITE
    )


def test_full_without_writes_is_every_read_tool_in_order() -> None:
    assert CATALOGUE.select("full", False, among=TOOL_ORDER) == list(CATALOGUE.read_names)


def test_selection_over_the_implemented_tools_for_all_four_combinations() -> None:
    reads = CATALOGUE.select("full", False, among=IMPLEMENTED)
    assert reads == [name for name in CATALOGUE.read_names if name in IMPLEMENTED]
    jobs = ["gno_job_status", "gno_list_jobs"]
    assert reads[-2:] == jobs
    writes = [name for name in TOOL_ORDER if name in CATALOGUE.write_names and name in IMPLEMENTED]
    # With writes on, the write tools come between the other read tools and the job tools.
    assert CATALOGUE.select("full", True, among=IMPLEMENTED) == [*reads[:-2], *writes, *jobs]
    assert CATALOGUE.select("core", False, among=IMPLEMENTED) == [
        "gno_context",
        "gno_search",
        "gno_query",
        "gno_get",
        "gno_multi_get",
        "gno_changes",
        "gno_recall",
    ]
    assert CATALOGUE.select("core", True, among=IMPLEMENTED) == [
        *CATALOGUE.select("core", False, among=IMPLEMENTED),
        "gno_capture",
        "gno_remember",
    ]


def test_selection_ignores_names_outside_the_catalogue() -> None:
    assert CATALOGUE.select(
        "full", True, among=["gno_search", "not_a_tool", "gno_sessions_import"]
    ) == ["gno_search"]


def test_selection_with_an_unknown_profile_fails_before_choosing() -> None:
    with pytest.raises(GnoError) as caught:
        CATALOGUE.select("fast", True, among=TOOL_ORDER)
    assert caught.value.code == "VALIDATION"


@settings(max_examples=200, deadline=None)
@given(
    implemented=st.sets(st.sampled_from(TOOL_ORDER)),
    profile=st.sampled_from(["full", "core"]),
    write_enabled=st.booleans(),
)
def test_profile_only_ever_narrows_the_write_gate(
    implemented: set[str], profile: str, write_enabled: bool
) -> None:
    names = CATALOGUE.select(profile, write_enabled, among=implemented)
    assert set(names) <= implemented
    assert names == [name for name in TOOL_ORDER if name in names]
    assert set(names) <= set(CATALOGUE.select("full", write_enabled, among=implemented))
    if not write_enabled:
        assert not set(names) & CATALOGUE.write_names
    if profile == "core":
        assert set(names) <= EXPECTED_CORE_READ | EXPECTED_CORE_WRITE


def test_missing_tools_lists_unimplemented_targets_in_order() -> None:
    assert CATALOGUE.missing(among=TOOL_ORDER) == []
    missing = CATALOGUE.missing(among=IMPLEMENTED)
    assert len(missing) == 53 - len(IMPLEMENTED)
    assert missing == [name for name in TOOL_ORDER if name not in IMPLEMENTED]
    assert "gno_search" not in missing
    assert missing == [name for name in TOOL_ORDER if name in missing]
    assert CATALOGUE.missing(among=[]) == list(TOOL_ORDER)


# ---------------------------------------------------------------------------
# Descriptions
# ---------------------------------------------------------------------------


def test_exactly_the_core_tools_change_description_between_profiles() -> None:
    differing = {
        name
        for name in TOOL_ORDER
        if CATALOGUE.description(name, "full") != CATALOGUE.description(name, "core")
    }
    assert differing == EXPECTED_CORE_READ | EXPECTED_CORE_WRITE


def test_specs_differ_between_profiles_only_in_the_core_descriptions() -> None:
    for name, definition in CATALOGUE.definitions.items():
        full, core = definition.spec("full"), definition.spec("core")
        assert isinstance(full, ToolSpec)
        assert full.name == core.name == name
        assert full.input_schema == core.input_schema
        assert full.output_schema == core.output_schema
        assert full.annotations == core.annotations
        assert full.input_type is core.input_type
        assert (full.description != core.description) == (
            name in EXPECTED_CORE_READ | EXPECTED_CORE_WRITE
        )
        assert full.description == CATALOGUE.description(name, "full")
        assert core.description == CATALOGUE.description(name, "core")


def test_spec_rejects_an_unknown_profile() -> None:
    with pytest.raises(GnoError):
        CATALOGUE.definitions["gno_search"].spec("everything")


def test_every_description_is_plain_nonempty_prose() -> None:
    for row in CATALOGUE.texts.values():
        for text in filter(None, (row.full, row.core)):
            assert 20 <= len(text) <= 700, row.name
            assert text == text.strip()
            assert text.endswith((".", ")")), row.name


NEGATIONS = re.compile(r"\b(not|no|never|none|nothing|without|cannot|can't|don't|doesn't)\b", re.I)
PROMOTIONAL = re.compile(
    r"\b(powerful|best|seamless(ly)?|blazing|effortless(ly)?|easy|easily|simply|smart|"
    r"robust|instant(ly)?|recommended|great|lightning|magic(al)?|superior|ultimate)\b",
    re.I,
)


@pytest.mark.parametrize("name", sorted(EXPECTED_CORE_READ | EXPECTED_CORE_WRITE))
def test_core_descriptions_follow_the_copy_rules(name: str) -> None:
    text = CATALOGUE.description(name, "core")
    assert text.startswith("Call "), "opens with when to call the tool"
    assert not NEGATIONS.search(text), NEGATIONS.search(text)
    assert not PROMOTIONAL.search(text), PROMOTIONAL.search(text)
    assert "Returns" in text, "says what comes back"


def test_core_descriptions_name_the_bound_each_caller_must_respect() -> None:
    assert "fromLine" in CATALOGUE.description("gno_get", "core")
    assert "line anchor" in CATALOGUE.description("gno_get", "core")
    assert "maxBytes" in CATALOGUE.description("gno_multi_get", "core")
    recall = CATALOGUE.description("gno_recall", "core")
    assert "8 facts" in recall
    assert "512 tokens" in recall
    assert "embedding step" in CATALOGUE.description("gno_capture", "core")
    assert "budgetTokens" in CATALOGUE.description("gno_context", "core")


def test_query_descriptions_say_what_runs_and_when_it_degrades() -> None:
    for profile in ("full", "core"):
        text = CATALOGUE.description("gno_query", profile)
        assert "hybrid" in text and "bm25_only" in text
        assert "model-free" not in text


def test_description_for_unknown_tool_is_an_error() -> None:
    with pytest.raises(GnoError) as caught:
        CATALOGUE.description("gno_teleport", "full")
    assert caught.value.code == "NOT_FOUND"


# ---------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------


def test_memory_and_peek_annotations_match_the_contract() -> None:
    specs = {name: d.spec("full") for name, d in CATALOGUE.definitions.items()}
    recall = specs["gno_recall"].annotations
    assert recall["readOnlyHint"] is True
    assert recall["idempotentHint"] is True
    assert recall["destructiveHint"] is False
    remember = specs["gno_remember"].annotations
    assert remember["readOnlyHint"] is False
    assert remember["destructiveHint"] is False
    assert remember["idempotentHint"] is False
    assert specs["gno_peek"].annotations["readOnlyHint"] is True


def test_no_read_tool_claims_to_write_and_no_write_tool_claims_read_only() -> None:
    for name, definition in CATALOGUE.definitions.items():
        hint = definition.annotations.get("readOnlyHint")
        if hint is not None:
            assert hint is (not definition.write), name


def test_specs_hand_out_independent_copies() -> None:
    first = CATALOGUE.definitions["gno_recall"].spec("full")
    assert first.output_schema is not None
    assert isinstance(first.output_schema, dict)
    assert isinstance(first.input_schema, dict)
    first.output_schema["required"].append("tampered")  # type: ignore[attr-defined]
    first.input_schema["properties"].clear()  # type: ignore[attr-defined]
    second = CATALOGUE.definitions["gno_recall"].spec("full")
    assert second.output_schema is not None
    assert "tampered" not in second.output_schema["required"]
    assert second.input_schema["properties"]


def test_specs_are_json_encodable_for_the_wire() -> None:
    for definition in CATALOGUE.definitions.values():
        spec = definition.spec("core")
        msgspec.json.encode(
            {
                "inputSchema": spec.input_schema,
                "outputSchema": spec.output_schema,
                "annotations": spec.annotations,
            }
        )


# ---------------------------------------------------------------------------
# Input schemas
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_input_schema_is_a_flat_stamped_2020_12_object(name: str) -> None:
    schema = CATALOGUE.definitions[name].spec("full").input_schema
    assert schema["$schema"] == JSON_SCHEMA_DIALECT
    assert schema["type"] == "object"
    assert isinstance(schema["properties"], dict)
    keys = {key for key, _ in _walk(schema)}
    assert "$ref" not in keys
    assert "$defs" not in keys
    assert "title" not in keys
    Draft202012Validator.check_schema(schema)
    for prop in schema["properties"].values():
        branches = prop.get("anyOf", [prop])  # GNO admits null in a few places
        assert all("type" in branch for branch in branches), prop


def test_input_schemas_are_closed_exactly_where_gnos_are() -> None:
    """Unknown fields are refused where GNO's observed 1.35 listing closes the object.

    GNO's rename and move publish an empty schema (its SDK cannot publish their
    oneOf), while its spec gives both branches as closed objects: those two are
    closed here too.
    """
    required(OBSERVED_135, "GNO 1.35's observed tools/list")
    observed = json.loads(OBSERVED_135.read_text("utf-8"))["result"]["tools"]
    closed_by_gno = {
        tool["name"]
        for tool in observed
        if tool["inputSchema"].get("additionalProperties") is False
    }
    closed_by_spec = {"gno_rename_note", "gno_move_note"}
    for name, definition in CATALOGUE.definitions.items():
        schema = definition.spec("full").input_schema
        if name in closed_by_gno | closed_by_spec:
            assert schema["additionalProperties"] is False, name
        else:
            assert "additionalProperties" not in schema, name


WIRE_LISTING = Path(__file__).resolve().parents[1] / "golden" / "tools-list-full-write.json"
"""``tools/list`` with writes on, exactly as served (tests/server/test_mcp_golden.py pins it)."""
ADDED_BOUNDS = frozenset({"maxItems", "maxLength", "minLength", "default"})
"""What we may add to GNO's input schema: tighter bounds on untrusted input and defaults."""
PUBLISHED_BY_SPEC = frozenset({"gno_rename_note", "gno_move_note"})
"""GNO publishes an empty input schema for these; its spec's schema is served instead."""


def _normalised(node: Any) -> Any:
    """A schema reduced to what a validator enforces, with equivalent spellings made equal.

    Prose goes; a one-value ``enum`` is a ``const``; an integer's
    ``exclusiveMinimum: n`` is ``minimum: n + 1``; ``additionalProperties: {}``
    and ``propertyNames: {type: string}`` constrain nothing in JSON.
    """
    if isinstance(node, list):
        return [_normalised(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {
        key: _normalised(value)
        for key, value in node.items()
        if key not in ("description", "title", "$schema")
    }
    if isinstance(found.get("enum"), list) and len(found["enum"]) == 1:
        found["const"] = found.pop("enum")[0]
    if found.get("type") == "integer" and "exclusiveMinimum" in found:
        found["minimum"] = found.pop("exclusiveMinimum") + 1
    if found.get("additionalProperties") == {}:
        del found["additionalProperties"]
    if found.get("propertyNames") == {"type": "string"}:
        del found["propertyNames"]
    return found


def _schema_differences(ours: Any, gno: Any, path: str) -> Iterator[str]:
    """Where ``ours`` would accept or refuse differently from ``gno`` (bounds we add aside)."""
    if isinstance(ours, dict) and isinstance(gno, dict):
        for key in gno.keys() - ours.keys():
            yield f"{path}/{key}: GNO has {gno[key]!r}, we have none"
        for key in ours.keys() - gno.keys() - ADDED_BOUNDS:
            yield f"{path}/{key}: we have {ours[key]!r}, GNO has none"
        for key in ours.keys() & gno.keys():
            if key in ("required", "enum"):
                if sorted(map(json.dumps, ours[key])) != sorted(map(json.dumps, gno[key])):
                    yield f"{path}/{key}: {ours[key]!r} != GNO {gno[key]!r}"
            else:
                yield from _schema_differences(ours[key], gno[key], f"{path}/{key}")
    elif isinstance(ours, list) and isinstance(gno, list) and len(ours) == len(gno):
        for index, (mine, theirs) in enumerate(zip(ours, gno, strict=True)):
            yield from _schema_differences(mine, theirs, f"{path}/{index}")
    elif ours != gno:
        yield f"{path}: {ours!r} != GNO {gno!r}"


def test_the_served_listing_keeps_gnos_observed_names_order_and_input_schemas() -> None:
    """Every 1.35 tool, as served with writes on, takes what GNO's own listing takes.

    Names and order are GNO 1.35's with 1.42's three tools in place; each input
    schema enforces what GNO's does, apart from tighter bounds we add.
    """
    required(OBSERVED_135, "GNO 1.35's observed tools/list")
    observed = json.loads(OBSERVED_135.read_text("utf-8"))["result"]["tools"]
    served = {tool["name"]: tool for tool in json.loads(WIRE_LISTING.read_text("utf-8"))}
    assert list(served) == list(TOOL_ORDER)
    assert [name for name in served if name not in ADDED_IN_142] == [t["name"] for t in observed]
    differences = [
        f"{tool['name']}{difference}"
        for tool in observed
        if tool["name"] not in PUBLISHED_BY_SPEC
        for difference in _schema_differences(
            _normalised(served[tool["name"]]["inputSchema"]), _normalised(tool["inputSchema"]), ""
        )
    ]
    assert differences == []


def test_required_fields_match_the_spec() -> None:
    required = {
        name: set(d.spec("full").input_schema.get("required", ()))
        for name, d in CATALOGUE.definitions.items()
    }
    assert required["gno_search"] == {"query"}
    assert required["gno_query"] == {"query"}
    assert required["gno_get"] == {"ref"}
    assert required["gno_multi_get"] == set()
    assert required["gno_status"] == set()
    assert required["gno_peek"] == set()
    assert required["gno_changes"] == set()
    assert required["gno_diff"] == {"ref"}
    assert required["gno_query_diagnose"] == {"query", "target"}
    assert required["gno_egress_policy_set"] == {"collection", "policy"}
    assert required["gno_recall"] == {"query", "collection", "scopes"}
    assert required["gno_remember"] == {"text", "collection", "scopes"}
    assert required["gno_capture"] == {"collection"}


def test_nested_structs_are_inlined_with_their_field_description() -> None:
    capture = input_schema_for(CaptureInput)
    source = capture["properties"]["source"]
    assert source["type"] == "object"
    assert source["description"].startswith("Provenance")
    assert source["properties"]["kind"]["type"] == "string"
    assert "web" in source["properties"]["kind"]["enum"]
    query = input_schema_for(QueryInput)
    modes = query["properties"]["queryModes"]["items"]
    assert modes["required"] == ["mode", "text"]
    assert set(modes["properties"]["mode"]["enum"]) == {"term", "intent", "hyde"}


def test_advertised_bounds_match_gno() -> None:
    search = input_schema_for(SearchInput)["properties"]
    assert search["limit"] | {"description": None} == {
        "description": None,
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 5,
    }
    assert search["projectHints"]["maxItems"] == 16
    recall = input_schema_for(RecallInput)["properties"]
    assert (recall["scopes"]["minItems"], recall["scopes"]["maxItems"]) == (1, 8)
    assert (recall["maxFacts"]["minimum"], recall["maxFacts"]["maximum"]) == (1, 64)
    assert (recall["maxTokens"]["minimum"], recall["maxTokens"]["maximum"]) == (1, 8192)
    remember = input_schema_for(RememberInput)["properties"]
    assert set(remember["decision"]["enum"]) == {"add", "supersede"}
    changes = input_schema_for(ChangesInput)["properties"]
    assert changes["limit"]["default"] == 100
    assert changes["limit"]["maximum"] == 1000
    assert changes["since"]["maxLength"] == 512
    get = input_schema_for(GetInput)["properties"]
    assert get["traceId"]["maxLength"] == 128
    assert get["lineNumbers"]["default"] is True
    multi = input_schema_for(MultiGetInput)["properties"]
    assert multi["maxBytes"]["default"] == 10_240
    capture = input_schema_for(CaptureInput)["properties"]
    assert capture["content"]["maxLength"] == 1_048_576
    assert len(capture["presetId"]["enum"]) == 10


class _TreeNode(msgspec.Struct, kw_only=True):
    child: _TreeNode | None = None


def test_a_recursive_input_type_is_reported_instead_of_looping() -> None:
    with pytest.raises(ValueError, match="recursive"):
        input_schema_for(_TreeNode)


# ---------------------------------------------------------------------------
# Input Structs enforce what the schemas advertise
# ---------------------------------------------------------------------------


def _convert_error(payload: dict[str, Any], target: type[msgspec.Struct]) -> str:
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.convert(payload, target)
    return str(caught.value)


@pytest.mark.parametrize(
    ("target", "payload", "field"),
    [
        (SearchInput, {"query": "x", "limit": 0}, "limit"),
        (SearchInput, {"query": "x", "limit": 101}, "limit"),
        (SearchInput, {"query": ""}, "query"),
        (SearchInput, {"query": "x", "minScore": 1.5}, "minScore"),
        (SearchInput, {"query": "x", "projectHints": ["h"] * 17}, "projectHints"),
        (QueryInput, {"query": "x", "candidateLimit": 0}, "candidateLimit"),
        (QueryInput, {"query": "x", "queryModes": [{"mode": "hyd", "text": "a"}]}, "mode"),
        (QueryInput, {"query": "x", "queryModes": [{"mode": "term", "text": ""}]}, "text"),
        (GetInput, {"ref": "#abc123", "fromLine": 0}, "fromLine"),
        (GetInput, {"ref": "#abc123", "traceId": "t" * 129}, "traceId"),
        (GetInput, {"ref": "#abc123", "lineCount": 2**53}, "lineCount"),
        (MultiGetInput, {"refs": []}, "refs"),
        (MultiGetInput, {"pattern": "*", "maxBytes": 0}, "maxBytes"),
        (ChangesInput, {"limit": 1001}, "limit"),
        (ChangesInput, {"since": ""}, "since"),
        (RecallInput, {"query": "q", "collection": "m", "scopes": []}, "scopes"),
        (RecallInput, {"query": "q", "collection": "m", "scopes": ["s"] * 9}, "scopes"),
        (
            RecallInput,
            {"query": "q", "collection": "m", "scopes": ["s"], "maxFacts": 65},
            "maxFacts",
        ),
        (
            RecallInput,
            {"query": "q", "collection": "m", "scopes": ["s"], "maxTokens": 0},
            "maxTokens",
        ),
        (
            RememberInput,
            {"text": "t", "collection": "m", "scopes": ["s"], "decision": "replace"},
            "decision",
        ),
        (CaptureInput, {"collection": ""}, "collection"),
        (
            CaptureInput,
            {"collection": "c", "collisionPolicy": "overwrite"},
            "collisionPolicy",
        ),
        (CaptureInput, {"collection": "c", "source": {"kind": "fax"}}, "kind"),
    ],
)
def test_out_of_bounds_arguments_are_rejected_naming_the_field(
    target: type[msgspec.Struct], payload: dict[str, Any], field: str
) -> None:
    message = _convert_error(payload, target)
    # msgspec names the failing location as a JSON path: `$.limit`, `$.queryModes[0].mode`.
    assert message.endswith(f".{field}`"), message


def test_limit_zero_error_names_limit() -> None:
    message = _convert_error({"query": "x", "limit": 0}, SearchInput)
    assert "$.limit" in message
    assert ">= 1" in message


def test_missing_required_field_is_named() -> None:
    assert "query" in _convert_error({}, SearchInput)
    assert "scopes" in _convert_error({"query": "q", "collection": "m"}, RecallInput)


def test_explicit_null_for_an_optional_field_is_rejected() -> None:
    assert "collection" in _convert_error({"query": "x", "collection": None}, SearchInput)


def test_type_confusion_is_rejected() -> None:
    assert "limit" in _convert_error({"query": "x", "limit": "5"}, SearchInput)
    assert "limit" in _convert_error({"query": "x", "limit": True}, SearchInput)
    assert "lineNumbers" in _convert_error({"ref": "r", "lineNumbers": 1}, GetInput)


def test_defaults_are_applied_and_omitted_fields_stay_unset() -> None:
    search = msgspec.convert({"query": "x"}, SearchInput)
    assert search.limit == 5
    assert search.collection is msgspec.UNSET
    query = msgspec.convert({"query": "x"}, QueryInput)
    assert (query.fast, query.thorough) == (False, False)
    assert query.graph is msgspec.UNSET
    get = msgspec.convert({"ref": "#abc123"}, GetInput)
    assert get.lineNumbers is True
    assert get.fromLine is msgspec.UNSET
    multi = msgspec.convert({"refs": ["#abc123"]}, MultiGetInput)
    assert multi.maxBytes == 10_240
    assert msgspec.convert({}, ChangesInput).limit == 100
    recall = msgspec.convert(
        {"query": "q", "collection": "memory", "scopes": ["project:gno"]}, RecallInput
    )
    assert (recall.maxFacts, recall.maxTokens) == (8, 512)
    assert msgspec.convert({"collection": "c"}, CaptureInput).overwrite is False


def test_unknown_arguments_are_ignored_like_gno() -> None:
    status = msgspec.convert({"verbose": True}, StatusInput)
    assert status == StatusInput()
    search = msgspec.convert({"query": "x", "extra": [1, 2]}, SearchInput)
    assert search.query == "x"


def test_remember_accepts_a_receipt_exactly_as_recall_returned_it() -> None:
    receipt = _valid_recall()["receipt"]
    remember = msgspec.convert(
        {
            "text": "Finn prefers trams.",
            "collection": "memory",
            "scopes": ["people"],
            "decision": "supersede",
            "predecessorUri": "gno://memory/facts/2026-01-01/mem-0123456789abcdef.md",
            "predecessorHash": "a" * 64,
            "receipt": receipt,
            "derivedFrom": ["conversation"],
        },
        RememberInput,
    )
    assert isinstance(remember.receipt, MemoryReceipt)
    assert remember.receipt.spanHashes == receipt["spanHashes"]
    partial = msgspec.convert(
        {"text": "t", "collection": "m", "scopes": ["s"], "receipt": {}}, RememberInput
    )
    assert isinstance(partial.receipt, MemoryReceipt)
    assert partial.receipt.spanHashes == []


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.floats(min_value=-2, max_value=2, allow_nan=False).filter(lambda x: x != int(x)),
    st.text(max_size=4),
    st.lists(st.integers(min_value=0, max_value=2), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _bounded(schema: dict[str, Any]) -> tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]:
    """(values inside the advertised bounds, values one step outside them)."""
    kind = schema.get("type")
    if "enum" in schema:
        return st.sampled_from(schema["enum"]), st.just("bogus")
    if kind == "string":
        low = schema.get("minLength", 0)
        high = min(schema.get("maxLength", 6), 6)
        valid = st.integers(min_value=low, max_value=max(low, high)).map(lambda n: "x" * n)
        outside = [n for n in (low - 1, schema.get("maxLength", 10**9) + 1) if 0 <= n < 2000]
        if not outside:
            return valid, st.just(0)
        return valid, st.sampled_from(outside).map(lambda n: "x" * n)
    if kind == "integer":
        low = schema.get("minimum", -2)
        high = schema.get("maximum", 2**53 + 1)
        return st.sampled_from(sorted({low, min(low + 1, high), high})), st.sampled_from(
            [low - 1, high + 1]
        )
    if kind == "number":
        return st.sampled_from([0, 0.5, 1]), st.sampled_from([-0.25, 1.25])
    if kind == "boolean":
        return st.booleans(), st.sampled_from([0, 1, "true"])
    if kind == "array":
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", 3)
        item = _mostly_valid(schema.get("items", {}))
        edge = st.lists(item, min_size=high + 1, max_size=high + 1)
        return st.lists(item, min_size=low, max_size=min(high, 3)), (
            edge | st.just([]) if low else edge
        )
    if kind == "object":
        return _object_for(schema), st.just([])
    return _JUNK, _JUNK


def _mostly_valid(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    valid, edge = _bounded(schema)
    return st.integers(min_value=0, max_value=15).flatmap(
        lambda roll: _JUNK if roll == 0 else edge if roll == 1 else valid
    )


def _object_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {key: _mostly_valid(sub) for key, sub in properties.items() if key in required},
        optional={
            key: _mostly_valid(sub) for key, sub in properties.items() if key not in required
        },
    )


_SCHEMAS = {name: input_schema_for(d.input_type) for name, d in CATALOGUE.definitions.items()}


def _minimal_valid(schema: dict[str, Any]) -> Any:
    """The smallest value the schema accepts, built from its advertised bounds."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "x" * max(schema.get("minLength", 0), 1)
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 0)
    if kind == "boolean":
        return True
    if kind == "array":
        return [_minimal_valid(schema.get("items", {}))] * schema.get("minItems", 0)
    if kind == "object":
        properties = schema.get("properties", {})
        return {key: _minimal_valid(properties[key]) for key in schema.get("required", ())}
    raise AssertionError(f"no sample for {schema}")


def _boundary_values(schema: dict[str, Any]) -> Iterator[Any]:
    """Values on and just past every bound the schema advertises, plus type mismatches."""
    yield None
    kind = schema.get("type")
    if "enum" in schema:
        yield from schema["enum"]
        yield "bogus"
        return
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        lengths = {0, 1, low, low - 1}
        if high is not None:
            lengths |= {high, high + 1}
        yield from ("x" * n for n in sorted(lengths) if n >= 0)
        yield 7
    elif kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        for bound in (low, high):
            if bound is not None:
                yield from (bound - 1, bound, bound + 1)
        yield 0.5
        yield "3"
        yield True
    elif kind == "boolean":
        yield from (True, False, 0, "true")
    elif kind == "array":
        items = schema.get("items", {})
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        counts = {0, 1, low, low - 1}
        if high is not None:
            counts |= {high, high + 1}
        for count in sorted(counts):
            if count >= 0:
                yield [_minimal_valid(items)] * count
        for value in _boundary_values(items):
            yield [value]
        yield "x"
    elif kind == "object":
        base = _minimal_valid(schema)
        yield base
        for key in schema.get("required", ()):
            yield {k: v for k, v in base.items() if k != key}
        for key, sub in schema.get("properties", {}).items():
            for value in _boundary_values(sub):
                yield {**base, key: value}
        yield {**base, "unknownKey": 1}
        yield []


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_struct_and_advertised_schema_agree_on_every_boundary(name: str) -> None:
    schema = _SCHEMAS[name]
    validator = Draft202012Validator(schema)
    input_type = CATALOGUE.definitions[name].input_type
    checked = 0
    for arguments in _boundary_values(schema):
        if not isinstance(arguments, dict):
            continue
        try:
            msgspec.convert(arguments, input_type)
            struct_ok = True
        except msgspec.ValidationError:
            struct_ok = False
        assert struct_ok == validator.is_valid(arguments), arguments
        checked += 1
    assert checked > len(schema["properties"])


@pytest.mark.parametrize("name", IMPLEMENTED)
@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_struct_and_advertised_schema_agree_on_arbitrary_arguments(
    name: str, data: st.DataObject
) -> None:
    definition = CATALOGUE.definitions[name]
    schema = _SCHEMAS[name]
    arguments = data.draw(_object_for(schema))
    # Push one argument (or a missing / unknown one) to a bound or to junk.
    properties = schema["properties"]
    target = data.draw(st.sampled_from([*sorted(properties), "unknownKey", None]))
    if target in properties:
        valid, edge = _bounded(properties[target])
        arguments[target] = data.draw(st.one_of(edge, _JUNK, valid))
    elif target == "unknownKey":
        arguments[target] = data.draw(_JUNK)
    elif schema.get("required"):
        arguments.pop(data.draw(st.sampled_from(schema["required"])), None)
    schema_ok = Draft202012Validator(schema).is_valid(arguments)
    try:
        msgspec.convert(arguments, definition.input_type)
        struct_ok = True
    except msgspec.ValidationError:
        struct_ok = False
    assert struct_ok == schema_ok, (arguments, schema_ok)


# ---------------------------------------------------------------------------
# Output schemas
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("schema_name", OUTPUT_SCHEMA_NAMES)
def test_output_schema_is_a_valid_stamped_2020_12_schema(schema_name: str) -> None:
    schema = output_schema(schema_name)
    assert schema["$schema"] == JSON_SCHEMA_DIALECT
    assert schema["type"] == "object"
    assert "$id" not in schema  # shared ids collide in clients that cache compiled schemas
    Draft202012Validator.check_schema(schema)
    for key, value in _walk(schema):
        if key == "$ref":
            assert value.startswith("#/$defs/"), value


def test_every_implemented_tool_has_an_output_schema() -> None:
    for definition in CATALOGUE.definitions.values():
        assert definition.output_schema is not None
    assert (
        CATALOGUE.definitions["gno_search"].output_schema
        == CATALOGUE.definitions["gno_query"].output_schema
    )


def test_unknown_output_schema_name_is_an_error() -> None:
    with pytest.raises(KeyError):
        output_schema("search-result")


def _sha(char: str) -> str:
    return char * 64


def _lineage() -> dict[str, Any]:
    return {
        "effectivePolicy": "local_only",
        "digest": _sha("c"),
        "sources": [{"collection": "memory", "policy": "local_only", "source": "config_default"}],
    }


def _valid_recall() -> dict[str, Any]:
    return {
        "facts": [
            {
                "uri": "gno://memory/facts/2026-01-01/mem-0123456789abcdef.md",
                "docid": "#a1b2c3d4",
                "recordId": "mem-0123456789abcdef",
                "text": "Finn prefers trams over buses.",
                "scopes": ["people", "project:gno"],
                "caller": "claude-code",
                "session": "5c7f9a2e-0000-4000-8000-000000000001",
                "createdAt": "2026-01-01T09:30:00.000Z",
                "contentHash": _sha("a"),
                "supersedes": [],
                "score": 0.0328,
                "spanHash": _sha("a"),
                "egressLineage": _lineage(),
                "source": "told in standup",
            }
        ],
        "receipt": {
            "caller": "claude-code",
            "session": "5c7f9a2e-0000-4000-8000-000000000001",
            "issuedAt": "2026-01-02T10:00:00.000Z",
            "memoryIds": ["#a1b2c3d4"],
            "spanHashes": [_sha("a")],
            "digest": _sha("d"),
        },
        "budget": {"maxFacts": 8, "maxTokens": 512, "usedTokens": 9, "omitted": 0},
        "retrieval": {"mode": "lexical", "semanticUnavailable": "no embedding model available"},
        "egressLineage": _lineage(),
    }


def _empty_recall() -> dict[str, Any]:
    return {
        "facts": [],
        "receipt": {
            "caller": "mcp",
            "session": "stdio-instance",
            "issuedAt": "2026-01-02T10:00:00Z",
            "memoryIds": [],
            "spanHashes": [],
            "digest": _sha("e"),
        },
        "budget": {"maxFacts": 8, "maxTokens": 512, "usedTokens": 0, "omitted": 0},
        "retrieval": {"mode": "lexical"},
        "hint": 'No memories in scope yet. Store one with: gno remember "<fact>" --scope s',
    }


def _mutated(mutate: Any) -> dict[str, Any]:
    document = copy.deepcopy(_valid_recall())
    mutate(document)
    return document


INVALID_RECALLS = {
    "missing receipt": _mutated(lambda d: d.pop("receipt")),
    "unknown top-level key": _mutated(lambda d: d.update(extra=1)),
    "vector retrieval mode": _mutated(lambda d: d["retrieval"].update(mode="vector")),
    "uppercase content hash": _mutated(lambda d: d["facts"][0].update(contentHash="A" * 64)),
    "record id without mem- prefix": _mutated(lambda d: d["facts"][0].update(recordId="x-1")),
    "fact without scopes": _mutated(lambda d: d["facts"][0].update(scopes=[])),
    "nine scopes": _mutated(lambda d: d["facts"][0].update(scopes=[f"s{i}" for i in range(9)])),
    "fact missing spanHash": _mutated(lambda d: d["facts"][0].pop("spanHash")),
    "negative score": _mutated(lambda d: d["facts"][0].update(score=-0.1)),
    "non-gno uri": _mutated(lambda d: d["facts"][0].update(uri="https://example.com/x")),
    "empty lineage sources": _mutated(lambda d: d["egressLineage"].update(sources=[])),
    "bad lineage policy": _mutated(lambda d: d["egressLineage"].update(effectivePolicy="public")),
    "zero fact budget": _mutated(lambda d: d["budget"].update(maxFacts=0)),
    "extra budget key": _mutated(lambda d: d["budget"].update(spent=1)),
    "receipt digest too short": _mutated(lambda d: d["receipt"].update(digest="abc")),
    "uppercase collection in lineage": _mutated(
        lambda d: d["egressLineage"]["sources"][0].update(collection="Memory")
    ),
}


def test_memory_recall_schema_accepts_valid_results() -> None:
    schema = output_schema("memory-recall")
    assert output_schema_errors(schema, _valid_recall()) == []
    assert output_schema_errors(schema, _empty_recall()) == []


@pytest.mark.parametrize("case", sorted(INVALID_RECALLS))
def test_memory_recall_schema_rejects_invalid_results(case: str) -> None:
    assert output_schema_errors(output_schema("memory-recall"), INVALID_RECALLS[case])


def test_memory_recall_schema_agrees_with_the_seed_contract() -> None:
    seed_path = SEED / "memory-recall.schema.json"
    required(seed_path, "seed contract")
    seed = Draft7Validator(json.loads(seed_path.read_text(encoding="utf-8")))
    ours = Draft202012Validator(output_schema("memory-recall"))
    samples = [_valid_recall(), _empty_recall(), *INVALID_RECALLS.values()]
    for sample in samples:
        assert ours.is_valid(sample) == seed.is_valid(sample), sample
    assert not seed.is_valid(INVALID_RECALLS["missing receipt"])


def _fact(**extra: Any) -> dict[str, Any]:
    fact = {
        key: value
        for key, value in _valid_recall()["facts"][0].items()
        if key not in {"score", "spanHash", "egressLineage"}
    }
    fact.update(extra)
    return fact


def test_memory_remember_schema_accepts_each_outcome() -> None:
    schema = output_schema("memory-remember")
    matching = {"mode": "lexical", "threshold": 0.5, "semanticUnavailable": "no embed port"}
    outcomes = [
        {"outcome": "existing", "record": _fact(), "matching": matching},
        {
            "outcome": "candidates",
            "candidates": [_fact(similarity=0.6, match="likely")],
            "matching": matching,
        },
        {
            "outcome": "added",
            "record": _fact(),
            "absPath": "/notes/memory/facts/2026-01-01/mem-0123456789abcdef.md",
            "sync": {"status": "completed"},
            "matching": matching,
        },
        {
            "outcome": "superseded",
            "record": _fact(supersedes=["gno://memory/facts/2025-12-01/mem-aaaa.md"]),
            "absPath": "/notes/memory/facts/2026-01-01/mem-0123456789abcdef.md",
            "sync": {"status": "completed"},
            "matching": matching,
        },
    ]
    for outcome in outcomes:
        assert output_schema_errors(schema, outcome) == [], outcome


def test_memory_remember_schema_rejects_broken_outcomes() -> None:
    schema = output_schema("memory-remember")
    matching = {"mode": "lexical", "threshold": 0.5}
    broken = [
        {"outcome": "added", "record": _fact(), "matching": matching},  # no absPath / sync
        {"outcome": "candidates", "matching": matching},
        {"outcome": "candidates", "candidates": [_fact()], "matching": matching},
        {"outcome": "forgotten", "record": _fact(), "matching": matching},
        {"outcome": "existing", "record": _fact(), "matching": {"mode": "fuzzy", "threshold": 1}},
    ]
    for document in broken:
        assert output_schema_errors(schema, document), document


def test_search_results_schema_accepts_both_tools_shapes() -> None:
    schema = output_schema("search-results")
    hit = {
        "docid": "#a1b2c3d4",
        "score": 0.85,
        "uri": "gno://team/doc.md",
        "line": 12,
        "snippet": "...",
        "context": "Workspace guidance",
        "categories": ["meeting", "notes"],
        "source": {
            "absPath": "/p/doc.md",
            "relPath": "doc.md",
            "mime": "text/markdown",
            "ext": ".md",
        },
    }
    bm25 = {"results": [hit], "meta": {"query": "q", "mode": "bm25", "totalResults": 1}}
    hybrid = {
        "results": [hit],
        "meta": {
            "query": "q",
            "mode": "bm25_only",
            "expanded": False,
            "reranked": False,
            "vectorsUsed": False,
            "totalResults": 1,
        },
    }
    assert output_schema_errors(schema, bm25) == []
    assert output_schema_errors(schema, hybrid) == []
    assert output_schema_errors(schema, {"results": [], "meta": bm25["meta"]}) == []
    assert output_schema_errors(schema, {"results": [hit | {"score": 1.5}], "meta": bm25["meta"]})
    assert output_schema_errors(
        schema, {"results": [], "meta": {"query": "q", "mode": "fuzzy", "totalResults": 0}}
    )


def test_get_and_tags_schemas_accept_gno_examples() -> None:
    get = {
        "docid": "#a1b2c3d4",
        "uri": "gno://team/doc.md",
        "title": "Document Title",
        "content": "1: # Document Title\n2: \n3: Content here...",
        "totalLines": 150,
        "returnedLines": {"start": 1, "end": 3},
        "source": {"relPath": "doc.md", "mime": "text/markdown", "ext": ".md"},
        "capabilities": {
            "editable": True,
            "tagsEditable": True,
            "tagsWriteback": True,
            "canCreateEditableCopy": False,
            "mode": "editable",
        },
    }
    assert output_schema_errors(output_schema("get"), get) == []
    assert output_schema_errors(output_schema("get"), {k: v for k, v in get.items() if k != "uri"})
    tags = {
        "tags": [{"tag": "work", "count": 10}],
        "meta": {"collection": None, "prefix": None, "totalTags": 1},
    }
    assert output_schema_errors(output_schema("tags-list"), tags) == []
    assert output_schema_errors(output_schema("tags-list"), {"tags": [], "meta": {}})


def test_changes_schema_enforces_the_page_invariants() -> None:
    schema = output_schema("changes")
    snapshot = {
        "relPath": "a.md",
        "docid": "#a1b2c3d4",
        "uri": "gno://notes/a.md",
        "sourceHash": _sha("1"),
        "mirrorHash": None,
        "active": True,
    }
    empty: dict[str, list[str]] = {"added": [], "removed": []}
    change: dict[str, Any] = {
        "id": "gno-change-v1.MQ",
        "kind": "create",
        "collection": "notes",
        "observedAt": "2026-01-01T00:00:00Z",
        "previous": None,
        "current": snapshot,
        "structureDelta": {
            "headings": empty,
            "links": empty,
            "typedEdges": empty,
            "dates": {"added": [], "removed": [], "changed": []},
            "truncated": False,
        },
    }
    page: dict[str, Any] = {
        "nextCursor": None,
        "earliestCursor": "gno-change-v1.MA",
        "latestCursor": "gno-change-v1.MQ",
        "cursorExpired": False,
        "truncated": False,
        "retentionTruncated": False,
    }
    good: dict[str, Any] = {
        "schemaVersion": "1.0",
        "changes": [change],
        "page": page,
        "warnings": [],
    }
    assert output_schema_errors(schema, good) == []
    truncated_without_cursor = copy.deepcopy(good)
    truncated_without_cursor["page"]["truncated"] = True
    assert output_schema_errors(schema, truncated_without_cursor)
    create_with_previous = copy.deepcopy(good)
    create_with_previous["changes"][0]["previous"] = snapshot
    assert output_schema_errors(schema, create_with_previous)


def test_peek_schema_pins_uninitialized_snapshots_to_nulls() -> None:
    schema = output_schema("peek")
    uninitialized = {
        "schemaVersion": "peek@1.0",
        "gnoVersion": "0.1.0",
        "generatedAt": "2026-01-01T00:00:00Z",
        "initialized": False,
        "indexName": "default",
        "counts": None,
        "backlog": None,
        "lastIndexedAt": None,
        "recent": [],
        "serve": {"running": False, "url": None},
    }
    assert output_schema_errors(schema, uninitialized) == []
    assert output_schema_errors(
        schema, uninitialized | {"counts": {"documents": 1, "collections": 1}}
    )
    initialized = uninitialized | {
        "initialized": True,
        "counts": {"documents": 3, "collections": 1},
        "backlog": {"pending": 0, "failed": 0},
        "serve": {"running": True, "url": "http://localhost:3000"},
    }
    assert output_schema_errors(schema, initialized) == []
    assert output_schema_errors(schema, initialized | {"backlog": None})


@pytest.mark.parametrize(("profile", "write"), [("full", True), ("full", False), ("core", True)])
def test_input_schemas_made_in_one_pass_are_those_made_one_by_one(
    profile: str, write: bool
) -> None:
    """A server makes its tool list's schemas together (faster start); nothing may differ."""
    types = [CATALOGUE.definitions[name].input_type for name in CATALOGUE.select(profile, write)]
    together = input_schemas_for(types)
    assert together == [input_schema_for(t) for t in types]
    assert json.dumps(together) == json.dumps([input_schema_for(t) for t in types])  # key order
    together[0]["properties"].clear()  # each is a fresh copy
    assert input_schemas_for(types)[0]["properties"]
