"""``collection clear-embeddings`` (as gno_clear_collection_embeddings), ``similar``, ``models``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.stdio_session import open_mcp_server

BREAD = "# Bread\n\nKnead the dough, let it rise, bake the loaf in a hot oven.\n"
NOTES = {
    "bread.md": BREAD,
    "bike.md": "# Bicycle\n\nPatch the inner tube and pump the tyre back up.\n",
    "garden.md": "# Garden\n\nWater the tomato seedlings every morning.\n",
}


def _embedded(tmp_path: Path) -> Cli:
    """Two collections that share one note's content, every chunk embedded."""
    cli = make_cli(tmp_path)
    notes = write_corpus(tmp_path / "notes", NOTES)
    twin = write_corpus(tmp_path / "twin", {"loaf.md": BREAD})
    cli.run("init", str(notes), "--name", "notes")
    cli.run("collection", "add", str(twin), "--name", "twin")
    cli.run("update")
    assert cli.json("embed")["embedded"] == 3  # bread's vector serves both collections
    assert cli.json("status")["embeddingBacklog"] == 0
    return cli


async def test_clear_embeddings_stale_then_all_like_the_mcp_tool(tmp_path: Path) -> None:
    cli = _embedded(tmp_path)

    stale = cli.json("collection", "clear-embeddings", "notes")
    assert stale == {
        "collection": "notes",
        "mode": "stale",
        "deletedVectors": 0,
        "deletedModels": [],
        "protectedSharedVectors": 0,
    }
    assert cli.json("status")["embeddingBacklog"] == 0  # the current model's vectors stay

    cleared = cli.json("collection", "clear-embeddings", "notes", "--all")
    assert cleared["mode"] == "all"
    assert cleared["deletedVectors"] == 2
    assert cleared["protectedSharedVectors"] == 1  # twin/loaf.md still uses bread's vector
    assert cleared["deletedModels"] and all(cleared["deletedModels"])
    assert "gno-trio embed notes" in cleared["note"]
    assert cli.json("status")["embeddingBacklog"] == 2
    assert cli.json("vsearch", "bake a loaf", "-c", "twin")["results"]  # twin's vector is kept

    # The same request over MCP, on the same state, gets the same answer.
    assert cli.json("embed")["embedded"] == 2
    answer: dict[str, Any]
    async with open_mcp_server(cli.env, "--enable-write", client_name="clear") as session:
        answer = await session.tool(
            "gno_clear_collection_embeddings", {"collection": "notes", "mode": "all"}
        )
    assert answer["structuredContent"] == cleared


def test_clear_embeddings_text_and_errors(tmp_path: Path) -> None:
    cli = _embedded(tmp_path)
    text = cli.run("collection", "clear-embeddings", "notes", "--all").stdout
    assert text.startswith("notes: removed 2 vectors\n")
    assert "Kept 1 shared with an active document of another collection" in text
    assert "gno-trio embed notes" in text

    before = cli.state()
    missing = cli.json("collection", "clear-embeddings", "nope", code=1)
    assert missing["error"] == "NOT_FOUND" and "nope" in missing["message"]
    assert cli.state() == before
    typo = cli.run("collection", "clear-embedings", "notes", code=1)
    assert "clear-embeddings" in typo.stderr


def test_similar_and_models_read_well_in_text_and_markdown(tmp_path: Path) -> None:
    cli = _embedded(tmp_path)
    text = cli.run("similar", "notes/bread.md", "--threshold", "0", "-n", "1").stdout.splitlines()
    assert text[0] == "1 document similar to gno://notes/bread.md"
    assert re.fullmatch(r"  0\.\d{3}  gno://notes/\w+\.md  \(\w+\)", text[1]), text
    table = cli.run("similar", "notes/bread.md", "--threshold", "0", "--md").stdout
    assert table.startswith("# Similar to `gno://notes/bread.md`\n\n| Score | Document |")
    none = cli.run("similar", "notes/bread.md", "--threshold", "1").stdout
    assert none.startswith("No documents similar to gno://notes/bread.md above 1")
    models = cli.run("models", "list", "--md").stdout
    assert "| embed | builtin:use-multilingual-v3 " in models and "| rerank | none |" in models
    assert cli.run("models", "list").stdout.startswith("embed:  builtin:use-multilingual-v3")


def test_graph_similarity_edges_come_from_the_embeddings(
    tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    cli = make_cli(tmp_path)
    notes = write_corpus(
        tmp_path / "notes",
        {
            **NOTES,
            "loaf.md": "# Bread\n\nKnead the dough, let it rise, bake the loaf in a warm oven.\n",
        },
    )
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    cli.run("embed")
    wide = ("graph", "--include-similar", "--include-isolated")
    graph = cli.json(*wide, "--threshold", "0.9")
    schema_check("graph", graph)
    uris = {node["id"]: node["uri"] for node in graph["nodes"]}
    similar = [link for link in graph["links"] if link["type"] == "similar"]
    assert [{uris[s["source"]], uris[s["target"]]} for s in similar] == [
        {"gno://notes/bread.md", "gno://notes/loaf.md"}
    ]
    assert similar[0]["confidence"] == "similarity" and similar[0]["weight"] >= 0.9
    meta = graph["meta"]
    assert meta["includedSimilar"] is True and meta["similarAvailable"] is True
    assert meta["warnings"] == [] and graph["report"]["edgeTypes"]["similar"] == 1
    loose = cli.json(*wide, "--threshold", "0")
    assert sum(link["type"] == "similar" for link in loose["links"]) == 6  # every pair of 4
    nearest = cli.json(*wide, "--threshold", "0", "--similar-top-k", "1")
    assert 2 <= sum(link["type"] == "similar" for link in nearest["links"]) <= 4
    refused = cli.run("graph", "--threshold", "2", code=1)
    assert "threshold must be between 0 and 1" in refused.stderr
