"""Indexing throughput and search latency through the engine API.

Indexes ``fixtures/mcp-docs/corpus`` from scratch into a throwaway index,
re-syncs it with no change, then runs 200 varied queries (words, prefixes,
phrases, hyphen compounds, negations, filters) drawn deterministically from
the corpus headings, and prints the timings.

    python3 bench/bench_engine.py [--queries 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import re
import time

from _common import FIXTURES, describe_ms, temp_engine

from gno_trio.engine import SearchRequest
from gno_trio.errors import GnoError

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")


def build_queries(engine_headings: list[str], count: int, seed: int = 7) -> list[SearchRequest]:
    rng = random.Random(seed)
    words = sorted({w.lower() for h in engine_headings for w in _WORD.findall(h)})
    queries: list[SearchRequest] = []
    while len(queries) < count:
        kind = len(queries) % 6
        picked = rng.sample(words, 3)
        if kind == 0:
            text = picked[0]
        elif kind == 1:
            text = f"{picked[0]} {picked[1]}"
        elif kind == 2:
            text = f'"{picked[0]} {picked[1]}"'
        elif kind == 3:
            text = f"{picked[0]} -{picked[1]}"
        elif kind == 4:
            text = " ".join(picked)
        else:
            text = f"{picked[0][:4]} {picked[1]}"
        queries.append(SearchRequest(query=text, limit=10 if kind % 2 else 5))
    return queries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = FIXTURES / "mcp-docs" / "corpus"
    engine = temp_engine(corpus)
    engine.add_collection(str(corpus), name="mcp")
    started = time.perf_counter()
    (report,) = engine.sync()
    full = time.perf_counter() - started
    started = time.perf_counter()
    (again,) = engine.sync()
    nochange = time.perf_counter() - started
    size_mb = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) / 1e6
    print(f"corpus: {report.scanned} files, {size_mb:.1f} MB")
    print(f"index from scratch: {full:.3f} s ({report.added} added, {len(report.errors)} errors)")
    print(f"no-change re-sync:  {nochange:.3f} s ({again.unchanged} unchanged)")

    with engine.pool.connection() as conn:
        headings = [r[0] for r in conn.execute("SELECT headings_json FROM documents")]
    queries = build_queries(headings, args.queries)
    samples: list[float] = []
    hits = empty = 0
    with engine.pool.connection() as conn:
        for round_no in range(args.rounds):
            for request in queries:
                t0 = time.perf_counter()
                try:
                    result = engine.search(request, conn=conn)
                except GnoError:
                    continue
                elapsed = time.perf_counter() - t0
                if round_no:  # the first round warms caches
                    samples.append(elapsed)
                    hits += len(result["results"])
                    empty += not result["results"]
    print(describe_ms(f"search ({len(queries)} queries x {args.rounds - 1} rounds)", samples))
    print(f"hits returned: {hits}, queries with no hit: {empty}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
