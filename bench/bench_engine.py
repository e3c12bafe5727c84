"""Indexing throughput and search latency through the engine API.

Indexes ``fixtures/mcp-docs/corpus`` from scratch into a throwaway index,
re-syncs it with no change, then times ``--queries`` varied searches drawn
from the corpus headings in nine kinds (see ``_queries.py``): words,
phrases, negations, prefixes and filters. Every query finds something and
every query text is different, more of them than the parse cache holds; the
timed rounds check again that every query returned results (a query that
finds nothing costs a fraction of one that does and would flatter the
figures). Each query also runs on the FTS5 ranking floor (``_floor.py``:
the document index's rows in a contentless table, ranked with the same
MATCH strings, nothing else done), alternating which goes first, and the
ratios to it are printed.

    python3 bench/bench_engine.py [--queries 1200] [--rounds 3] [--backend tantivy] [--phases]
                                  [--chunk-memory off]

The engine holds its chunk index in memory, as the resident gateways do
(``--chunk-memory off``: as a one-shot CLI command runs); the build is
waited for and timed before any search is.

``--phases`` also prints where each timed search's CPU time went (document
ranking, best chunk, snippets, the rest), on average, over the slowest 5 %
and for the slowest searches one by one (see ``_phases.py``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _common import FIXTURES, describe_ms, percentile, temp_engine
from _floor import RankingFloor, copy_document_index, open_floor
from _queries import DEFAULT_COUNT, KINDS, build_queries, check_uncached

from gno_trio.engine import SearchRequest

COLLECTION = "mcp"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--rounds", type=int, default=3, help="the first round warms up")
    parser.add_argument(
        "--backend", choices=("auto", "fts5", "tantivy"), help="which index ranks documents"
    )
    parser.add_argument(
        "--phases", action="store_true", help="CPU time per search phase, slowest searches"
    )
    parser.add_argument(
        "--chunk-memory",
        choices=("on", "off"),
        default="on",
        help="hold the chunk index in memory, as the resident gateways do (default: on)",
    )
    args = parser.parse_args()
    if args.phases:
        import _phases

        _phases.install()
    phased: list[tuple[str, str, float, dict[str, float]]] = []
    corpus = FIXTURES / "mcp-docs" / "corpus"
    engine = temp_engine(corpus, backend=args.backend)
    engine.collections.add(str(corpus), name=COLLECTION)
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

    if args.chunk_memory == "on":  # as every serving process runs
        engine.search.hold_chunk_index()
        started = time.perf_counter()
        held = engine.search.chunk_index_held(timeout=120)
        print(
            f"chunk index in memory: {'built' if held else 'NOT built'} in "
            f"{time.perf_counter() - started:.3f} s (a background build, as in the server)"
        )
    queries, redrawn = build_queries(engine, args.queries, collection=COLLECTION)
    distinct = check_uncached([request.query for _, request in queries])
    print(
        f"queries: {len(queries)} in {len(KINDS)} kinds, each finding something "
        f"({redrawn} drawn that found nothing were replaced; {distinct} distinct texts)"
    )
    floor_dir = tempfile.TemporaryDirectory(prefix="gno-bench-floor-")
    floor_conn = open_floor(str(Path(floor_dir.name) / "floor.sqlite"))
    with engine.connection() as conn:
        copied = copy_document_index(conn, floor_conn)
    print(f"floor: {copied} rows of the document index in a contentless FTS5 table")
    floor = RankingFloor(floor_conn)
    floor_samples: list[float] = []
    samples: list[float] = []
    by_kind: dict[str, list[float]] = defaultdict(list)
    hits = 0
    with engine.connection() as conn:
        for round_no in range(args.rounds):
            for number, (kind, request) in enumerate(queries):
                floor_first = (number + round_no) % 2 == 1
                if floor_first:
                    floor_samples += _timed_floor(floor, request, round_no)
                if args.phases:
                    _phases.start()
                c0 = time.thread_time()
                t0 = time.perf_counter()
                result = engine.search.lexical(request)
                elapsed = time.perf_counter() - t0
                cpu = time.thread_time() - c0
                if not result["results"]:
                    raise SystemExit(f"query {request.query!r} ({kind}) found nothing")
                if not floor_first:
                    floor_samples += _timed_floor(floor, request, round_no)
                if round_no:  # the first round warms caches
                    samples.append(elapsed)
                    by_kind[kind].append(elapsed)
                    hits += len(result["results"])
                    if args.phases:
                        phased.append((kind, request.query, cpu * 1000, _phases.split(cpu)))
    print(describe_ms(f"search ({len(queries)} queries x {args.rounds - 1} rounds)", samples))
    print(f"  max {max(samples) * 1000:.3f} ms; hits returned {hits}; every query found something")
    for kind in KINDS:
        values = [s * 1000 for s in by_kind[kind]]
        print(
            f"  {kind:<18} n={len(values):>4} p50={percentile(values, 50):.3f} ms "
            f"p99={percentile(values, 99):.3f} ms"
        )
    print(describe_ms("FTS5 ranking floor, same queries", floor_samples))
    print(
        "  gno-trio / floor: "
        + ", ".join(
            f"{name} {percentile(samples, q) / percentile(floor_samples, q):.2f}x"
            for name, q in (("p50", 50), ("p95", 95), ("p99", 99))
        )
        + f", mean {statistics.fmean(samples) / statistics.fmean(floor_samples):.2f}x"
    )
    if args.phases:
        _phases.report(phased)
    engine.close()
    floor_conn.close()
    floor_dir.cleanup()
    return 0


def _timed_floor(floor: RankingFloor, request: SearchRequest, round_no: int) -> list[float]:
    """The floor's time for one query, kept after the warm-up round."""
    started = time.perf_counter()
    floor.search(request.query, request.limit)
    elapsed = time.perf_counter() - started
    return [elapsed] if round_no else []


if __name__ == "__main__":
    raise SystemExit(main())
