"""``gno_graph``'s trust and health report: edge confidence, link audit, bridges, communities.

A small vault is written with one link of each resolution kind (a path as
written, a title, a different letter case, a bare file stem, a target two
documents share, a target nothing has) and two clusters joined by nothing,
then the overview is read through the engine and checked against GNO's
``graph@1.0`` schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.graph.overview import overview
from tests.conftest import gno_schema_errors
from tests.support.shared import SCHEMAS, required

VAULT = {
    "hub.md": (
        "# Hub\n\n[[guide]] [[Setup Notes]] [lower](GUIDE.md) [[install]] "
        "[[shared]] [[nowhere]] [gone](missing.md)\n"
    ),
    "guide.md": "# Guide\n\nBack to [[hub]].\n",
    "setup.md": "---\ntitle: Setup Notes\n---\n# Setup\n\nSee [[hub]].\n",
    "docs/install.md": "# Install\n\nNothing links out.\n",
    "a/shared.md": "# Shared A\n",
    "b/shared.md": "# Shared B\n",
    "island/one.md": "# One\n\n[[two]]\n",
    "island/two.md": "# Two\n\n[[one]]\n",
    "alone.md": "# Alone\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("graph-report")
    root = base / "vault"
    for relative, text in VAULT.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as opened:
        opened.collections.add(str(root), name="vault")
        opened.sync()
        yield opened


def graph(engine: Engine, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        result = overview(conn, **options)
    required(SCHEMAS, "GNO's output schemas")
    assert gno_schema_errors("graph", result) == []
    return result


def edges_by_target(result: dict[str, Any], source_uri: str) -> dict[str, list[dict[str, Any]]]:
    ids = {node["id"]: node["uri"] for node in result["nodes"]}
    found: dict[str, list[dict[str, Any]]] = {}
    for link in result["links"]:
        if ids[link["source"]] == source_uri:
            found.setdefault(ids[link["target"]], []).append(link)
    return found


def test_each_edge_says_how_its_link_resolved_and_how_far_to_trust_it(engine: Engine) -> None:
    result = graph(engine)
    out = edges_by_target(result, "gno://vault/hub.md")
    audits = {
        uri: sorted((e["type"], e["confidence"], e["audit"]["resolution"]) for e in links)
        for uri, links in out.items()
    }
    assert audits["gno://vault/guide.md"] == [
        ("markdown", "inferred", "path-fallback"),  # GUIDE.md: only another letter case matches
        ("wiki", "explicit", "exact-path"),
    ]
    assert audits["gno://vault/setup.md"] == [("wiki", "explicit", "exact-title")]
    assert audits["gno://vault/docs/install.md"] == [("wiki", "inferred", "path-fallback")]
    (shared,) = out["gno://vault/a/shared.md"]
    assert (shared["confidence"], shared["audit"]) == (
        "ambiguous",
        {"resolution": "ambiguous-fallback", "matchCount": 2},
    )
    report = result["report"]
    # explicit: hub->guide, hub->setup, guide->hub, setup->hub; inferred: GUIDE.md, the
    # install stem and the two island stems; ambiguous: shared.
    assert report["edgeConfidence"] == {
        "explicit": 4,
        "inferred": 4,
        "ambiguous": 1,
        "similarity": 0,
    }
    assert report["audit"] == {"inferredEdges": 4, "ambiguousEdges": 1, "similarityEdges": 0}
    assert report["unresolvedLinks"] == {"total": 2, "byType": {"wiki": 1, "markdown": 1}}
    assert result["meta"]["totalEdgesUnresolved"] == 2


def test_bridges_and_communities_come_from_the_links(engine: Engine) -> None:
    result = graph(engine)
    report = result["report"]
    bridges = [node["uri"] for node in report["bridgeCandidates"]]
    assert bridges[0] == "gno://vault/hub.md"  # links out and is linked, highest degree
    assert "gno://vault/docs/install.md" not in bridges  # linked, links nowhere
    communities = report["communities"]
    assert communities["algorithm"] == "deterministic-label-propagation"
    community_of = {node["uri"]: node.get("communityId") for node in result["nodes"]}
    assert community_of["gno://vault/island/one.md"] == community_of["gno://vault/island/two.md"]
    assert community_of["gno://vault/island/one.md"] != community_of["gno://vault/hub.md"]
    assert community_of["gno://vault/guide.md"] == community_of["gno://vault/hub.md"]
    largest = communities["top"][0]
    assert largest["id"] == "c1" and largest["topNodes"][0]["uri"] == "gno://vault/hub.md"
    assert communities["total"] == 2
    assert set(communities["assignments"].values()) == {"c1", "c2"}
    assert graph(engine) == result  # the same graph gives the same answer


def test_unlinked_documents_join_no_community(engine: Engine) -> None:
    result = graph(engine, linked_only=False)
    alone = next(node for node in result["nodes"] if node["uri"] == "gno://vault/alone.md")
    assert "communityId" not in alone
    # alone.md, and b/shared.md, which the ambiguous [[shared]] did not pick.
    assert result["report"]["isolated"]["total"] == 2
