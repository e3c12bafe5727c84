"""A serving process at rest gives back what its calls left resident.

Pages of the index a connection read through its memory map stay in the
process's resident set for as long as the connection keeps its map: tens of
MiB after a vector load or a few searches, in every ``gno-trio mcp`` an
editor keeps open. ``Engine.rest`` lets them go; the runtime calls it once
the engine calls stopped for a moment.
"""

from __future__ import annotations

from pathlib import Path

import trio

from gno_trio.engine import Engine, SearchRequest
from gno_trio.runtime import REST_AFTER_S, Runtime


def _mapped_kib(path: Path) -> int:
    """Resident KiB of this process's maps of ``path``."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and not fields[0].endswith(":"):
                inside = fields[-1] == str(path)
            elif inside and fields[0] == "Rss:":
                total += int(fields[1])
    return total


def _search(engine: Engine) -> None:
    assert engine.search.lexical(SearchRequest(query="kubernetes"))["results"]


def test_rest_lets_go_of_the_index_pages_searches_mapped(indexed: Engine) -> None:
    db = indexed.location.db_path.resolve()
    _search(indexed)
    assert _mapped_kib(db) > 0
    indexed.rest()
    assert _mapped_kib(db) == 0
    _search(indexed)  # the connections map again what they read
    assert _mapped_kib(db) > 0


async def test_the_runtime_rests_the_engine_once_calls_stop(indexed: Engine) -> None:
    db = indexed.location.db_path.resolve()
    runtime = Runtime(engine=indexed)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.rest_when_idle)
        for _ in range(3):
            await runtime.run(lambda: indexed.search.lexical(SearchRequest(query="kubernetes")))
        assert _mapped_kib(db) > 0
        with trio.fail_after(30 + REST_AFTER_S):
            while _mapped_kib(db) > 0:
                await trio.sleep(0.1)
        nursery.cancel_scope.cancel()
