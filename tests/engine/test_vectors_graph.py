"""Graph expansion in the hybrid query finds markdown links by their path's last segment.

Real documents, embedded with the bundled model; the neighbour is a note
that links to the top result through a relative path. File names with an
underscore once never matched (the ending was escaped out of a ``LIKE``
pattern), and the per-index table of link endings must follow new links.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gno_trio.engine import Engine, QueryOptions, SearchRequest
from tests.conftest import write_corpus

# Five notes answer the query (the graph's seeds); the plan only links to one.
NOTES = {
    "guides/best_practices.md": "# Release checklist\n\nAlways pin dependency versions.\n",
    **{
        f"guides/pinning_{n}.md": f"# Pinning {n}\n\nPin dependency versions in {tool}.\n"
        for n, tool in enumerate(("pip", "npm", "cargo", "maven"))
    },
    "notes/plan.md": "# Plan\n\nRead [the guide](../guides/best_practices.md) first.\n",
}


def _graph(engine: Engine) -> dict[str, Any]:
    request = SearchRequest(query="pin dependency versions", limit=5)
    meta: dict[str, Any] = engine.search.query(request, QueryOptions())["meta"]
    assert meta["mode"] == "hybrid"
    graph: dict[str, Any] = meta["graphExpansion"]
    return graph


def test_markdown_links_to_a_seed_are_found_and_followed_as_they_change(
    engine: Engine, tmp_path: Path
) -> None:
    root = write_corpus(tmp_path / "notes", NOTES)
    engine.collections.add(str(root), name="notes")
    engine.sync()
    assert engine.vectors.embed().errors == 0
    graph = _graph(engine)
    assert graph["candidateCount"] == 1 and graph["edgeConfidence"]["explicit"] == 1
    (root / "notes" / "later.md").write_text(
        "# Later\n\nSee [BEST](../guides/Best_Practices.md) again.\n", encoding="utf-8"
    )
    engine.sync()
    assert engine.vectors.embed().errors == 0
    graph = _graph(engine)
    assert graph["candidateCount"] == 2 and graph["edgeConfidence"]["explicit"] == 2
    (root / "notes" / "plan.md").write_text("# Plan\n\nNo links any more.\n", encoding="utf-8")
    engine.sync()
    assert engine.vectors.embed().errors == 0
    assert _graph(engine)["candidateCount"] == 1
