"""No single answer grows without bound.

``gno_multi_get`` caps each document at ``maxBytes`` and, since a glob can
match thousands of documents, the whole answer at 1 MiB of content: the
document that crosses the budget is truncated and flagged, the rest are
skipped with GNO's ``exceeds_maxBytes`` reason. Any transport refuses an
answer line over 16 MiB with ``-32603`` instead of buffering it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from gno_trio.engine import Engine
from gno_trio.engine.vocabulary import MULTI_GET_MAX_TOTAL_BYTES as MAX_TOTAL_BYTES
from gno_trio.protocol.jsonrpc import MAX_RESPONSE_BYTES
from gno_trio.transports.http.memory import MemoryReturn
from tests.conftest import write_corpus
from tests.support.http_gateway_support import modern_headers, modern_params, rpc, running_gateway
from tests.support.mcp_echo_app import build_app

DOC_BYTES = 100_000


def _big_corpus(root: Path, count: int) -> Path:
    files = {
        f"big/doc{i:02d}.md": f"# Doc {i}\n" + ("lorem ipsum " * (DOC_BYTES // 12))
        for i in range(count)
    }
    return write_corpus(root, files)


def test_multi_get_answer_is_capped_in_total_and_says_so(
    engine: Engine, tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    engine.collections.add(str(_big_corpus(tmp_path / "corpus", 25)), name="notes")
    engine.sync()
    result = engine.documents.multi_get(
        pattern="big/**", max_bytes=DOC_BYTES * 2, line_numbers=False
    )
    schema_check("multi-get", result)
    contents = [doc["content"].encode() for doc in result["documents"]]
    assert sum(len(c) for c in contents) <= MAX_TOTAL_BYTES
    assert sum(len(c) for c in contents) > MAX_TOTAL_BYTES - DOC_BYTES
    whole = [doc for doc in result["documents"] if not doc.get("truncated")]
    cut = [doc for doc in result["documents"] if doc.get("truncated")]
    assert len(whole) == MAX_TOTAL_BYTES // (DOC_BYTES + 10) and len(cut) == 1
    assert result["documents"][-1] is cut[0]
    assert {s["reason"] for s in result["skipped"]} == {"exceeds_maxBytes"}
    assert len(result["documents"]) + len(result["skipped"]) == 25
    meta = result["meta"]
    assert meta["truncated"] is True and meta["maxTotalBytes"] == MAX_TOTAL_BYTES
    assert meta["requested"] == 25 and meta["skipped"] == len(result["skipped"])


def test_multi_get_within_budget_is_not_flagged(engine: Engine, tmp_path: Path) -> None:
    engine.collections.add(str(_big_corpus(tmp_path / "corpus", 3)), name="notes")
    engine.sync()
    result = engine.documents.multi_get(pattern="big/**", max_bytes=DOC_BYTES * 2)
    assert len(result["documents"]) == 3 and result["skipped"] == []
    assert "truncated" not in result["meta"]


async def test_an_answer_over_the_response_bound_is_refused_not_sent() -> None:
    repeat = MAX_RESPONSE_BYTES // 2 // 1000 + 1  # text and structuredContent both carry it
    arguments = {"text": "x" * 1000, "repeat": repeat}
    async with running_gateway(build_app()) as running, httpx.AsyncClient() as client:
        reply = await client.post(
            running.url,
            json=rpc("tools/call", modern_params(name="echo", arguments=arguments)),
            headers=modern_headers("tools/call", "echo"),
            timeout=30,
        )
        error = reply.json()["error"]
        assert error["code"] == -32603
        assert error["data"]["limitBytes"] == MAX_RESPONSE_BYTES
        assert len(reply.content) < 4096
        small = await client.post(
            running.url,
            json=rpc("tools/call", modern_params(name="echo", arguments={"text": "hi"})),
            headers=modern_headers("tools/call", "echo"),
        )
        assert json.loads(small.content)["result"]["structuredContent"]["text"] == "hi"


async def test_freed_answer_memory_is_returned_only_after_a_large_idle_burst() -> None:
    memory = MemoryReturn(threshold=1000)
    memory.answered(600)
    assert not await memory.maybe_release(idle=True)  # not enough went out yet
    memory.answered(600)
    assert not await memory.maybe_release(idle=False)  # requests still running
    assert await memory.maybe_release(idle=True) is (memory.releases == 1)
    assert memory.pending == 0 or memory.releases == 0
