"""Retrieval quality on the GNO evaluation fixtures.

Indexes ``fixtures/gno-evals/corpus`` into a throwaway index, runs every
query of ``queries.json`` through BM25 search and prints Recall@5,
Recall@10, nDCG@10 (graded 0-3 judgments) and MRR.

    python3 bench/eval_retrieval.py [--verbose]
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from _common import FIXTURES, temp_engine

from gno_trio.engine import SearchRequest
from gno_trio.errors import GnoError


def dcg(gains: list[float]) -> float:
    return sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    corpus = FIXTURES / "gno-evals" / "corpus"
    queries = json.loads((FIXTURES / "gno-evals" / "queries.json").read_text())
    engine = temp_engine(corpus)
    engine.add_collection(str(corpus), name="evals")
    engine.sync()
    r5 = r10 = ndcg = mrr = 0.0
    for q in queries:
        try:
            hits = engine.search(SearchRequest(query=q["query"], limit=10))["results"]
        except GnoError as error:
            print(f"{q['id']}: {error}", file=sys.stderr)
            hits = []
        ranked = [h["source"]["relPath"] for h in hits]
        relevant = set(q["relevantDocs"])
        grades = {j["docid"]: j["relevance"] for j in q.get("judgments", [])}
        r5 += len(relevant & set(ranked[:5])) / len(relevant)
        r10 += len(relevant & set(ranked[:10])) / len(relevant)
        ideal = dcg(sorted(grades.values(), reverse=True)[:10])
        ndcg += dcg([grades.get(d, 0) for d in ranked[:10]]) / ideal if ideal else 0.0
        rank = next((i for i, d in enumerate(ranked, 1) if d in relevant), None)
        mrr += 1 / rank if rank else 0.0
        if args.verbose:
            print(f"{q['id']:>4} rank={rank} {q['query']!r} -> {ranked[:3]}")
    n = len(queries)
    print(f"queries: {n}")
    print(f"Recall@5:  {r5 / n:.3f}")
    print(f"Recall@10: {r10 / n:.3f}")
    print(f"nDCG@10:   {ndcg / n:.3f}")
    print(f"MRR:       {mrr / n:.3f}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
