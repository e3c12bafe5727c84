"""Retrieval quality: lexical, vector and hybrid side by side.

Indexes ``fixtures/gno-evals/corpus`` into a throwaway index, embeds it with
the bundled model, and runs two query sets through BM25 search, vector
search and the hybrid query:

* ``gno-evals``: the fixture's own 29 graded queries;
* ``cross-lingual``: ``bench/crosslingual_queries.json``, 30 questions asked in
  zh/ja/ko/de/es/fr about documents written in other languages, judged by hand.

For each it prints Recall@5, Recall@10, nDCG@10 (graded 0-3 judgments) and
MRR, and how many queries the hybrid query answers worse than lexical search
(by nDCG@10).

    python3 bench/eval_retrieval.py [--verbose] [--only lexical] [--backend tantivy]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import FIXTURES, temp_engine

from gno_trio.engine import QueryOptions, SearchRequest
from gno_trio.errors import GnoError

CROSS_LINGUAL = Path(__file__).with_name("crosslingual_queries.json")
MODES = ("lexical", "vector", "hybrid")


def dcg(gains: Sequence[float]) -> float:
    return sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))


def scores(ranked: Sequence[str], query: dict[str, Any]) -> dict[str, float]:
    grades = {j["docid"]: j["relevance"] for j in query.get("judgments", [])}
    relevant = set(query.get("relevantDocs") or [d for d, g in grades.items() if g >= 3])
    ideal = dcg(sorted(grades.values(), reverse=True)[:10])
    rank = next((i for i, d in enumerate(ranked, 1) if d in relevant), None)
    return {
        "r5": len(relevant & set(ranked[:5])) / len(relevant),
        "r10": len(relevant & set(ranked[:10])) / len(relevant),
        "ndcg": dcg([grades.get(d, 0) for d in ranked[:10]]) / ideal if ideal else 0.0,
        "mrr": 1 / rank if rank else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--only", choices=MODES, action="append")
    parser.add_argument(
        "--backend", choices=("auto", "fts5", "tantivy"), help="which index ranks documents"
    )
    args = parser.parse_args()
    modes = args.only or list(MODES)
    corpus = FIXTURES / "gno-evals" / "corpus"
    sets = {
        "gno-evals": json.loads((FIXTURES / "gno-evals" / "queries.json").read_text()),
        "cross-lingual": json.loads(CROSS_LINGUAL.read_text())["queries"],
    }
    engine = temp_engine(corpus, backend=args.backend)
    engine.add_collection(str(corpus), name="evals")
    engine.sync()
    with engine.connection() as conn:
        if modes != ["lexical"]:
            run = engine.embed(conn=conn)
            print(f"embedded {run.embedded} chunks with {', '.join(run.models)}")
        runners: dict[str, Callable[[str], dict[str, Any]]] = {
            "lexical": lambda q: engine.search(SearchRequest(query=q, limit=10), conn=conn),
            "vector": lambda q: engine.vsearch(SearchRequest(query=q, limit=10), conn=conn),
            "hybrid": lambda q: engine.query(
                SearchRequest(query=q, limit=10), QueryOptions(), conn=conn
            ),
        }
        for name, queries in sets.items():
            table: dict[str, dict[str, float]] = {}
            per_query: dict[str, list[float]] = {}
            for mode in modes:
                totals = {"r5": 0.0, "r10": 0.0, "ndcg": 0.0, "mrr": 0.0}
                per_query[mode] = []
                for q in queries:
                    try:
                        hits = runners[mode](q["query"])["results"]
                    except GnoError as error:
                        print(f"{name} {mode} {q['id']}: {error}", file=sys.stderr)
                        hits = []
                    ranked = [h["source"]["relPath"] for h in hits]
                    got = scores(ranked, q)
                    per_query[mode].append(got["ndcg"])
                    for key in totals:
                        totals[key] += got[key]
                    if args.verbose:
                        print(
                            f"  {name} {mode:7} {q['id']:>4} ndcg={got['ndcg']:.3f} "
                            f"{q['query']!r} -> {ranked[:3]}"
                        )
                table[mode] = {k: v / len(queries) for k, v in totals.items()}
            print(f"\n{name}: {len(queries)} queries")
            print(f"{'':10}{'Recall@5':>10}{'Recall@10':>11}{'nDCG@10':>9}{'MRR':>7}")
            for mode in modes:
                t = table[mode]
                print(
                    f"{mode:10}{t['r5']:>10.3f}{t['r10']:>11.3f}{t['ndcg']:>9.3f}{t['mrr']:>7.3f}"
                )
            if "lexical" in modes and "hybrid" in modes:
                worse = [
                    q["id"]
                    for q, lex, hyb in zip(
                        queries, per_query["lexical"], per_query["hybrid"], strict=True
                    )
                    if hyb < lex - 1e-9
                ]
                print(f"hybrid worse than lexical (nDCG@10) on {len(worse)} queries: {worse}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
