"""Retrieval quality: lexical, vector and hybrid side by side, on every query set.

Indexes the fixture corpora (``gno-evals`` and ``mcp-docs``) into throwaway
indexes (or the ones kept under ``--index-dir``, so a second run skips the
embedding), embeds them with the bundled model, and runs each set of
:mod:`_eval_sets` through BM25 ``search``, vector ``vsearch`` and the hybrid
``query``. For each it prints Recall@5, Recall@10, nDCG@10 (graded 0-3
judgments) and MRR, the queries the hybrid query answers worse than lexical
search, and whether ``query`` >= max(``search``, ``vsearch``) - 0.005 in
nDCG@10 (the target every set is held to).

    python3 bench/eval_retrieval.py [--set known-item] [--only hybrid] [--verbose]
                                    [--index-dir DIR] [--backend tantivy]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import FIXTURES, temp_engine
from _eval_sets import SET_CORPUS, corpus_root, load_sets

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, QueryOptions, SearchRequest
from gno_trio.errors import GnoError

MODES = ("lexical", "vector", "hybrid")
TOLERANCE = 0.005
CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})
Runner = Callable[[str], list[str]]


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


def open_corpus(name: str, index_dir: Path | None, backend: str | None, embed: bool) -> Engine:
    """An engine over one fixture corpus, synced and (unless lexical only) embedded."""
    root = corpus_root(FIXTURES, name)
    if index_dir is None:
        engine = temp_engine(root, backend=backend)
    else:
        base = index_dir / name
        dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
        if backend is not None and not (dirs.config / "index.yml").exists():
            dirs.config.mkdir(parents=True, exist_ok=True)
            (dirs.config / "index.yml").write_text(f"search:\n  backend: {backend}\n", "utf-8")
        engine = Engine.open(dirs=dirs)
    if not any(c.path == root.resolve() for c in engine.config.collections):
        engine.collections.add(str(root.resolve()), name="eval")
    engine.sync()
    if embed:
        run = engine.vectors.embed()
        print(f"{name}: embedded {run.embedded} new chunks with {', '.join(run.models)}")
    return engine


def runners(engine: Engine) -> dict[str, Runner]:
    def ranked(call: Callable[[SearchRequest], dict[str, Any]]) -> Runner:
        def run(text: str) -> list[str]:
            hits = call(SearchRequest(query=text, limit=10))["results"]
            return [h["source"]["relPath"] for h in hits]

        return run

    return {
        "lexical": ranked(engine.search.lexical),
        "vector": ranked(engine.search.vector),
        "hybrid": ranked(lambda r: engine.search.query(r, QueryOptions())),
    }


def evaluate(
    name: str,
    queries: Sequence[dict[str, Any]],
    modes: Sequence[str],
    run_for: Callable[[str], dict[str, Runner]],
    verbose: bool,
) -> dict[str, dict[str, float]]:
    """Each mode's mean figures over the set; prints the table and the target's verdict."""
    table: dict[str, dict[str, float]] = {}
    per_query: dict[str, list[float]] = {}
    cjk: dict[str, list[float]] = {}
    for mode in modes:
        totals = {"r5": 0.0, "r10": 0.0, "ndcg": 0.0, "mrr": 0.0}
        per_query[mode] = []
        for q in queries:
            try:
                ranked = run_for(q["corpus"])[mode](q["query"])
            except GnoError as error:
                print(f"{name} {mode} {q['id']}: {error}", file=sys.stderr)
                ranked = []
            got = scores(ranked, q)
            per_query[mode].append(got["ndcg"])
            if q.get("language") in CJK_LANGUAGES:
                cjk.setdefault(mode, []).append(got["r10"])
            for key in totals:
                totals[key] += got[key]
            if verbose:
                print(
                    f"  {name} {mode:7} {q['id']:>4} ndcg={got['ndcg']:.3f} "
                    f"{q['query'][:60]!r} -> {ranked[:3]}"
                )
        table[mode] = {k: v / len(queries) for k, v in totals.items()}
    print(f"\n{name}: {len(queries)} queries")
    print(f"{'':10}{'Recall@5':>10}{'Recall@10':>11}{'nDCG@10':>9}{'MRR':>7}")
    for mode in modes:
        t = table[mode]
        print(f"{mode:10}{t['r5']:>10.3f}{t['r10']:>11.3f}{t['ndcg']:>9.3f}{t['mrr']:>7.3f}")
    for mode, recalls in cjk.items():
        print(f"CJK ({len(recalls)} queries) Recall@10 {mode}: {sum(recalls) / len(recalls):.3f}")
    if "lexical" in modes and "hybrid" in modes:
        worse = [
            q["id"]
            for q, lex, hyb in zip(queries, per_query["lexical"], per_query["hybrid"], strict=True)
            if hyb < lex - 1e-9
        ]
        print(f"hybrid worse than lexical (nDCG@10) on {len(worse)} queries: {worse}")
    if set(MODES) <= set(modes):
        legs = max(table["lexical"]["ndcg"], table["vector"]["ndcg"])
        verdict = "met" if table["hybrid"]["ndcg"] >= legs - TOLERANCE else "MISSED"
        print(f"target query >= max(search, vsearch) - {TOLERANCE}: {verdict}")
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--only", choices=MODES, action="append")
    parser.add_argument("--set", choices=tuple(SET_CORPUS), action="append", dest="sets")
    parser.add_argument("--index-dir", type=Path, help="keep the indexes here between runs")
    parser.add_argument(
        "--backend", choices=("auto", "fts5", "tantivy"), help="which index ranks documents"
    )
    args = parser.parse_args()
    modes = args.only or list(MODES)
    sets = {k: v for k, v in load_sets(FIXTURES).items() if not args.sets or k in args.sets}
    needed = {q["corpus"] for queries in sets.values() for q in queries}
    engines = {
        corpus: open_corpus(corpus, args.index_dir, args.backend, modes != ["lexical"])
        for corpus in sorted(needed)
    }
    try:
        by_corpus = {corpus: runners(engine) for corpus, engine in engines.items()}
        for name, queries in sets.items():
            evaluate(name, queries, modes, by_corpus.__getitem__, args.verbose)
    finally:
        for engine in engines.values():
            engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
