"""``gno_graph``, ``gno_graph_query`` and ``gno_impact``: whole-graph view and bounded walks.

Engine tests run over a small two-collection vault with typed frontmatter
relations and ordinary links, written per test; every answer is checked
against its output schema. The wire tests spawn ``python -m gno_trio mcp``
and speak raw JSON-RPC to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.engine import Engine
from gno_trio.engine.graph import overview as graph_overview
from gno_trio.engine.graph import typed as typed_graph
from gno_trio.engine.graph import typed_edges
from gno_trio.engine.graph.links import Resolver, summary
from gno_trio.engine.store.links import SqliteLinks
from gno_trio.server.schemas import output_schema, output_schema_errors
from gno_trio.tools.graph import GraphInput, GraphQueryInput, ImpactInput
from tests.conftest import error_code
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree


def relations(**edges: str) -> str:
    body = "".join(f"  {kind}: {target}\n" for kind, target in edges.items())
    return f"---\nrelations:\n{body}---\n"


VAULT: dict[str, dict[str, str]] = {
    "notes": {
        "people/alice.md": relations(works_at="notes/orgs/acme.md", knows="Bob") + "# Alice\n",
        "people/bob.md": relations(works_at="gno://notes/orgs/acme.md") + "# Bob\n",
        "orgs/acme.md": relations(located_in="city") + "# Acme\n",
        "places/city.md": "# City\n",
        "projects/p.md": relations(depends_on="ghost", mentions="alice") + "# Plan\n",
        "design.md": "# Design\n\nBuilt for [[acme]].\n",
        "readme.md": "# Readme\n\nSee [the design](design.md) and [[design]].\n",
        "lonely.md": "# Lonely\n",
    },
    "other": {
        "x.md": relations(depends_on="notes/orgs/acme.md") + "# Ex\n\nSee [[notes:readme]].\n"
    },
}
SCHEMAS = {name: output_schema(name) for name in ("graph", "graph-query", "impact")}


def valid(name: str, result: dict[str, Any]) -> dict[str, Any]:
    assert output_schema_errors(SCHEMAS[name], result) == [], result
    return result


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    for name, files in VAULT.items():
        engine.collections.add(str(write_tree(tmp_path / "vault" / name, files)), name=name)
    engine.sync()
    return engine


def overview(engine: Engine, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("graph", graph_overview.overview(conn, **options))


def query(engine: Engine, ref: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("graph-query", typed_graph.graph_query(conn, ref, **options))


def impact(engine: Engine, ref: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        return valid("impact", typed_graph.impact(conn, ref, **options))


def paths(entries: list[dict[str, Any]]) -> list[str]:
    return [f"{entry['collection']}/{entry['relPath']}" for entry in entries]


# ---------------------------------------------------------------------------
# gno_graph
# ---------------------------------------------------------------------------


def test_graph_lists_linked_documents_by_degree_with_weighted_edges(vault: Engine) -> None:
    found = overview(vault)
    assert paths(found["nodes"]) == [
        "notes/design.md",
        "notes/readme.md",
        "notes/orgs/acme.md",
        "other/x.md",
    ]
    degrees = {n["relPath"]: n["degree"] for n in found["nodes"]}
    assert degrees == {"design.md": 2, "orgs/acme.md": 1, "readme.md": 2, "x.md": 1}
    by_id = {n["id"]: n["relPath"] for n in found["nodes"]}
    edges = {
        (by_id[e["source"]], by_id[e["target"]], e["type"], e["weight"]) for e in found["links"]
    }
    assert edges == {
        ("design.md", "orgs/acme.md", "wiki", 1),
        ("readme.md", "design.md", "markdown", 1),
        ("readme.md", "design.md", "wiki", 1),
        ("x.md", "readme.md", "wiki", 1),
    }
    report = found["report"]
    assert paths(report["hubs"])[:2] == ["notes/design.md", "notes/readme.md"]
    # 9 documents, 4 linked in one piece; the 5 others stand alone.
    assert report["isolated"]["total"] == 5
    assert report["components"] == 6
    assert report["edgeTypes"] == {"wiki": 3, "markdown": 1, "similar": 0}
    assert found["meta"]["truncated"] is False and found["meta"]["warnings"] == []


def test_graph_keeps_isolates_on_request_and_filters_by_collection(vault: Engine) -> None:
    everything = overview(vault, linked_only=False)
    assert everything["meta"]["totalNodes"] == 9 and "notes/lonely.md" in paths(everything["nodes"])
    notes = overview(vault, collection="NOTES")
    assert notes["meta"]["collection"] == "notes"
    assert all(n["collection"] == "notes" for n in notes["nodes"])
    assert notes["meta"]["totalEdges"] == 3  # the link from other/x.md is out of scope
    with vault.connection() as conn:
        assert error_code(lambda: graph_overview.overview(conn, collection="nope")) == "NOT_FOUND"


def test_graph_limits_truncate_and_say_so(vault: Engine) -> None:
    cut = overview(vault, limit=2, edge_limit=1)
    assert cut["meta"]["returnedNodes"] == 2 and len(cut["nodes"]) == 2
    assert cut["meta"]["returnedEdges"] == 1 and len(cut["links"]) == 1
    assert cut["meta"]["totalNodes"] == 4 and cut["meta"]["truncated"] is True
    kept = {n["id"] for n in cut["nodes"]}
    assert all(e["source"] in kept and e["target"] in kept for e in cut["links"])


def test_similarity_edges_are_reported_unavailable_not_faked(vault: Engine) -> None:
    found = overview(vault, include_similar=True)
    assert found["meta"]["includedSimilar"] is False
    assert found["meta"]["similarAvailable"] is False
    assert any("vector" in warning for warning in found["meta"]["warnings"])
    assert all(link["type"] != "similar" for link in found["links"])


# ---------------------------------------------------------------------------
# gno_graph_query
# ---------------------------------------------------------------------------


def test_typed_edges_resolve_every_written_target_form(vault: Engine) -> None:
    found = query(vault, "notes/people/alice.md", direction="out", max_depth=1)
    assert paths(found["nodes"]) == [
        "notes/people/alice.md",
        "notes/orgs/acme.md",
        "notes/people/bob.md",
    ]
    assert found["root"]["graphHints"] == ["root"] and found["root"]["depth"] == 0
    by_id = {n["id"]: n["relPath"] for n in found["nodes"]}
    assert {(by_id[e["source"]], e["edgeType"], by_id[e["target"]]) for e in found["edges"]} == {
        ("people/alice.md", "works_at", "orgs/acme.md"),
        ("people/alice.md", "knows", "people/bob.md"),
    }
    assert all(e["edgeSource"] == "frontmatter-relation" for e in found["edges"])


def test_query_walks_both_ways_to_the_depth_asked(vault: Engine) -> None:
    near = query(vault, "notes/orgs/acme.md", max_depth=1)
    assert {(n["relPath"], n["depth"]) for n in near["nodes"][1:]} == {
        ("people/alice.md", 1),
        ("people/bob.md", 1),
        ("places/city.md", 1),
        ("x.md", 1),
    }
    assert "more-beyond-depth" in {h for n in near["nodes"] for h in n["graphHints"]}
    far = query(vault, "notes/orgs/acme.md", max_depth=2)
    assert ("projects/p.md", 2) in {(n["relPath"], n["depth"]) for n in far["nodes"]}
    inbound = query(vault, "notes/orgs/acme.md", direction="in", edge_type="works_at")
    assert paths(inbound["nodes"][1:]) == ["notes/people/alice.md", "notes/people/bob.md"]
    assert inbound["meta"]["edgeType"] == "works_at"


def test_query_reports_unresolved_targets_and_truncation(vault: Engine) -> None:
    found = query(vault, "notes/projects/p.md", direction="out")
    assert any("1 typed edge" in warning for warning in found["meta"]["warnings"])
    cut = query(vault, "notes/orgs/acme.md", max_nodes=2)
    assert cut["meta"]["returnedNodes"] == 2 and cut["meta"]["truncated"] is True
    assert query(vault, "notes/places/city.md", max_depth=6)["meta"]["truncated"] is False


def test_edge_type_and_its_alias_must_agree() -> None:
    assert typed_edges.check_edge_type(None, "works_at") == "works_at"
    assert typed_edges.check_edge_type("works_at", "works_at") == "works_at"
    assert error_code(lambda: typed_edges.check_edge_type("a", "b")) == "INVALID_INPUT"


def test_unknown_root_is_not_found(vault: Engine) -> None:
    with vault.connection() as conn:
        assert error_code(lambda: typed_graph.graph_query(conn, "notes/none.md")) == "NOT_FOUND"
        assert error_code(lambda: typed_graph.impact(conn, "notes/none.md")) == "NOT_FOUND"


# ---------------------------------------------------------------------------
# gno_impact
# ---------------------------------------------------------------------------


def test_impact_follows_typed_edges_and_links_inbound_with_evidence(vault: Engine) -> None:
    found = impact(vault, "notes/orgs/acme.md")
    depths = {(e["document"]["relPath"], e["depth"]) for e in found["impacted"]}
    assert depths == {
        ("design.md", 1),
        ("people/alice.md", 1),
        ("people/bob.md", 1),
        ("x.md", 1),
        ("readme.md", 2),
        ("projects/p.md", 2),
    }
    readme = next(e for e in found["impacted"] if e["document"]["relPath"] == "readme.md")
    steps = [
        (s["source"]["uri"], s["target"]["uri"], s["edgeSource"]) for s in readme["evidencePath"]
    ]
    assert steps == [
        ("gno://notes/readme.md", "gno://notes/design.md", "markdown-link"),
        ("gno://notes/design.md", "gno://notes/orgs/acme.md", "wikilink"),
    ]
    assert found["meta"]["returnedNodes"] == 7 and found["meta"]["truncated"] is False
    # Nothing points at the lonely note; nothing depends on it.
    assert impact(vault, "notes/lonely.md")["impacted"] == []


def test_impact_caps_cut_the_walk_and_say_so(vault: Engine) -> None:
    shallow = impact(vault, "notes/orgs/acme.md", max_depth=1)
    assert {e["depth"] for e in shallow["impacted"]} == {1} and not shallow["meta"]["truncated"]
    few = impact(vault, "notes/orgs/acme.md", max_nodes=3)
    assert len(few["impacted"]) == 2 and few["meta"]["truncated"] is True
    edges = impact(vault, "notes/orgs/acme.md", max_edges=2)
    assert edges["meta"]["returnedEdges"] == 2 and edges["meta"]["truncated"] is True
    frontier = impact(vault, "notes/orgs/acme.md", frontier_limit=1, max_depth=2)
    assert frontier["meta"]["truncated"] is True


# ---------------------------------------------------------------------------
# Argument bounds
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("struct", "arguments"),
    [
        (GraphInput, {"limit": 0}),
        (GraphInput, {"limit": 5001}),
        (GraphInput, {"edgeLimit": 50001}),
        (GraphInput, {"threshold": 1.5}),
        (GraphInput, {"similarTopK": 21}),
        (GraphQueryInput, {"ref": "notes/a.md", "maxDepth": 7}),
        (GraphQueryInput, {"ref": "notes/a.md", "depth": 0}),
        (GraphQueryInput, {"ref": "notes/a.md", "maxNodes": 1001}),
        (GraphQueryInput, {"ref": "notes/a.md", "direction": "sideways"}),
        (GraphQueryInput, {"ref": ""}),
        (ImpactInput, {"ref": "notes/a.md", "maxDepth": 0}),
        (ImpactInput, {"ref": "notes/a.md", "maxEdges": 5001}),
        (ImpactInput, {"ref": "notes/a.md", "visitedLimit": 5001}),
    ],
)
def test_out_of_range_arguments_are_refused(
    struct: type[msgspec.Struct], arguments: dict[str, Any]
) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(arguments, struct)


def test_defaults_match_the_catalogue() -> None:
    graph = msgspec.convert({}, GraphInput)
    assert (graph.limit, graph.edgeLimit, graph.linkedOnly, graph.includeSimilar) == (
        2000,
        10000,
        True,
        False,
    )
    walk = msgspec.convert({"ref": "n/a.md"}, GraphQueryInput)
    assert (walk.direction, walk.maxNodes) == ("both", 100)
    impact = msgspec.convert({"ref": "n/a.md"}, ImpactInput)
    assert (impact.maxDepth, impact.maxEdges) == (3, 250)  # GNO's defaults


def test_depth_is_an_alias_of_max_depth(vault: Engine) -> None:
    def hops(**options: Any) -> int:
        result = vault.graph.query("notes/orgs/acme.md", **options)
        return int(result["meta"]["maxDepth"])

    assert hops() == 2
    assert hops(depth=4) == 4
    assert hops(max_depth=5, depth=5) == 5
    assert error_code(lambda: vault.graph.query("notes/orgs/acme.md", max_depth=2, depth=3)) == (
        "INVALID_INPUT"
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(target=st.text(max_size=40), noise=st.sampled_from(["", " ", "  "]))
def test_any_written_target_resolves_to_an_active_document_or_none(
    vault: Engine, target: str, noise: str
) -> None:
    """Untrusted relation targets never raise; known forms always find their document."""
    with vault.connection() as conn:
        row = conn.execute("SELECT * FROM documents WHERE rel_path = 'lonely.md'").fetchone()
        stored = SqliteLinks(conn)
        source, resolver = summary(row), Resolver(stored)
        found = typed_edges.resolve_target(stored, resolver, target, source)
        assert found is None or found.uri.startswith("gno://")
        acme = conn.execute("SELECT docid FROM documents WHERE rel_path = 'orgs/acme.md'")
        docid = str(acme.fetchone()[0])
        for written in ("notes/orgs/acme.md", "gno://notes/orgs/acme.md", "acme", "Acme", docid):
            known = typed_edges.resolve_target(stored, resolver, noise + written + noise, source)
            assert known is not None and known.rel_path == "orgs/acme.md"


# ---------------------------------------------------------------------------
# Over the wire
# ---------------------------------------------------------------------------


@pytest.fixture
def server_env(vault: Engine) -> dict[str, str]:
    dirs = vault.location.dirs
    return server_environment(dirs)


async def test_server_answers_the_three_graph_tools_within_their_schemas(
    server_env: dict[str, str],
) -> None:
    async with mcp_server(server_env) as pipe:
        listed = await pipe.list_tools()
        for name in ("gno_graph", "gno_graph_query", "gno_impact"):
            assert listed[name]["annotations"]["readOnlyHint"] is True
            assert listed[name]["outputSchema"]["type"] == "object"
        whole = await pipe.tool("gno_graph", {"collection": "notes", "includeSimilar": True})
        assert whole["meta"]["similarAvailable"] is False and whole["meta"]["totalEdges"] == 3
        walk = await pipe.tool(
            "gno_graph_query",
            {"ref": "gno://notes/orgs/acme.md", "direction": "in", "relation": "works_at"},
        )
        assert [n["relPath"] for n in walk["nodes"][1:]] == ["people/alice.md", "people/bob.md"]
        aliased = await pipe.tool(
            "gno_graph_query",
            {"ref": "gno://notes/orgs/acme.md", "direction": "in", "depth": 1},
        )
        assert aliased["meta"]["maxDepth"] == 1
        hit = await pipe.tool("gno_impact", {"ref": "notes/orgs/acme.md", "maxDepth": 1})
        assert len(hit["impacted"]) == 4
        assert hit["meta"]["maxEdges"] == 250
        assert "INVALID_INPUT" in await pipe.tool_error(
            "gno_graph_query", {"ref": "notes/orgs/acme.md", "edgeType": "a", "relation": "b"}
        )
        assert "NOT_FOUND" in await pipe.tool_error("gno_graph", {"collection": "missing"})
        refused = await pipe.call(
            "tools/call", {"name": "gno_impact", "arguments": {"ref": "notes/a.md", "maxDepth": 9}}
        )
        assert refused.get("error", {}).get("code") == -32602 or refused["result"]["isError"]
