"""A serving process holds a bounded share of its index, and gives it back at rest.

Reads go through each connection's page cache, never a memory map of the
index file: mapped pages count in the process's resident memory up to the
whole map (180 MiB of a warm ``gno-trio mcp`` on 100,000 documents). What the
page caches hold after a vector load or a few searches, ``Engine.rest`` lets
go; the runtime calls it once the engine calls stopped for a moment.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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


def _sqlite_bytes() -> int:
    """What the SQLite library of this process holds now (its page caches among it)."""
    library = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
    library.sqlite3_memory_used.restype = ctypes.c_int64
    return int(library.sqlite3_memory_used())


def _search(engine: Engine, query: str = "kubernetes") -> list[str]:
    found = engine.search.lexical(SearchRequest(query=query))["results"]
    assert found
    return [hit["uri"] for hit in found]


def test_searches_map_none_of_the_index_file(indexed: Engine) -> None:
    db = indexed.location.db_path.resolve()
    for query in ("kubernetes", "banana", "giraffes"):
        _search(indexed, query)
    assert _mapped_kib(db) == 0


def test_rest_lets_go_of_the_pages_searches_cached(indexed: Engine) -> None:
    before = _search(indexed)
    cached = _sqlite_bytes()
    indexed.rest()
    # Left: the connections' schemas and statements (a page of the file is 4 KiB).
    assert _sqlite_bytes() < cached - 16_384
    assert _search(indexed) == before  # read again from the file


async def test_the_runtime_rests_the_engine_once_calls_stop(indexed: Engine) -> None:
    runtime = Runtime(engine=indexed)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.rest_when_idle)
        for _ in range(3):
            await runtime.run(lambda: indexed.search.lexical(SearchRequest(query="kubernetes")))
        cached = _sqlite_bytes()
        with trio.fail_after(30 + REST_AFTER_S):
            while _sqlite_bytes() >= cached - 16_384:
                await trio.sleep(0.1)
        nursery.cancel_scope.cancel()
