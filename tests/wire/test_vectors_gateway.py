"""``gno-trio serve`` embeds the backlog in the background, seen over real HTTP.

A real ``serve`` subprocess (hypercorn, loopback, ephemeral port) starts on
an index whose chunks have no vectors yet. Through the MCP endpoint,
``gno_status`` shows the backlog falling to zero while the gateway keeps
answering, and then ``gno_vsearch`` and the hybrid ``gno_query`` answer from
the vectors the background embedder wrote. ``--no-embed`` leaves the
backlog alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from tests.conftest import write_corpus
from tests.support.gateway_process import gateway_process
from tests.support.http_gateway_support import modern_headers, modern_params, rpc

NOTES = {
    "bread.md": "# Bread\n\nKnead the dough, let it rise, bake the loaf in a hot oven.\n",
    "bike.md": "# Bicycle\n\nPatch the inner tube and pump the tyre back up.\n",
    "garden.md": "# Garden\n\nWater the tomato seedlings every morning.\n",
    "sleep.md": "# Dormir bien\n\nDormir ocho horas y evitar el café por la noche.\n",
}


def _index(tmp_path: Path) -> int:
    """An index over NOTES, synced but not embedded; returns its backlog."""
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(write_corpus(tmp_path / "notes", NOTES)), name="notes")
        engine.sync()
        return int(engine.index.status()["embeddingBacklog"])


async def _call(client: httpx.AsyncClient, url: str, tool: str, **arguments: Any) -> Any:
    answer = await client.post(
        url,
        headers=modern_headers("tools/call", tool),
        json=rpc("tools/call", modern_params(name=tool, arguments=arguments)),
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


async def test_serve_embeds_the_backlog_then_vector_search_answers(tmp_path: Path) -> None:
    assert _index(tmp_path) == len(NOTES)
    async with gateway_process(tmp_path, "serve") as announced:
        url = announced["url"]
        async with httpx.AsyncClient(timeout=30) as client:
            seen = []
            with trio.fail_after(180):
                while True:
                    status = await _call(client, url, "gno_status")
                    seen.append(status["embeddingBacklog"])
                    if status["embeddingBacklog"] == 0:
                        break
                    await trio.sleep(0.2)
            assert status["capabilities"]["vector"] is True
            (collection,) = status["collections"]
            assert collection["embeddedCount"] == len(NOTES)
            assert status["background"]["embedding"]["pendingDocCount"] == 0
            found = await _call(client, url, "gno_vsearch", query="fix a flat tyre", limit=1)
            assert [hit["uri"] for hit in found["results"]] == ["gno://notes/bike.md"]
            assert found["meta"]["mode"] == "vector"
            # A Spanish note for an English question: only the vector leg can find it.
            fused = await _call(client, url, "gno_query", query="how to sleep well", limit=2)
            assert fused["meta"]["mode"] == "hybrid" and fused["meta"]["vectorsUsed"] is True
            assert "gno://notes/sleep.md" in [hit["uri"] for hit in fused["results"]]
    assert seen[-1] == 0


async def test_serve_no_embed_leaves_the_backlog(tmp_path: Path) -> None:
    backlog = _index(tmp_path)
    async with (
        gateway_process(tmp_path, "serve", "--no-embed") as announced,
        httpx.AsyncClient(timeout=30) as client,
    ):
        await trio.sleep(1.5)  # several polls of a background embedder, were one running
        status = await _call(client, announced["url"], "gno_status")
        assert status["embeddingBacklog"] == backlog
        fused = await _call(client, announced["url"], "gno_query", query="bread")
        assert fused["meta"]["mode"] == "bm25_only"
