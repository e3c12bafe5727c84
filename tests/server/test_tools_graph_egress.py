"""The link-graph tools, the read-only egress tools, and folder creation and note copies.

Engine tests run over a small two-collection vault written per test; the
egress dry run is also fuzzed against :func:`gno_trio.egress.evaluate`. The
wire tests spawn ``python -m gno_trio mcp`` and speak raw JSON-RPC to it,
checking every ``structuredContent`` against the advertised output schema.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.config import Collection
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.egress import explain as egress_explain
from gno_trio.engine.egress.decision import CollectionPolicy, Scope, evaluate
from gno_trio.engine.egress.policy import Policy
from gno_trio.engine.graph import linkgraph as graph
from gno_trio.engine.graph.linkgraph import SIMILAR_UNAVAILABLE, GraphFilters
from gno_trio.engine.ingest import filing as filing
from gno_trio.engine.store.lease import write_lease
from gno_trio.server.schemas import output_schema, output_schema_errors
from gno_trio.tools import CATALOGUE
from tests.conftest import error_code
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree

VAULT: dict[str, dict[str, str]] = {
    "notes": {
        "a.md": "# Alpha\n\nSee [[b]], [the c note](c.md) and [[c]].\n",
        "b.md": "# Beta\n\nOn to [[c]].\n",
        "c.md": "# Gamma\n\nBack to [[a]].\n",
        "d.md": "# Delta\n\nStart at [[a]].\n",
        "e.md": "# Epsilon\n\nAlone, except [[e]] and [[nowhere]].\n",
        "sub/f.md": "# Phi\n\nUp to [d](../d.md).\n",
    },
    "other": {"x.md": "# Ex\n\nOver to [[notes:b]].\n"},
}
NEW_READ_TOOLS = (
    "gno_egress_policy_get",
    "gno_egress_check",
    "gno_graph_neighbors",
    "gno_graph_path",
)
NEW_WRITE_TOOLS = ("gno_create_folder", "gno_duplicate_note")
SCHEMAS = {
    "neighbors": output_schema("graph-neighbors"),
    "path": output_schema("graph-path"),
    "policy": output_schema("collection-egress-policy"),
    "check": output_schema("collection-egress-check"),
    "folder": output_schema("mcp-create-folder-result"),
    "duplicate": output_schema("mcp-duplicate-note-result"),
}


def valid(kind: str, result: Mapping[str, Any]) -> dict[str, Any]:
    assert output_schema_errors(SCHEMAS[kind], result) == [], result
    return dict(result)


def with_policies(engine: Engine, **policies: tuple[Policy, int]) -> None:
    """Give collections an explicit egress policy and revision in the saved config."""
    collections = tuple(
        attrs.evolve(
            c, egress_policy=policies[c.name][0], egress_policy_revision=policies[c.name][1]
        )
        if c.name in policies
        else c
        for c in engine.config.collections
    )
    engine.update_config(lambda current: attrs.evolve(current, collections=collections))


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    for name, files in VAULT.items():
        engine.collections.add(str(write_tree(tmp_path / "vault" / name, files)), name=name)
    engine.sync()
    return engine


def neighbors(engine: Engine, ref: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("neighbors", graph.neighbors(conn, ref, **options))


def path(engine: Engine, source: str, target: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("path", graph.shortest_path(conn, source, target, **options))


def uris(nodes: list[dict[str, Any]]) -> list[str]:
    return [n["uri"].removeprefix("gno://") for n in nodes]


# ---------------------------------------------------------------------------
# Graph
# ---------------------------------------------------------------------------


def test_neighbours_say_which_way_each_link_goes_and_count_links(vault: Engine) -> None:
    found = neighbors(vault, "notes/a.md")
    assert found["node"]["uri"] == "gno://notes/a.md" and found["node"]["title"] == "Alpha"
    summary = {
        n["relPath"]: (n["direction"], n["linkTypes"], n["linkCount"]) for n in found["neighbors"]
    }
    assert summary == {
        "b.md": ("out", ["wiki"], 1),
        "c.md": ("both", ["markdown", "wiki"], 3),  # two links out, one back
        "d.md": ("in", ["wiki"], 1),
    }
    assert uris(found["neighbors"]) == ["notes/b.md", "notes/c.md", "notes/d.md"]
    assert found["meta"] == {
        "totalNeighbors": 3,
        "returned": 3,
        "truncated": False,
        "collection": None,
        "limit": 2000,  # GNO's graph defaults
        "edgeLimit": 10000,
        "similarAvailable": False,
        "warnings": [],
    }


def test_direction_filters_and_limit_truncates_visibly(vault: Engine) -> None:
    assert uris(neighbors(vault, "notes/a.md", direction="out")["neighbors"]) == [
        "notes/b.md",
        "notes/c.md",
    ]
    incoming = neighbors(vault, "gno://notes/b.md", direction="in")
    assert uris(incoming["neighbors"]) == ["notes/a.md", "other/x.md"]  # across collections
    assert {n["direction"] for n in incoming["neighbors"]} == {"in"}
    cut = neighbors(vault, "notes/a.md", filters=GraphFilters(limit=2))
    assert cut["meta"]["totalNeighbors"] == 3
    assert (cut["meta"]["returned"], cut["meta"]["truncated"], cut["meta"]["limit"]) == (2, True, 2)
    # c is linked by two kinds (wiki and markdown): two edges, so one edge keeps b only
    few_edges = neighbors(vault, "notes/a.md", filters=GraphFilters(edge_limit=2))
    assert uris(few_edges["neighbors"]) == ["notes/b.md"] and few_edges["meta"]["truncated"]


def test_the_graph_filters_narrow_neighbours_and_paths(vault: Engine) -> None:
    incoming = neighbors(vault, "notes/b.md", direction="in", filters=GraphFilters("NOTES"))
    assert uris(incoming["neighbors"]) == ["notes/a.md"]  # other/x.md is filtered out
    assert incoming["meta"]["collection"] == "notes"
    # Within "other" alone, x reaches b only through the notes collection: no path there.
    boxed = path(vault, "other/x.md", "notes/c.md", filters=GraphFilters("other"))
    assert boxed["found"] is False and boxed["meta"]["truncated"] is False
    whole = path(vault, "other/x.md", "notes/c.md")
    assert whole["found"] is True and whole["meta"]["collection"] is None
    # The search visits at most `limit` documents and says when it stopped there.
    cramped = path(vault, "notes/sub/f.md", "other/x.md", filters=GraphFilters(limit=2))
    assert cramped["found"] is False and cramped["meta"]["truncated"] is True
    similar = neighbors(vault, "notes/a.md", filters=GraphFilters(include_similar=True))
    assert similar["meta"]["warnings"] == [SIMILAR_UNAVAILABLE]
    assert error_code(lambda: neighbors(vault, "notes/a.md", filters=GraphFilters("x"))) == (
        "NOT_FOUND"
    )


def test_self_links_and_unresolved_links_are_not_edges(vault: Engine) -> None:
    alone = neighbors(vault, "notes/e.md")
    assert alone["neighbors"] == [] and alone["meta"]["totalNeighbors"] == 0


def test_shortest_path_follows_links_both_ways_and_labels_each_step(vault: Engine) -> None:
    direct = path(vault, "notes/a.md", "notes/b.md")
    assert (direct["found"], direct["hops"]) == (True, 1)
    assert direct["steps"] == [
        {
            "fromUri": "gno://notes/a.md",
            "toUri": "gno://notes/b.md",
            "direction": "forward",
            "linkTypes": ["wiki"],
        }
    ]
    far = path(vault, "notes/sub/f.md", "other/x.md")
    assert uris(far["nodes"]) == [
        "notes/sub/f.md",
        "notes/d.md",
        "notes/a.md",
        "notes/b.md",
        "other/x.md",
    ]
    assert [s["direction"] for s in far["steps"]] == ["forward", "forward", "forward", "backward"]
    assert far["hops"] == 4 and far["maxDepth"] == 6


def test_no_path_within_the_depth_is_an_answer_not_an_error(vault: Engine) -> None:
    short = path(vault, "notes/sub/f.md", "other/x.md", max_depth=3)
    assert short["found"] is False and short["nodes"] == [] and short["steps"] == []
    assert "hops" not in short
    island = path(vault, "notes/a.md", "notes/e.md", max_depth=12)
    assert island["found"] is False
    same = path(vault, "notes/a.md", "gno://notes/a.md")
    assert (same["found"], same["hops"], uris(same["nodes"])) == (True, 0, ["notes/a.md"])


def test_a_deleted_document_drops_out_of_the_graph(vault: Engine, tmp_path: Path) -> None:
    (tmp_path / "vault" / "notes" / "a.md").unlink()
    vault.sync()
    assert path(vault, "notes/sub/f.md", "notes/b.md")["found"] is False
    assert neighbors(vault, "notes/d.md")["neighbors"][0]["relPath"] == "sub/f.md"
    assert error_code(lambda: neighbors(vault, "notes/a.md")) == "NOT_FOUND"


@pytest.mark.parametrize("ref", ["notes/missing.md", "#ffffff", "nope/a.md"])
def test_unknown_refs_are_not_found(vault: Engine, ref: str) -> None:
    assert error_code(lambda: neighbors(vault, ref)) == "NOT_FOUND"
    assert error_code(lambda: path(vault, "notes/a.md", ref)) == "NOT_FOUND"
    assert error_code(lambda: path(vault, ref, "notes/a.md")) == "NOT_FOUND"


# ---------------------------------------------------------------------------
# Egress policy views
# ---------------------------------------------------------------------------


def test_policy_state_reports_configured_effective_source_and_revision(vault: Engine) -> None:
    default = valid("policy", egress_explain.policy_state(vault.config.collections, "NOTES"))
    assert default["collection"] == "notes"
    assert (default["configuredPolicy"], default["effectivePolicy"]) == (None, "local_only")
    assert (default["source"], default["revision"]) == ("config_default", 0)
    with_policies(vault, notes=("lan", 4))
    changed = valid("policy", egress_explain.policy_state(vault.config.collections, "notes"))
    assert (changed["configuredPolicy"], changed["effectivePolicy"]) == ("lan", "lan")
    assert (changed["source"], changed["revision"]) == ("explicit", 4)
    assert changed["version"] != default["version"]
    again = egress_explain.policy_state(vault.config.collections, "notes")
    assert again["version"] == changed["version"]
    assert error_code(lambda: egress_explain.policy_state(vault.config.collections, "x")) == (
        "NOT_FOUND"
    )


def check(collections: tuple[Collection, ...], **options: Any) -> dict[str, Any]:
    options.setdefault("requested", None)
    options.setdefault("authenticated", True)
    options.setdefault("content_class", "source")
    return valid("check", egress_explain.check(collections, **options))


def test_check_denies_by_the_strictest_collection_and_suggests_a_remedy(vault: Engine) -> None:
    with_policies(vault, notes=("lan", 1), other=("remote", 2))
    configured = vault.config.collections
    everything = check(configured, zone="lan")
    assert everything["mode"] == "complete"
    assert everything["allowedCollections"] == ["notes", "other"]
    assert everything["decision"]["reason"] == "LAN_POLICY_AUTHENTICATED"
    assert everything["remediation"] is None and everything["disclosure"] is None
    assert [s["revision"] for s in everything["lineage"]["sources"]] == [1, 2]

    remote = check(configured, zone="remote")
    assert (remote["mode"], remote["allowedCollections"]) == ("denied", [])
    assert remote["decision"] == {
        "allowed": False,
        "code": "EGRESS_DENIED",
        "reason": "POLICY_LAN_ONLY",
        "audit": remote["decision"]["audit"],
    }
    assert remote["omittedCollections"] == [
        {"collection": "notes", "reason": "POLICY_LAN_ONLY"},
        {"collection": "other", "reason": "PARTIAL_NOT_REQUESTED"},
    ]
    assert remote["remediation"]["code"] == "RELAX_COLLECTION_POLICY"
    audit = remote["decision"]["audit"]
    assert audit["collections"] == ["notes", "other"] and audit["contentClass"] == "source"

    partial = check(configured, zone="remote", partial_results="explicit")
    assert (partial["mode"], partial["allowedCollections"]) == ("partial", ["other"])
    assert partial["decision"]["allowed"] is True
    assert partial["disclosure"] == {
        "code": "EGRESS_PARTIAL_RESULT",
        "omittedCount": 1,
        "omittedCollections": ["notes"],
    }

    anonymous = check(configured, requested=["OTHER"], zone="remote", authenticated=False)
    assert anonymous["decision"]["reason"] == "AUTHENTICATION_REQUIRED"
    assert anonymous["remediation"]["code"] == "AUTHENTICATE_CALLER"
    local = check(configured, requested=["notes"], zone="loopback", authenticated=False)
    assert local["decision"]["reason"] == "LOCAL_DESTINATION" and local["mode"] == "complete"


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"requested": []}, "INVALID_INPUT"),
        ({"requested": ["notes", "Notes"]}, "INVALID_INPUT"),
        ({"requested": [f"c{i}" for i in range(65)]}, "INVALID_INPUT"),
        ({"requested": ["notes", "ghost"]}, "NOT_FOUND"),
        ({"action": "teleport"}, "INVALID_INPUT"),
        ({"zone": "moon"}, "INVALID_INPUT"),
        ({"partial_results": "some"}, "INVALID_INPUT"),
        ({"content_class": "everything"}, "INVALID_INPUT"),
    ],
)
def test_check_refuses_bad_scopes_and_names(
    vault: Engine, options: dict[str, Any], code: str
) -> None:
    arguments: dict[str, Any] = {
        "requested": None,
        "zone": "lan",
        "authenticated": True,
        "content_class": "source",
        **options,
    }
    assert error_code(lambda: egress_explain.check(vault.config.collections, **arguments)) == code


def test_an_index_without_collections_is_judged_as_local_only() -> None:
    result = check((), zone="lan")
    assert result["mode"] == "denied" and result["decision"]["reason"] == "POLICY_LOCAL_ONLY"
    assert result["lineage"]["sources"][0]["collection"] == "system"


@pytest.mark.parametrize(
    ("action", "zone", "reason"),
    [
        ("publish", "loopback", "ACTION_DESTINATION_MISMATCH"),
        ("publish", "lan", "ACTION_DESTINATION_MISMATCH"),
        ("publish", "remote", "REMOTE_POLICY_AUTHENTICATED"),
        ("serve", "local_process", "ACTION_DESTINATION_MISMATCH"),
        ("remote_inference", "local_process", "ACTION_DESTINATION_MISMATCH"),
        ("remote_inference", "loopback", "LOCAL_DESTINATION"),
        ("export", "loopback", "ACTION_DESTINATION_MISMATCH"),
        ("export", "local_process", "LOCAL_DESTINATION"),
        ("retrieve", "local_process", "LOCAL_DESTINATION"),
        ("clip_write", "lan", "LAN_POLICY_AUTHENTICATED"),
    ],
)
def test_each_action_reaches_only_its_kinds_of_destination(
    vault: Engine, action: str, zone: str, reason: str
) -> None:
    with_policies(vault, notes=("remote", 1), other=("remote", 1))
    result = check(vault.config.collections, zone=zone, action=action)
    assert result["decision"]["reason"] == reason
    assert result["decision"]["allowed"] is (reason != "ACTION_DESTINATION_MISMATCH")
    assert result["decision"]["audit"]["action"] == action
    assert result["decision"]["audit"]["destinationZone"] == zone


def test_an_unauthorised_operation_is_refused_even_on_this_machine(vault: Engine) -> None:
    for zone in ("local_process", "remote"):
        refused = check(
            vault.config.collections, zone=zone, action="export", operation_authorized=False
        )
        assert refused["decision"]["reason"] == "CALLER_NOT_AUTHORIZED"
        assert refused["decision"]["audit"]["callerOperationAuthorized"] is False
        assert refused["remediation"]["code"] == "AUTHORIZE_OPERATION"
    # attachments and embeddings keep their collection's policy
    for content_class in ("attachment", "embedding"):
        kept = check(vault.config.collections, zone="lan", content_class=content_class)
        assert kept["decision"]["reason"] == "POLICY_LOCAL_ONLY"
        assert kept["decision"]["audit"]["contentClass"] == content_class


def test_a_lan_peer_of_a_remote_policy_is_a_lan_decision(vault: Engine) -> None:
    with_policies(vault, notes=("remote", 1), other=("lan", 3))
    result = check(vault.config.collections, requested=["notes"], zone="lan")
    assert result["decision"]["reason"] == "LAN_POLICY_AUTHENTICATED"
    mixed = check(vault.config.collections, zone="lan")
    # the binding policy is lan, which only "other" sets explicitly
    assert mixed["decision"]["audit"]["effectivePolicy"] == "lan"
    assert mixed["decision"]["audit"]["effectivePolicySource"] == "explicit"


POLICY = st.sampled_from([None, "local_only", "lan", "remote"])


@settings(max_examples=150, deadline=None)
@given(
    policies=st.lists(POLICY, min_size=0, max_size=5),
    zone=st.sampled_from(["loopback", "lan", "remote"]),
    authenticated=st.booleans(),
    partial=st.booleans(),
)
def test_the_dry_run_agrees_with_the_gateway_rules(
    policies: list[str | None], zone: Any, authenticated: bool, partial: bool
) -> None:
    partial_results = "explicit" if partial else "deny"
    collections = tuple(
        Collection(name=f"c{i}", path=Path("/") / f"c{i}", egress_policy=policy)  # type: ignore[arg-type]
        for i, policy in enumerate(policies)
    )
    result = check(
        collections,
        zone=zone,
        authenticated=authenticated,
        partial_results=partial_results,
        content_class="snippet",
    )
    rules = {
        c.name: CollectionPolicy(c.name, c.effective_egress_policy, c.egress_policy_source)
        for c in collections
    }
    gateway = evaluate(
        zone=zone, scope=Scope("snippet", None), policies=rules, authenticated=authenticated
    )
    assert (result["mode"] == "complete") == gateway.allowed
    names = sorted(rules)
    omitted = [entry["collection"] for entry in result["omittedCollections"]]
    assert sorted(result["allowedCollections"] + omitted) == names
    for name in result["allowedCollections"]:
        alone = evaluate(
            zone=zone, scope=Scope("snippet", (name,)), policies=rules, authenticated=authenticated
        )
        assert alone.allowed
    if not partial:
        assert result["mode"] in ("complete", "denied")
    assert result["decision"]["allowed"] == (result["mode"] != "denied")


# ---------------------------------------------------------------------------
# Folders and copies
# ---------------------------------------------------------------------------


@pytest.fixture
def quick_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "50")


def notes_root(engine: Engine) -> Path:
    return Path(engine.collection("notes").path)


def test_create_folder_makes_exactly_one_new_folder(vault: Engine) -> None:
    made = valid("folder", filing.create_folder(vault, "Notes", "projects"))
    assert made == {"created": True, "collection": "notes", "folderPath": "projects"}
    nested = filing.create_folder(vault, "notes", "2026", parent_path="projects/")
    assert nested["folderPath"] == "projects/2026"
    assert (notes_root(vault) / "projects" / "2026").is_dir()
    assert error_code(
        lambda: filing.create_folder(vault, "notes", "2026", parent_path="projects")
    ) == ("CONFLICT")
    assert error_code(lambda: filing.create_folder(vault, "notes", "a.md")) == "CONFLICT"
    assert (notes_root(vault) / "a.md").is_file()


@pytest.mark.parametrize(
    ("name", "parent", "code"),
    [
        ("..", None, "INVALID_PATH"),
        ("x", "../outside", "INVALID_PATH"),
        ("x", "/etc", "INVALID_PATH"),
        (".git", None, "INVALID_PATH"),
        ("x", "sub/.ssh", "INVALID_PATH"),
        ("a/b", None, "INVALID_PATH"),
        ("a\\b", None, "INVALID_PATH"),
        (".", None, "INVALID_PATH"),
        ("x", "missing", "PATH_NOT_FOUND"),
        ("x", "a.md", "INVALID_PATH"),
    ],
)
def test_create_folder_refuses_unsafe_or_impossible_places(
    vault: Engine, name: str, parent: str | None, code: str
) -> None:
    before = sorted(p.name for p in notes_root(vault).rglob("*"))
    assert (
        error_code(lambda: filing.create_folder(vault, "notes", name, parent_path=parent)) == code
    )
    assert sorted(p.name for p in notes_root(vault).rglob("*")) == before


def test_create_folder_does_not_follow_a_symlinked_parent(vault: Engine, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, notes_root(vault) / "link")
    assert error_code(lambda: filing.create_folder(vault, "notes", "x", parent_path="link")) == (
        "INVALID_PATH"
    )
    assert list(outside.iterdir()) == []
    assert error_code(lambda: filing.create_folder(vault, "ghost", "x")) == "NOT_FOUND"


def test_write_operations_wait_for_the_lease(vault: Engine, quick_lease: None) -> None:
    with write_lease(vault.location.dirs.write_lock, wait_seconds=0):
        assert error_code(lambda: filing.create_folder(vault, "notes", "later")) == "LOCKED"
        with vault.connection() as conn:
            assert error_code(lambda: filing.duplicate_note(vault, conn, "notes/a.md")) == "LOCKED"
    assert not (notes_root(vault) / "later").exists()
    assert not (notes_root(vault) / "a-copy.md").exists()


def duplicate(engine: Engine, ref: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("duplicate", filing.duplicate_note(engine, conn, ref, **options))


def test_duplicate_copies_the_bytes_and_indexes_the_copy(vault: Engine) -> None:
    source = notes_root(vault) / "b.md"
    source.write_bytes(b"# Beta\r\n\r\nOn to [[c]] with a kinkajou.\r\n")
    vault.sync()
    copy = duplicate(vault, "gno://notes/b.md")
    assert (copy["relPath"], copy["uri"]) == ("b-copy.md", "gno://notes/b-copy.md")
    assert copy["source"]["uri"] == "gno://notes/b.md"
    assert copy["sync"] == {"status": "completed"}
    assert (notes_root(vault) / "b-copy.md").read_bytes() == source.read_bytes()
    hits = vault.search.lexical(SearchRequest(query="kinkajou", limit=10))["results"]
    assert {hit["uri"] for hit in hits} == {"gno://notes/b.md", "gno://notes/b-copy.md"}
    assert {hit["docid"] for hit in hits if hit["uri"].endswith("copy.md")} == {copy["docid"]}
    assert uris(neighbors(vault, "notes/b-copy.md")["neighbors"]) == ["notes/c.md"]


def test_the_graph_of_byte_identical_notes_keeps_its_declared_schema(vault: Engine) -> None:
    # Two documents with one docid: the second node gets its own id and names
    # its docid; the graph's outputSchema admits that (clients check it).
    duplicate(vault, "gno://notes/b.md")
    answer = vault.graph.overview(linked_only=False)
    pair = {"gno://notes/b.md", "gno://notes/b-copy.md"}
    kept, renamed = sorted(
        (node for node in answer["nodes"] if node["uri"] in pair), key=lambda n: "docid" in n
    )
    assert "docid" not in kept and renamed["docid"] == kept["id"] != renamed["id"]
    assert output_schema_errors(output_schema("graph"), answer) == []


def test_duplicate_into_another_folder_under_a_new_name(vault: Engine) -> None:
    filing.create_folder(vault, "notes", "archive")
    copy = duplicate(vault, "notes/sub/f.md", folder_path="archive", name="phi")
    assert copy["relPath"] == "archive/phi.md"
    root_copy = duplicate(vault, "notes/sub/f.md", folder_path="", name="phi.md")
    assert root_copy["relPath"] == "phi.md"


def test_duplicate_never_overwrites(vault: Engine) -> None:
    duplicate(vault, "notes/a.md")
    copy = notes_root(vault) / "a-copy.md"
    copy.write_text("edited by hand\n", encoding="utf-8")
    assert error_code(lambda: duplicate(vault, "notes/a.md")) == "CONFLICT"
    assert copy.read_text(encoding="utf-8") == "edited by hand\n"
    assert error_code(lambda: duplicate(vault, "notes/a.md", name="b")) == "CONFLICT"
    assert (notes_root(vault) / "b.md").read_text(encoding="utf-8") == VAULT["notes"]["b.md"]


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"folder_path": "../elsewhere"}, "INVALID_PATH"),
        ({"folder_path": ".git"}, "INVALID_PATH"),
        ({"folder_path": "nowhere"}, "PATH_NOT_FOUND"),
        ({"name": "x/y"}, "INVALID_PATH"),
        ({"name": "copy.bin"}, "INVALID_PATH"),  # a file type sync would never index
    ],
)
def test_duplicate_refuses_bad_destinations(
    vault: Engine, options: dict[str, Any], code: str
) -> None:
    before = sorted(str(p) for p in notes_root(vault).rglob("*"))
    assert error_code(lambda: duplicate(vault, "notes/a.md", **options)) == code
    assert sorted(str(p) for p in notes_root(vault).rglob("*")) == before


def test_duplicate_refuses_a_symlinked_folder_and_unknown_notes(
    vault: Engine, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, notes_root(vault) / "link")
    assert error_code(lambda: duplicate(vault, "notes/a.md", folder_path="link")) == "INVALID_PATH"
    assert list(outside.iterdir()) == []
    assert error_code(lambda: duplicate(vault, "notes/zzz.md")) == "NOT_FOUND"


# ---------------------------------------------------------------------------
# Over the wire
# ---------------------------------------------------------------------------


@pytest.fixture
def server_env(vault: Engine) -> dict[str, str]:
    with_policies(vault, notes=("lan", 2))
    dirs = vault.location.dirs
    return server_environment(dirs, GNO_WRITE_LOCK_WAIT_MS="200")


async def test_read_only_server_serves_graph_and_egress_views_and_no_file_writes(
    server_env: dict[str, str],
) -> None:
    async with mcp_server(server_env) as pipe:
        listed = await pipe.list_tools()
        for name in NEW_READ_TOOLS:
            assert listed[name]["annotations"]["readOnlyHint"] is True
        assert set(NEW_WRITE_TOOLS) <= CATALOGUE.write_names
        assert not set(NEW_WRITE_TOOLS) & set(listed)
        for name in NEW_WRITE_TOOLS:
            answer = await pipe.call(
                "tools/call", {"name": name, "arguments": {"collection": "notes", "name": "x"}}
            )
            assert answer["error"]["code"] == -32602
        assert not (Path(server_env["GNO_CONFIG_DIR"]).parent / "vault" / "notes" / "x").exists()

        around = await pipe.tool("gno_graph_neighbors", {"ref": "notes/c.md", "direction": "in"})
        assert uris(around["neighbors"]) == ["notes/a.md", "notes/b.md"]
        route = await pipe.tool("gno_graph_path", {"from": "other/x.md", "to": "notes/c.md"})
        assert uris(route["nodes"]) == ["other/x.md", "notes/b.md", "notes/c.md"]
        # GNO's graph filter fields, all at once, as its schema spells them
        filtered = await pipe.tool(
            "gno_graph_neighbors",
            {
                "ref": "notes/b.md",
                "direction": "in",
                "collection": "notes",
                "limit": 5000,
                "edgeLimit": 50000,
                "includeSimilar": False,
                "threshold": 0.7,
                "linkedOnly": True,
                "similarTopK": 20,
            },
        )
        assert uris(filtered["neighbors"]) == ["notes/a.md"]
        boxed = await pipe.tool(
            "gno_graph_path",
            {"from": "other/x.md", "to": "notes/c.md", "collection": "other", "maxDepth": 12},
        )
        assert boxed["found"] is False
        assert (await pipe.tool("gno_graph_path", {"from": "notes/a.md", "to": "notes/e.md"}))[
            "found"
        ] is False
        state = await pipe.tool("gno_egress_policy_get", {"collection": "notes"})
        assert (state["effectivePolicy"], state["source"], state["revision"]) == (
            "lan",
            "explicit",
            2,
        )
        verdict = await pipe.tool(
            "gno_egress_check",
            {
                "action": "serve",
                "destinationZone": "lan",
                "caller": {"authenticated": True, "operationAuthorized": True},
                "contentClass": "snippet",
                "partialResults": "explicit",
            },
        )
        assert (verdict["mode"], verdict["allowedCollections"]) == ("partial", ["notes"])
        assert verdict["omittedCollections"] == [
            {"collection": "other", "reason": "POLICY_LOCAL_ONLY"}
        ]

        assert await pipe.tool_error("gno_egress_policy_get", {"collection": "nope"}) == "NOT_FOUND"
        assert await pipe.tool_error("gno_graph_neighbors", {"ref": "notes/zz.md"}) == "NOT_FOUND"
        gno_shaped = {
            "action": "serve",
            "destinationZone": "lan",
            "caller": {"authenticated": True, "operationAuthorized": True},
            "contentClass": "source",
        }
        assert (
            await pipe.tool_error(
                "gno_egress_check", {**gno_shaped, "collections": ["notes", "notes"]}
            )
            == "INVALID_INPUT"
        )
        malformed: list[tuple[str, dict[str, Any]]] = [
            ("gno_graph_neighbors", {"ref": "notes/a.md", "direction": "sideways"}),
            ("gno_graph_neighbors", {"ref": "notes/a.md", "limit": 0}),
            ("gno_graph_neighbors", {"ref": "notes/a.md", "limit": 5001}),
            ("gno_graph_neighbors", {"ref": "notes/a.md", "edgeLimit": 50001}),
            ("gno_graph_path", {"from": "notes/a.md", "to": "notes/b.md", "limit": 5001}),
            ("gno_graph_path", {"from": "notes/a.md"}),
            ("gno_graph_path", {"from": "notes/a.md", "to": "notes/b.md", "maxDepth": 0}),
            ("gno_graph_path", {"from": "notes/a.md", "to": "notes/b.md", "maxDepth": 13}),
            ("gno_egress_policy_get", {"collection": "notes", "extra": 1}),
            ("gno_egress_check", {}),
            ("gno_egress_check", {**gno_shaped, "destinationZone": "moon"}),
            ("gno_egress_check", {**gno_shaped, "collections": []}),
            ("gno_egress_check", {**gno_shaped, "caller": {"role": "admin"}}),
            ("gno_egress_check", {**gno_shaped, "caller": {"authenticated": True}}),
            ("gno_egress_check", {**gno_shaped, "contentClass": "secrets"}),
            ("gno_egress_check", {**gno_shaped, "partial": True}),
            ("gno_egress_check", {**gno_shaped, "partialResults": "maybe"}),
            ("gno_egress_check", {k: v for k, v in gno_shaped.items() if k != "action"}),
        ]
        for name, arguments in malformed:
            assert await pipe.tool_error(name, arguments) == "INVALID_INPUT", (name, arguments)


async def test_write_server_creates_folders_and_duplicates_notes(
    server_env: dict[str, str], vault: Engine
) -> None:
    async with mcp_server(server_env, "--enable-write") as pipe:
        listed = await pipe.list_tools()
        assert set(NEW_WRITE_TOOLS) <= set(listed)
        made = await pipe.tool(
            "gno_create_folder", {"collection": "notes", "name": "drafts", "parentPath": "sub"}
        )
        assert made["folderPath"] == "sub/drafts"
        copy = await pipe.tool(
            "gno_duplicate_note", {"ref": "gno://notes/c.md", "folderPath": "sub/drafts"}
        )
        assert copy["uri"] == "gno://notes/sub/drafts/c-copy.md"
        back = await pipe.tool("gno_graph_neighbors", {"ref": copy["uri"], "direction": "out"})
        assert uris(back["neighbors"]) == ["notes/a.md"]
        assert (
            await pipe.tool_error(
                "gno_create_folder", {"collection": "notes", "name": "drafts", "parentPath": "sub"}
            )
            == "CONFLICT"
        )
        assert (
            await pipe.tool_error(
                "gno_duplicate_note", {"ref": "notes/c.md", "folderPath": "sub/drafts"}
            )
            == "CONFLICT"
        )
        assert (
            await pipe.tool_error("gno_create_folder", {"collection": "notes", "name": "../up"})
            == "INVALID_PATH"
        )
        assert await pipe.tool_error("gno_create_folder", {"collection": "notes"}) == (
            "INVALID_INPUT"
        )
    assert (notes_root(vault) / "sub" / "drafts" / "c-copy.md").read_text(
        encoding="utf-8"
    ) == VAULT["notes"]["c.md"]
