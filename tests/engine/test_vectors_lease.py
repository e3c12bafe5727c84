"""Embedding writes under the one write lease, and the background embedder of ``serve``.

Issue 10's rule: every writer takes the lease inside the engine. The embed
phase takes it for each batch's write only, so another writer (a CLI
``update``, an MCP write) waits for one batch's write at most; the
background embedder waits for a lease someone else holds and never fails
for it; a job that holds the lease hands it down.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine import BackgroundEmbedder, Engine
from gno_trio.engine.vectors.bundled import BUNDLED_URI
from gno_trio.engine.vectors.embedder import ModelIdentity
from gno_trio.engine.vectors.embedding import embed_backlog
from gno_trio.engine.vectors.models import backend_for
from gno_trio.errors import GnoError
from tests.conftest import gno_env, write_corpus
from tests.support.gateway_process import gateway_process
from tests.support.http_gateway_support import modern_headers, modern_params, rpc
from tests.support.lease_holder import lease_held_elsewhere

NOTES = {
    "bread.md": "# Baking bread\n\nKnead the dough and bake the loaf in a hot oven.\n",
    "garden.md": "# Vegetable garden\n\nPlant tomatoes in spring and water the seedlings.\n",
}


def _vectors(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])


@pytest.fixture
def notes(engine: Engine, tmp_path: Path) -> Engine:
    engine.collections.add(str(write_corpus(tmp_path / "notes", NOTES)), name="notes")
    engine.sync()
    return engine


def test_background_embedder_waits_for_a_lease_held_elsewhere_then_writes(
    notes: Engine,
) -> None:
    embedder = BackgroundEmbedder(notes.vectors, poll_seconds=0.05, wake_seconds=0.05)
    with notes.connection() as conn:
        with lease_held_elsewhere(notes.location.dirs.write_lock) as holder:
            embedder.start()
            try:
                time.sleep(3.0)  # model load + both chunks embedded; the write must wait
                assert _vectors(conn) == 0
                assert embedder.last_error is None
                holder.release()
                deadline = time.monotonic() + 60
                while _vectors(conn) == 0 and time.monotonic() < deadline:
                    time.sleep(0.05)
            finally:
                assert embedder.close() is True
        assert _vectors(conn) == 2
    assert embedder.last_error is None
    assert notes.index.status()["embeddingBacklog"] == 0


def test_embed_waits_its_lease_wait_then_is_locked_and_writes_nothing(notes: Engine) -> None:
    backend_for(BUNDLED_URI).embed_texts(["warm"])  # the model load is not part of the wait
    with lease_held_elsewhere(notes.location.dirs.write_lock):
        with pytest.raises(GnoError) as caught:
            notes.vectors.embed(lease_wait_seconds=0.3)
        assert caught.value.code == "LOCKED"
        with pytest.raises(GnoError) as cleared:
            notes.vectors.clear("notes", mode="all", lease_wait_seconds=0.1)
        assert cleared.value.code == "LOCKED"
    with notes.connection() as conn:
        assert _vectors(conn) == 0
    # A caller holding the lease hands it down: no second acquisition, no LOCKED.
    with notes.lease(wait_seconds=0) as held:
        run = notes.vectors.embed(lease=held, lease_wait_seconds=0)
        assert run.embedded == 2
        assert notes.vectors.clear("notes", mode="all", lease=held)["deletedVectors"] == 2


class _SyncsMidBatch:
    """The bundled model, but a document is edited and synced while its batch is embedded."""

    def __init__(self, engine: Engine, edited: Path) -> None:
        self.inner = backend_for(BUNDLED_URI)
        self.identity = ModelIdentity(BUNDLED_URI, "mid-batch-sync", 512)
        self.engine = engine
        self.edited = edited
        self.synced_while_embedding = False

    def embed_texts(self, texts: Sequence[str]) -> Any:
        if not self.synced_while_embedding:
            self.synced_while_embedding = True
            self.edited.write_text("# Vegetable garden\n\nPull the weeds between the rows.\n")
            # No lease is held while the model runs: the sync gets it at once, and
            # collects the chunk of the old text this batch is embedding.
            self.engine.sync(wait_seconds=0)
        return self.inner.embed_texts(texts)


def test_a_sync_during_a_batch_is_not_blocked_and_leaves_no_orphan_vector(
    notes: Engine, tmp_path: Path
) -> None:
    backend = _SyncsMidBatch(notes, tmp_path / "notes" / "garden.md")
    with notes.connection() as conn:
        report = embed_backlog(conn, backend, guard=lambda: notes.lease(wait_seconds=5))
        assert backend.synced_while_embedding and report.errors == 0
        orphans = conn.execute(
            "SELECT COUNT(*) FROM content_vectors v WHERE NOT EXISTS (SELECT 1 FROM "
            "content_chunks c WHERE c.mirror_hash = v.mirror_hash AND c.seq = v.seq)"
        ).fetchone()[0]
        assert orphans == 0
        assert _vectors(conn) == 2  # bread.md and the new text of garden.md


# -- the live gateway ------------------------------------------------------------------------


def _vsearch(query: str) -> dict[str, Any]:
    return rpc(
        "tools/call", modern_params(name="gno_vsearch", arguments={"query": query, "limit": 3})
    )


async def _found(client: httpx.AsyncClient, url: str, query: str) -> list[str]:
    answer = await client.post(
        url, headers=modern_headers("tools/call", "gno_vsearch"), json=_vsearch(query)
    )
    result = answer.json()["result"]
    if result.get("isError"):
        return []
    return [hit["source"]["relPath"] for hit in result["structuredContent"]["results"]]


async def _backlog(client: httpx.AsyncClient, url: str) -> int:
    """The gateway's ``gno_status`` embedding backlog."""
    status = await client.post(
        url,
        headers=modern_headers("tools/call", "gno_status"),
        json=rpc("tools/call", modern_params(name="gno_status", arguments={})),
    )
    return int(status.json()["result"]["structuredContent"]["embeddingBacklog"])


