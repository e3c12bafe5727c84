"""``gno_graph``'s similarity edges over stdio: its description says what ``includeSimilar`` does,
and the call does it, honouring ``threshold`` and ``similarTopK``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import write_corpus
from tests.support.cli_support import make_cli
from tests.support.stdio_session import Wire, spawn

NOTES = {
    "bread.md": "# Bread\n\nKnead the dough, let it rise, bake the loaf in a hot oven.\n",
    "loaf.md": "# Bread\n\nKnead the dough, let it rise, bake the loaf in a warm oven.\n",
    "bike.md": "# Bicycle\n\nPatch the inner tube and pump the tyre back up.\n",
    "garden.md": "# Garden\n\nWater the tomato seedlings every morning.\n",
}


async def similar_pairs(wire: Wire, request_id: int, **arguments: Any) -> list[set[str]]:
    call = {"name": "gno_graph", "arguments": {"includeSimilar": True, **arguments}}
    graph = (await wire.call(request_id, "tools/call", call))["result"]["structuredContent"]
    assert graph["meta"]["similarAvailable"] is True
    uris = {node["id"]: node["uri"] for node in graph["nodes"]}
    return [
        {uris[link["source"]], uris[link["target"]]}
        for link in graph["links"]
        if link["type"] == "similar"
    ]


async def test_include_similar_is_described_and_honours_its_threshold(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    cli.run("init", str(write_corpus(tmp_path / "notes", NOTES)), "--name", "notes")
    cli.run("update")
    cli.run("embed")
    env = cli.dirs_env
    async with spawn(env, tmp_path) as wire:
        await wire.handshake()
        listed = (await wire.call(1, "tools/list"))["result"]["tools"]
        schemas = {tool["name"]: tool["inputSchema"]["properties"] for tool in listed}
        described = schemas["gno_graph"]["includeSimilar"]["description"]
        assert "unavailable" not in described
        assert "similarTopK" in described and "threshold" in described
        assert "links only" in schemas["gno_graph_neighbors"]["includeSimilar"]["description"]
        close = await similar_pairs(wire, 2, linkedOnly=False, threshold=0.9)
        assert close == [{"gno://notes/bread.md", "gno://notes/loaf.md"}]
        every_pair = await similar_pairs(wire, 3, linkedOnly=False, threshold=0)
        assert len(every_pair) == 6
        nearest = await similar_pairs(wire, 4, linkedOnly=False, threshold=0, similarTopK=1)
        assert 2 <= len(nearest) <= 4
