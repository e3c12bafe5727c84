"""``gno_diff``, ``gno_query_diagnose`` and ``gno_egress_policy_set``.

Engine tests run over a small vault written per test and check every answer
against the advertised output schema. The policy tests also read the result
back through :class:`PolicyBook`, the gateway's view of ``index.yml``, so a
change is shown to reach the next HTTP request. The wire tests spawn
``python -m gno_trio mcp`` and speak raw JSON-RPC to it.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.config import load_config
from gno_trio.engine import Confirmation, Engine, SearchRequest, journal
from gno_trio.engine.reads.diff import document_diff
from gno_trio.engine.search.diagnose import diagnose
from gno_trio.engine.store.lease import write_lease
from gno_trio.errors import GnoError
from gno_trio.server.schemas import output_schema, output_schema_errors
from gno_trio.transports.http.guards import PolicyBook
from tests.conftest import error_code
from tests.support.requests import flat_search
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree

VAULT: dict[str, dict[str, str]] = {
    "notes": {
        "zebra.md": "---\ntags: [animals]\n---\n# Zebra\n\nStriped zebra grazing notes.\n",
        "herd.md": "# Herd\n\nA zebra herd crossing the river at dawn.\n",
        "river.md": "# River\n\nThe river floods at dawn. See [[herd]].\n",
    },
    "other": {"misc.md": "# Misc\n\nUnrelated pages about teapots.\n"},
}
SCHEMAS = {
    "diff": output_schema("document-diff"),
    "diagnose": output_schema("query-diagnose"),
    "set": output_schema("collection-egress-policy-set"),
}


def valid(kind: str, result: Mapping[str, Any]) -> dict[str, Any]:
    assert output_schema_errors(SCHEMAS[kind], result) == [], result
    return dict(result)


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    for name, files in VAULT.items():
        engine.collections.add(str(write_tree(tmp_path / "vault" / name, files)), name=name)
    engine.sync()
    return engine


def notes_root(engine: Engine) -> Path:
    return Path(engine.collection("notes").path)


def change_ids(engine: Engine, collection: str) -> dict[tuple[str, str], str]:
    """(kind, relPath) -> change id, for every journal entry of ``collection``."""
    feed = engine.documents.changes(collection=collection)
    return {
        (c["kind"], (c["current"] or c["previous"])["relPath"]): c["id"] for c in feed["changes"]
    }


def diff(engine: Engine, ref: str, change: str | None = None) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("diff", document_diff(conn, engine.stores.journal(conn), ref, change))


def explain(engine: Engine, target: str, query: str, **filters: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("diagnose", diagnose(conn, flat_search(query=query, **filters), target))


def stage(result: Mapping[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in result["stages"] if s["id"] == name)
    return found


# ---------------------------------------------------------------------------
# gno_diff
# ---------------------------------------------------------------------------


def test_diff_shows_the_structure_an_update_added_and_removed(vault: Engine) -> None:
    (notes_root(vault) / "river.md").write_text(
        "---\ndate: 2026-01-05\n---\n# River\n\n## Floods\n\nSee [[zebra]].\n", encoding="utf-8"
    )
    vault.sync()
    update = change_ids(vault, "notes")[("update", "river.md")]
    found = diff(vault, "notes/river.md", update)
    assert found["status"] == "available"
    assert found["change"]["id"] == update
    assert found["change"]["previous"]["sourceHash"] != found["change"]["current"]["sourceHash"]
    delta = found["change"]["structureDelta"]
    assert delta["headings"] == {"added": ["Floods"], "removed": []}
    assert delta["links"] == {"added": ["zebra"], "removed": ["herd"]}
    assert delta["dates"]["added"] == ["2026-01-05"]
    assert found["content"] == {"status": "not_retained", "reason": "journal_metadata_only"}
    assert found["history"] == {"status": "available", "reason": None}
    # Without a change id the latest entry of the document is the one shown.
    assert diff(vault, "gno://notes/river.md")["change"]["id"] == update
    # The earlier create entry stays addressable by its id.
    create = change_ids(vault, "notes")[("create", "river.md")]
    assert diff(vault, found["document"]["id"], create)["change"]["kind"] == "create"
    # The whole source hash as a docid names it too, as it does for gno_get.
    source_hash = hashlib.sha256((notes_root(vault) / "river.md").read_bytes()).hexdigest()
    assert diff(vault, f"#{source_hash}")["change"]["id"] == update


def test_diff_of_a_deleted_document_is_still_readable(vault: Engine) -> None:
    (notes_root(vault) / "herd.md").unlink()
    vault.sync()
    gone = diff(vault, "notes/herd.md")
    assert gone["change"]["kind"] == "inactivate"
    assert gone["document"]["active"] is False


def test_diff_refuses_unknown_foreign_and_malformed_changes(vault: Engine) -> None:
    ids = change_ids(vault, "notes")
    foreign = ids[("create", "zebra.md")]
    latest = vault.documents.changes()["page"]["latestCursor"]
    never = journal.encode_cursor(journal.decode_cursor(latest) + 50)
    assert error_code(lambda: diff(vault, "notes/river.md", foreign)) == "INVALID_INPUT"
    assert error_code(lambda: diff(vault, "notes/river.md", never)) == "NOT_FOUND"
    assert error_code(lambda: diff(vault, "notes/river.md", "change-7")) == "VALIDATION"
    assert error_code(lambda: diff(vault, "notes/nope.md")) == "NOT_FOUND"


def test_diff_without_any_retained_change_says_unavailable(vault: Engine) -> None:
    with vault.connection() as conn:
        conn.execute("DELETE FROM document_changes")
    found = diff(vault, "notes/zebra.md")
    assert found["status"] == "unavailable" and found["change"] is None
    assert found["history"] == {"status": "unavailable", "reason": "no_retained_change"}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(change=st.text(alphabet=string.ascii_letters + string.digits + ".-_=", max_size=40))
def test_diff_answers_any_change_text_with_a_result_or_a_coded_error(
    vault: Engine, change: str
) -> None:
    try:
        diff(vault, "notes/river.md", change or None)
    except GnoError as error:
        assert error.code in {"VALIDATION", "NOT_FOUND", "INVALID_INPUT"}


# ---------------------------------------------------------------------------
# gno_query_diagnose
# ---------------------------------------------------------------------------


def test_diagnose_reports_the_bm25_leg_and_the_fused_rank(vault: Engine) -> None:
    both = explain(vault, "notes/herd.md", "zebra dawn")
    assert both["schemaVersion"] == "1.0"
    assert both["target"]["status"] == "diagnosed"
    assert [s["id"] for s in both["stages"]] == ["bm25", "vector", "fusion", "graph", "rerank"]
    bm25 = stage(both, "bm25")
    assert (bm25["present"], bm25["rank"], bm25["survived"]) == (True, 1, True)
    assert bm25["score"] > 0 and "every term" in bm25["reason"]
    fusion = stage(both, "fusion")
    assert (fusion["rank"], fusion["survived"], fusion["dropReason"]) == (1, True, None)
    assert fusion["sourceCount"] == 1  # one lexical list, no vectors
    assert both["chunk"]["startLine"] == 1 and both["chunk"]["seq"] == 0
    assert both["target"]["chunkCount"] == 1 and both["target"]["mirrorHash"]
    # river.md has "dawn" but no "zebra": it ranks after every full match.
    partial = explain(vault, "notes/river.md", "zebra dawn")
    assert "some of the terms" in stage(partial, "bm25")["reason"]
    assert stage(partial, "fusion")["rank"] == 3


def test_diagnose_names_the_filters_that_exclude_the_target(vault: Engine) -> None:
    found = explain(vault, "notes/herd.md", "zebra", tags_any=["animals"], exclude=["crossing"])
    assert found["target"]["status"] == "filtered_out"
    assert found["target"]["filterReasons"] == ["tagsAny", "exclude"]
    assert found["stages"] == []  # stages are traced only for a diagnosed target
    assert found["chunk"] == {"seq": None, "startLine": None, "endLine": None, "language": None}
    kept = explain(vault, "notes/zebra.md", "zebra", tags_any=["animals"])
    assert kept["target"]["filterReasons"] == []


def test_diagnose_explains_a_target_cut_by_the_limit(vault: Engine) -> None:
    found = explain(vault, "notes/herd.md", "zebra", limit=1)
    assert found["meta"]["totalResults"] == 1
    assert stage(found, "bm25")["dropReason"] == "below_cutoff"
    fusion = stage(found, "fusion")
    assert fusion["rank"] == 2 and fusion["survived"] is False
    assert fusion["dropReason"] == "below_cutoff"


def test_diagnose_marks_model_stages_as_skipped_and_unknown_targets(vault: Engine) -> None:
    found = explain(vault, "other/misc.md", "teapots")
    skipped = [s for s in found["stages"] if s["status"] == "skipped"]
    assert {s["id"] for s in skipped} == {"vector", "graph", "rerank"}
    assert {(s["present"], s["dropReason"]) for s in skipped} == {(False, "skipped")}
    assert found["meta"]["mode"] == "bm25_only" and found["meta"]["vectorsUsed"] is False
    missing = explain(vault, "notes/none.md", "teapots")
    assert missing["target"]["status"] == "not_found" and missing["target"]["uri"] is None
    assert missing["stages"] == [] and missing["target"]["chunkCount"] == 0
    with vault.connection() as conn:
        assert (
            error_code(lambda: diagnose(conn, SearchRequest(query="  "), "other/misc.md"))
            == "INVALID_INPUT"
        )


def test_diagnose_keeps_gnos_contract_for_every_target_status(
    vault: Engine, schema_check: Any
) -> None:
    (notes_root(vault) / "zebra.md").unlink()
    vault.sync()
    for target in ("notes/herd.md", "notes/zebra.md", "notes/none.md"):
        for filters in ({}, {"tags_any": ["animals"]}):
            schema_check("query-diagnose", explain(vault, target, "zebra", **filters))
    assert explain(vault, "notes/zebra.md", "zebra")["target"]["status"] == "inactive"


# ---------------------------------------------------------------------------
# gno_egress_policy_set
# ---------------------------------------------------------------------------


def policy_set(engine: Engine, target: Any, confirmation: Confirmation | None = None) -> Any:
    return valid("set", engine.egress.set_policy("notes", target, confirmation))


def gateway_policy(book: PolicyBook, collection: str) -> str:
    """The policy the HTTP gateway would enforce for ``collection`` right now."""
    return str(book.policies[collection].policy)


def test_relaxing_needs_a_matching_confirmation_and_each_one_works_once(vault: Engine) -> None:
    config_path = vault.location.config_path
    book = PolicyBook(config_path)
    assert gateway_policy(book, "notes") == "local_only"
    assert error_code(lambda: policy_set(vault, "lan")) == "INVALID_INPUT"
    unacked = Confirmation("local_only", 0, acknowledged=False)
    assert error_code(lambda: policy_set(vault, "lan", unacked)) == "INVALID_INPUT"
    stale = Confirmation("local_only", 3, acknowledged=True)
    assert error_code(lambda: policy_set(vault, "lan", stale)) == "CONFLICT"
    elsewhere = Confirmation("local_only", 0, acknowledged=True, collection="other")
    assert error_code(lambda: policy_set(vault, "lan", elsewhere)) == "CONFLICT"
    assert load_config(config_path).collection("notes").egress_policy is None  # type: ignore[union-attr]

    good = Confirmation("local_only", 0, acknowledged=True, target_policy="lan")
    relaxed = policy_set(vault, "lan", good)
    assert relaxed["change"] == "relaxed"
    assert (relaxed["current"]["effectivePolicy"], relaxed["current"]["revision"]) == ("lan", 1)
    assert relaxed["invalidation"]["staleWorkMustRetry"] is True
    saved = load_config(config_path).collection("notes")
    assert saved is not None and (saved.egress_policy, saved.egress_policy_revision) == ("lan", 1)
    # The gateway's view follows the file: the next request sees the new policy.
    book.refresh()
    assert gateway_policy(book, "notes") == "lan" and book.epoch == 1
    # A replayed confirmation is stale now.
    replay = Confirmation("local_only", 0, acknowledged=True)
    assert error_code(lambda: policy_set(vault, "remote", replay)) == "CONFLICT"


def test_tightening_needs_no_confirmation_and_restating_changes_nothing(vault: Engine) -> None:
    policy_set(vault, "remote", Confirmation("local_only", 0, acknowledged=True))
    tightened = policy_set(vault, "lan")
    assert (tightened["change"], tightened["current"]["revision"]) == ("tightened", 2)
    again = policy_set(vault, "lan")
    assert again["change"] == "unchanged" and again["invalidation"] is None
    assert again["current"]["revision"] == 2
    # An implicit local_only made explicit is a source change, not a relaxation.
    made_explicit = valid("set", vault.egress.set_policy("OTHER", "local_only"))
    assert made_explicit["change"] == "source_changed"
    assert made_explicit["current"]["source"] == "explicit"
    assert error_code(lambda: vault.egress.set_policy("nope", "lan")) == "NOT_FOUND"


# ---------------------------------------------------------------------------
# Over MCP (raw JSON-RPC)
# ---------------------------------------------------------------------------


@pytest.fixture
def server_env(vault: Engine) -> dict[str, str]:
    (notes_root(vault) / "river.md").write_text("# River\n\n## Floods\n", encoding="utf-8")
    vault.sync()
    dirs = vault.location.dirs
    return server_environment(dirs, GNO_WRITE_LOCK_WAIT_MS="200")


async def test_mcp_serves_diff_and_diagnose_read_only(
    server_env: dict[str, str], vault: Engine
) -> None:
    update = change_ids(vault, "notes")[("update", "river.md")]
    foreign = change_ids(vault, "notes")[("create", "zebra.md")]
    async with mcp_server(server_env) as pipe:
        listed = await pipe.list_tools()
        assert "gno_egress_policy_set" not in listed
        for name in ("gno_diff", "gno_query_diagnose"):
            assert listed[name]["annotations"]["readOnlyHint"] is True
        shown = valid("diff", await pipe.tool("gno_diff", {"ref": "notes/river.md"}))
        assert shown["change"]["id"] == update
        assert shown["change"]["structureDelta"]["headings"]["added"] == ["Floods"]
        why = valid(
            "diagnose",
            await pipe.tool(
                "gno_query_diagnose",
                {"query": "zebra", "target": "notes/herd.md", "tagsAny": ["animals"]},
            ),
        )
        assert why["target"]["filterReasons"] == ["tagsAny"]
        errors: list[tuple[str, dict[str, Any], str]] = [
            ("gno_diff", {"ref": "notes/river.md", "change": foreign}, "INVALID_INPUT"),
            ("gno_diff", {"ref": "notes/nope.md"}, "NOT_FOUND"),
            ("gno_diff", {"ref": "notes/river.md", "change": ""}, "INVALID_INPUT"),
            ("gno_diff", {}, "INVALID_INPUT"),
            ("gno_query_diagnose", {"query": "zebra"}, "INVALID_INPUT"),
            (
                "gno_query_diagnose",
                {"query": "zebra", "target": "x/y", "limit": 0},
                "INVALID_INPUT",
            ),
        ]
        for name, arguments, code in errors:
            assert await pipe.tool_error(name, arguments) == code, (name, arguments)
        refused = await pipe.call(
            "tools/call",
            {
                "name": "gno_egress_policy_set",
                "arguments": {"collection": "notes", "policy": "lan"},
            },
        )
        assert "error" in refused


async def test_mcp_policy_set_relaxes_with_confirmation_under_the_lease(
    server_env: dict[str, str], vault: Engine
) -> None:
    async with mcp_server(server_env, "--enable-write") as pipe:
        listed = await pipe.list_tools()
        assert listed["gno_egress_policy_set"]["inputSchema"]["additionalProperties"] is False
        # GNO's shape: the target is "policy"; its "targetPolicy" lives in the confirmation.
        arguments = {"collection": "notes", "policy": "lan"}
        assert await pipe.tool_error("gno_egress_policy_set", arguments) == "INVALID_INPUT"
        with write_lease(vault.location.dirs.write_lock):
            assert await pipe.tool_error("gno_egress_policy_set", arguments) == "LOCKED"
        confirmation = {
            "collection": "notes",
            "currentPolicy": "local_only",
            "currentRevision": 0,
            "targetPolicy": "lan",
            "acknowledged": True,
        }
        changed = valid(
            "set",
            await pipe.tool("gno_egress_policy_set", {**arguments, "confirmation": confirmation}),
        )
        assert changed["current"]["revision"] == 1
        state = await pipe.tool("gno_egress_policy_get", {"collection": "notes"})
        assert (state["effectivePolicy"], state["revision"]) == ("lan", 1)
        assert (
            await pipe.tool_error(
                "gno_egress_policy_set",
                {
                    "collection": "notes",
                    "policy": "remote",
                    "confirmation": {**confirmation, "targetPolicy": "remote"},
                },
            )
            == "CONFLICT"  # replayed: revision 0 is used up
        )
        assert (
            await pipe.tool_error(
                "gno_egress_policy_set",
                {
                    "collection": "notes",
                    "policy": "remote",
                    "confirmation": {**confirmation, "currentPolicy": "lan", "currentRevision": 1},
                },
            )
            == "CONFLICT"  # confirmed for lan, asked for remote
        )
        malformed: list[dict[str, Any]] = [
            {**arguments, "extra": 1},
            {"collection": "notes", "policy": "moon"},
            {"collection": "notes", "targetPolicy": "lan"},
            {**arguments, "confirmation": {**confirmation, "currentRevision": -1}},
            {**arguments, "confirmation": {"currentPolicy": "local_only"}},
            {**arguments, "confirmation": {**confirmation, "acknowledged": False}},
            {
                **arguments,
                "confirmation": {k: v for k, v in confirmation.items() if k != "targetPolicy"},
            },
        ]
        for bad in malformed:
            assert await pipe.tool_error("gno_egress_policy_set", bad) == "INVALID_INPUT", bad
    saved = load_config(vault.location.config_path).collection("notes")
    assert saved is not None and saved.egress_policy == "lan"


def test_policy_set_judges_the_file_on_disk_not_a_stale_copy(vault: Engine) -> None:
    # Another process (a CLI, a second server) relaxes the policy behind this engine's back.
    with Engine.open(dirs=vault.location.dirs) as other:
        other.egress.set_policy("notes", "lan", Confirmation("local_only", 0, acknowledged=True))
    stale = Confirmation("local_only", 0, acknowledged=True)
    assert error_code(lambda: policy_set(vault, "remote", stale)) == "CONFLICT"
    fresh = policy_set(vault, "remote", Confirmation("lan", 1, acknowledged=True))
    assert (fresh["previous"]["revision"], fresh["current"]["revision"]) == (1, 2)