async def test_serve_embeds_what_a_cli_update_adds_without_refusing_the_update(
    tmp_path: Path,
) -> None:
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    root = write_corpus(tmp_path / "notes", NOTES)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="notes")
        engine.sync()
    # A CLI update that finds the lease taken gives up after 2 s (exit 4).
    impatient = {"GNO_WRITE_LOCK_WAIT_MS": "2000"}
    async with gateway_process(tmp_path, "serve") as announced:
        url = announced["url"]
        async with httpx.AsyncClient(timeout=30) as client:
            with trio.fail_after(90):  # the backlog at start is embedded
                while "bread.md" not in await _found(client, url, "baking a loaf"):
                    await trio.sleep(0.2)
            # A backlog of some seconds: 40 pages of three windows each.
            rng = np.random.default_rng(4)
            words = ["river", "stone", "market", "winter", "lamp", "signal", "harbour", "field"]
            for i in range(40):
                body = " ".join(rng.choice(words, 500).tolist())
                (root / f"filler-{i:02d}.md").write_text(f"# Filler {i}\n\n{body}\n")
            (root / "kayak.md").write_text("# Kayaking\n\nPaddle along the coast in a kayak.\n")
            env = {**gno_env(tmp_path), **impatient}
            first = await trio.to_thread.run_sync(lambda: run_cli_env(tmp_path, env, "update"))
            assert first.returncode == 0, first.stderr
            # While the backlog is being embedded, another update is not refused.
            (root / "bread.md").write_text(NOTES["bread.md"] + "\nAdd a pinch of salt.\n")
            await trio.sleep(1.5)
            second = await trio.to_thread.run_sync(lambda: run_cli_env(tmp_path, env, "update"))
            assert second.returncode == 0, second.stderr
            with trio.fail_after(120):
                while "kayak.md" not in await _found(client, url, "paddling a small boat at sea"):
                    await trio.sleep(0.25)
            # kayak.md came with the first update; bread.md's new text, from the second,
            # may still be in the embedder's next batch: wait for the backlog to drain.
            with trio.fail_after(60):
                while await _backlog(client, url):
                    await trio.sleep(0.25)
    # Leaving gateway_process stops it: SIGTERM, then exit 0 within its bound.


def run_cli_env(
    tmp_path: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gno_trio", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
