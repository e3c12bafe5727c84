"""``query``: the general retrieval entry point, run model-free.

With no embedding model, expander or reranker installed, the hybrid pipeline
reduces to its lexical legs: the original query (weight 2.0) plus any
caller-typed ``term`` entries (weight 0.5 each), fused with reciprocal rank
fusion (k = 60) and a small bonus for lists' top hits. The result says so
honestly: ``mode: bm25_only``, ``vectorsUsed: false``, ``expanded: false``,
``reranked: false``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from gno_trio.engine.search.fusion import WEIGHT_BM25, WEIGHT_BM25_VARIANT, fuse
from gno_trio.engine.search.lexical import search
from gno_trio.engine.search.request import SearchRequest
from gno_trio.engine.store.database import Connection
from gno_trio.errors import GnoError

QUERY_MODES = ("term", "intent", "hyde")


@dataclasses.dataclass(frozen=True, slots=True)
class QueryOptions:
    query_modes: Sequence[tuple[str, str]] = ()
    candidate_limit: int | None = None
    fast: bool = False
    thorough: bool = False
    explain: bool = False
    graph: bool = True
    """One-hop expansion over links from the top hits; the lexical-only pipeline has none."""
    expand: bool | None = None
    """Query expansion through the configured endpoint: None tries it unless ``fast``."""
    rerank: bool | None = None
    """Reranking through the configured endpoint: None tries it unless ``fast``."""


def validate_modes(modes: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    cleaned = []
    for mode, text in modes:
        if mode not in QUERY_MODES:
            raise GnoError("INVALID_INPUT", f"Unknown query mode: {mode}")
        if not text.strip():
            raise GnoError("INVALID_INPUT", f"queryModes entry '{mode}' has empty text")
        cleaned.append((mode, text.strip()))
    if sum(1 for mode, _ in cleaned if mode == "hyde") > 1:
        raise GnoError("INVALID_INPUT", "At most one hyde entry is allowed in queryModes")
    return cleaned


def query(conn: Connection, request: SearchRequest, options: QueryOptions) -> dict[str, Any]:
    """Run ``query`` over the lexical legs; returns ``search-results@1.0``."""
    modes = validate_modes(options.query_modes)
    if options.candidate_limit is not None and not 1 <= options.candidate_limit <= 100:
        raise GnoError("INVALID_INPUT", "candidateLimit must be between 1 and 100")
    intents = [text for mode, text in modes if mode == "intent"]
    if intents and not request.scope.intent:
        request = request.within(intent=" ".join(intents))
    terms = [text for mode, text in modes if mode == "term"]
    final_min_score = request.scope.min_score
    unbounded = request.within(min_score=None)
    if not terms:
        result = search(conn, unbounded)
        hits = result["results"]
    else:
        wide = dataclasses.replace(unbounded, limit=min(100, request.limit * 2))
        original = search(conn, wide)
        lists: list[tuple[float, Sequence[dict[str, Any]]]] = [(WEIGHT_BM25, original["results"])]
        for term in terms:
            variant = dataclasses.replace(unbounded, query=term)
            lists.append((WEIGHT_BM25_VARIANT, search(conn, variant)["results"]))
        hits = fuse(lists)[: request.limit]
        result = original
    if final_min_score is not None:
        hits = [h for h in hits if h["score"] >= final_min_score]
    meta = dict(result["meta"])
    meta.update(
        {
            "query": request.query,
            "mode": "bm25_only",
            "totalResults": len(hits),
            "expanded": False,
            "reranked": False,
            "vectorsUsed": False,
            "candidateLimit": options.candidate_limit or (40 if options.thorough else 20),
        }
    )
    if final_min_score is not None:
        meta["minScore"] = final_min_score
    if modes:
        # Counts of term and intent entries; hyde says whether one was given (at most one is).
        meta["queryModes"] = {
            "term": sum(1 for kind, _ in modes if kind == "term"),
            "intent": sum(1 for kind, _ in modes if kind == "intent"),
            "hyde": any(kind == "hyde" for kind, _ in modes),
        }
    if options.explain:
        meta["explain"] = {
            "lines": [
                {
                    "stage": "lexical",
                    "message": f"BM25 original query plus {len(terms)} term entries",
                },
                {"stage": "vector", "message": "skipped: no embedding model available"},
                {"stage": "expansion", "message": "skipped: no expansion model available"},
                {"stage": "rerank", "message": "skipped: no reranker available"},
            ],
            "results": [
                {"rank": i, "docid": h["docid"], "score": h["score"]} for i, h in enumerate(hits, 1)
            ],
        }
    return {"results": hits, "meta": meta}
