"""Indexing throughput and search latency through the engine API.

Indexes ``fixtures/mcp-docs/corpus`` from scratch into a throwaway index,
re-syncs it with no change, then times ``--queries`` varied searches. Each
query is drawn (seeded) from the headings of one indexed document, so it is
about something the corpus holds, in nine kinds taken in turn:

* one word; two words; three words (of one heading, so they co-occur);
* an exact phrase (two adjacent heading words, quoted);
* a word with a negation (``word -other``, the other word from elsewhere);
* a prefix (``auth*``-style: the first four letters of a word) and a word;
* a word with a filter: the collection, a URI prefix (the document's own
  folder), or an excluded phrase plus a ``since`` date.

Every query is run once before timing and kept only if it finds something;
the number dropped and redrawn is printed, and the timed rounds check again
that every query returned results (a query that finds nothing costs a
fraction of one that does and would flatter the figures).

    python3 bench/bench_engine.py [--queries 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import defaultdict
from pathlib import PurePosixPath

from _common import FIXTURES, describe_ms, percentile, temp_engine

from gno_trio.engine import Engine, SearchRequest
from gno_trio.errors import GnoError

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
KINDS = (
    "one word",
    "two words",
    "phrase",
    "negation",
    "three words",
    "prefix",
    "collection filter",
    "uri prefix filter",
    "exclude + since",
)
COLLECTION = "mcp"


def _draw(
    kind: str, rng: random.Random, heading: list[str], folder: str, vocabulary: list[str]
) -> SearchRequest | None:
    """One request of ``kind`` from one document's heading words, or None if it has too few."""
    limit = rng.choice((5, 10))
    if kind in ("two words", "phrase", "prefix") and len(heading) < 2:
        return None
    if kind == "three words" and len(heading) < 3:
        return None
    first = rng.randrange(len(heading))
    word = heading[first]
    if kind == "one word":
        return SearchRequest(query=word, limit=limit)
    if kind == "two words":
        return SearchRequest(query=" ".join(rng.sample(heading, 2)), limit=limit)
    if kind == "three words":
        return SearchRequest(query=" ".join(rng.sample(heading, 3)), limit=limit)
    if kind == "phrase":
        start = rng.randrange(len(heading) - 1)
        return SearchRequest(query=f'"{heading[start]} {heading[start + 1]}"', limit=limit)
    if kind == "negation":
        other = rng.choice([w for w in vocabulary if w not in heading])
        return SearchRequest(query=f"{word} -{other}", limit=limit)
    if kind == "prefix":
        other = rng.choice([w for w in heading if w != word] or [word])
        return SearchRequest(query=f"{word[:4]} {other}", limit=limit)
    if kind == "collection filter":
        return SearchRequest(query=word, limit=limit, collection=COLLECTION)
    if kind == "uri prefix filter":
        return SearchRequest(query=word, limit=limit, uri_prefix=f"gno://{COLLECTION}/{folder}")
    other = rng.choice([w for w in vocabulary if w not in heading])
    return SearchRequest(query=word, limit=limit, exclude=[other], since="2000-01-01")


def build_queries(
    engine: Engine, count: int, seed: int = 7
) -> tuple[list[tuple[str, SearchRequest]], int]:
    """``count`` (kind, request) pairs that each find something, and how many were redrawn."""
    with engine.connection() as conn:
        documents = [
            (str(PurePosixPath(rel).parent), json.loads(headings))
            for rel, headings in conn.execute(
                "SELECT rel_path, headings_json FROM documents WHERE active = 1 ORDER BY rel_path"
            )
        ]
    headings = [
        (folder, words)
        for folder, heads in documents
        for head in heads
        if (words := list(dict.fromkeys(w.lower() for w in _WORD.findall(str(head)))))
    ]
    vocabulary = sorted({w for _, words in headings for w in words})
    rng = random.Random(seed)
    chosen: list[tuple[str, SearchRequest]] = []
    redrawn = 0
    while len(chosen) < count:
        kind = KINDS[len(chosen) % len(KINDS)]
        folder, words = rng.choice(headings)
        request = _draw(kind, rng, words, "" if folder == "." else folder + "/", vocabulary)
        if request is None:
            continue
        try:
            found = engine.search(request)["results"]
        except GnoError:
            found = []
        if found:
            chosen.append((kind, request))
        else:
            redrawn += 1
    return chosen, redrawn


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="the first round warms up")
    args = parser.parse_args()
    corpus = FIXTURES / "mcp-docs" / "corpus"
    engine = temp_engine(corpus)
    engine.add_collection(str(corpus), name=COLLECTION)
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

    queries, redrawn = build_queries(engine, args.queries)
    print(
        f"queries: {len(queries)} in {len(KINDS)} kinds, each finding something "
        f"({redrawn} drawn that found nothing were replaced)"
    )
    samples: list[float] = []
    by_kind: dict[str, list[float]] = defaultdict(list)
    hits = 0
    with engine.connection() as conn:
        for round_no in range(args.rounds):
            for kind, request in queries:
                t0 = time.perf_counter()
                result = engine.search(request, conn=conn)
                elapsed = time.perf_counter() - t0
                if not result["results"]:
                    raise SystemExit(f"query {request.query!r} ({kind}) found nothing")
                if round_no:  # the first round warms caches
                    samples.append(elapsed)
                    by_kind[kind].append(elapsed)
                    hits += len(result["results"])
    print(describe_ms(f"search ({len(queries)} queries x {args.rounds - 1} rounds)", samples))
    print(f"  max {max(samples) * 1000:.3f} ms; hits returned {hits}; every query found something")
    for kind in KINDS:
        values = [s * 1000 for s in by_kind[kind]]
        print(
            f"  {kind:<18} n={len(values):>4} p50={percentile(values, 50):.3f} ms "
            f"p99={percentile(values, 99):.3f} ms"
        )
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
