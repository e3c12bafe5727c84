"""A serving process's requests free what they make as they return.

Objects caught in reference cycles are freed only by Python's cycle
collector. Its passes stall the server: a full pass over a held index's heap
takes tens of milliseconds. If each request left cycles behind, those passes
would come every few hundred requests. These tests drive the real server
over in-process stdio in both eras, and hold it to leaving no cyclic garbage
at all once its first requests have filled its lasting caches.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from gno_trio.engine import Engine
from gno_trio.engine.search import docmemory
from tests.support.in_process_stdio import Conversation, serving

QUERIES = ["quokka", "kubernetes land", '"decision record"', "zebra -banana", "narwh", "alpha"]


@contextmanager
def collector_off() -> Iterator[None]:
    """Collect what is garbage now, then keep the collector off (its count is the test's)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def _searches(client: Conversation) -> None:
    for query in QUERIES:
        await client.ok("gno_search", {"query": query, "limit": 5})


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_searches_over_stdio_leave_no_reference_cycles(indexed: Engine, era: str) -> None:
    indexed.search.hold_chunk_index()
    assert indexed.search.chunk_index_held(timeout=60)
    async with serving(indexed, write=False) as (client, _):
        if era == "legacy":
            await client.open_legacy({"name": "cycles", "version": "1"})
        else:
            await client.open_modern({"name": "cycles", "version": "1"})
        await client.tools()
        await _searches(client)  # the first calls may fill caches that last
        docmemory.parse.cache_clear()  # every expression is parsed afresh below
        with collector_off():
            for _ in range(3):
                await _searches(client)
            assert gc.collect() == 0, "unreachable objects in reference cycles"
