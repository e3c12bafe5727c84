"""``query``: hybrid retrieval, BM25 and vectors fused, one hop of links added.

The steps, as GNO runs them (GNO's numbers throughout):

1. Depth: ``fast`` skips graph expansion; ``thorough`` raises the candidate
   limit to 40. No expander or reranker runs here, so ``expanded`` and
   ``reranked`` are always false, and said so.
2. Strong-signal check: with no intent and no caller-typed entries, a BM25
   top hit that stands out (sigmoid-normalised score >= 0.84, >= 0.14 ahead of
   the second) means the words themselves answered the question. GNO skips
   query expansion then; with no expander, what is skipped here is the
   vector leg, so such a query answers exactly as lexical search would.
3. Legs: BM25 of the query (limit x 2 x m, weight 2.0), BM25 of each ``term``
   entry (limit x m, 0.5), vectors of the query (limit x 2 x m, 2.0) and of
   the ``hyde`` passage, embedded as a document (limit x m, 0.7); m = 3 when
   filters prune after retrieval or recency reorders, else 1. ``intent``
   entries join the intent, which steers which chunk represents a document.
4. Reciprocal rank fusion, k = 60, over documents; +0.1 for a document first
   in the query's own BM25 or vector list, else +0.04 for one in their top
   five. BM25 hits that match only some of the query's words (lexical
   search's top-up) are fused as a variant (0.5, no bonus).
5. Graph: neighbours of the five best fused documents (up to 20) fused in
   with weight 0.8, unless ``fast`` or the graph is turned off.
6. Scores are min-max normalised over the answer; ``minScore`` and
   ``limit`` apply last.

Without stored vectors for the configured model (or with a model that
cannot run) the query is the model-free one of :mod:`.hybrid`,
byte for byte, flagged ``bm25_only``.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gno_trio.engine.search import chunkkeeper
from gno_trio.engine.search import graph_expansion as graph_leg
from gno_trio.engine.search import hybrid as lexical_query
from gno_trio.engine.search.fusion import (
    RRF_K,
    WEIGHT_BM25,
    WEIGHT_BM25_VARIANT,
    WEIGHT_HYDE,
    WEIGHT_VECTOR,
    Candidate,
    Fusion,
    strong_signal,
)
from gno_trio.engine.search.hybrid import QUERY_MODES, QueryOptions, validate_modes
from gno_trio.engine.search.legs import expand_graph, graph_line, lexical_hits, vector_results
from gno_trio.engine.search.lexical import (
    rank_documents,
)
from gno_trio.engine.search.querygrammar import parse_query, wants_recency
from gno_trio.engine.search.request import SearchRequest, validate_request
from gno_trio.engine.search.results import echo_filters, normalise_scores
from gno_trio.engine.search.semantic import query_vector as checked_query
from gno_trio.engine.search.semantic import vector_leg
from gno_trio.engine.vectors.available import StoredVectors, stored_vectors
from gno_trio.engine.vectors.embedder import EmbeddingBackend, embed_passage
from gno_trio.engine.vectors.index import VectorMatrix
from gno_trio.errors import GnoError


def _post_filters(request: SearchRequest) -> bool:
    return bool(
        request.tags_all
        or request.tags_any
        or request.since
        or request.until
        or request.categories
        or request.author
        or request.exclude
        or request.min_score is not None
    )


@dataclass(slots=True)
class PipelineRun:
    """What one run of the hybrid pipeline decided, before the answer is cut to the limit.

    ``query`` formats it; ``query-diagnose`` reads the same run to say where
    one document stood at each stage, so the two can never disagree.
    """

    request: SearchRequest  # the caller's, intents joined, minScore lifted
    matrix: VectorMatrix
    query_vector: npt.NDArray[np.float32]
    steer: npt.NDArray[np.float32] | None
    wide: int
    narrow: int
    terms: list[str]
    intents: list[str]
    hyde: str | None
    bypass: bool
    strong: bool
    fused: list[Candidate]  # fusion order before graph expansion
    ranked: list[Candidate]  # the final order (graph fused in, bypass applied), uncut
    expansion: graph_leg.GraphExpansion
    graph_wanted: bool
    lines: list[dict[str, str]]


def checked_vectors(
    conn: sqlite3.Connection, backend: EmbeddingBackend | None, request: SearchRequest
) -> tuple[StoredVectors | None, npt.NDArray[np.float32] | None, str | None]:
    """The model's stored vectors and the query's vector, or why there are none.

    An empty query is the caller's error and raises; any other failure (no
    vectors yet, a model that cannot answer) leaves the query lexical.
    """
    if backend is None:
        return None, None, None
    try:
        stored = StoredVectors(*stored_vectors(conn, backend))
        return stored, checked_query(backend, stored.model, request.query), None
    except GnoError as error:
        if error.code == "INVALID_INPUT":
            raise
        return None, None, f"{error.code}: {error.message}"


def validate_options(options: QueryOptions) -> None:
    """``INVALID_INPUT`` for query modes or a candidate limit the pipeline cannot take."""
    validate_modes(options.query_modes)
    if options.candidate_limit is not None and not 1 <= options.candidate_limit <= 100:
        raise GnoError("INVALID_INPUT", "candidateLimit must be between 1 and 100")


def hybrid_query(
    conn: sqlite3.Connection,
    request: SearchRequest,
    options: QueryOptions,
    backend: EmbeddingBackend | None,
    *,
    unavailable: str | None = None,
) -> dict[str, Any]:
    """Run ``query``; returns ``search-results@1.0`` (``hybrid``, or ``bm25_only``)."""
    validate_request(request)
    validate_options(options)
    stored, query_vector, failed = checked_vectors(conn, backend, request)
    if backend is None or stored is None or query_vector is None:
        result = lexical_query.query(conn, request, options)
        unavailable = failed or unavailable
        if unavailable and options.explain:
            result["meta"]["explain"]["lines"][1]["message"] = f"skipped: {unavailable}"
        return result
    run = run_pipeline(conn, request, options, backend, stored, query_vector)
    return _answer(run, request.min_score, options)


def run_pipeline(
    conn: sqlite3.Connection,
    request: SearchRequest,
    options: QueryOptions,
    backend: EmbeddingBackend,
    stored: StoredVectors,
    query_vector: npt.NDArray[np.float32],
) -> PipelineRun:
    """The legs, the fusion and the graph step for a request already validated."""
    model, matrix = stored.model, stored.matrix
    modes = validate_modes(options.query_modes)
    intents = [text for mode, text in modes if mode == "intent"]
    if intents and not request.intent:
        request = dataclasses.replace(request, intent=" ".join(intents))
    terms = [text for mode, text in modes if mode == "term"]
    hyde = next((text for mode, text in modes if mode == "hyde"), None)
    unbounded = dataclasses.replace(request, min_score=None)
    m = 3 if _post_filters(request) or wants_recency(request.query) else 1
    wide = min(100, request.limit * 2 * m)
    narrow = min(100, request.limit * m)
    lines: list[dict[str, str]] = []

    held = chunkkeeper.current(conn)
    raw = [
        score for _, score in rank_documents(conn, parse_query(request.query), unbounded, 5, held)
    ]
    strong, top, gap = strong_signal(raw)
    bypass = strong and not request.intent and not modes
    fusion = Fusion()
    bm25, partial = lexical_hits(conn, dataclasses.replace(unbounded, limit=wide))
    fusion.add(WEIGHT_BM25, bm25)
    fusion.add(WEIGHT_BM25_VARIANT, partial, bonus=False)
    for result, _ in bm25 + partial:
        fusion.candidates[result["uri"]].bm25 = result["score"]
    lines.append(
        {
            "stage": "lexical",
            "message": f"bm25: {len(bm25)} candidates matching every term, {len(partial)} "
            f"matching some, plus {len(terms)} term entries",
        }
    )
    for term in terms:
        strict, loose = lexical_hits(conn, dataclasses.replace(unbounded, query=term, limit=narrow))
        fusion.add(WEIGHT_BM25_VARIANT, strict + loose, bonus=False)
    strength = f"top={top:.2f}, gap={gap:.2f}"
    wants_graph = options.graph and not options.fast
    steer = (
        _embedded(lambda: checked_query(backend, model, request.intent or ""))
        if request.intent and request.intent.strip() and not bypass
        else None
    )
    if bypass:
        lines.append(
            {
                "stage": "vector",
                "message": f"skipped: strong lexical signal ({strength}); lexical order kept",
            }
        )
    else:
        vector = vector_results(
            conn,
            model.id,
            vector_leg(conn, matrix, query_vector, unbounded, wide, steer=steer),
            unbounded,
        )
        fusion.add(WEIGHT_VECTOR, [(r, d) for r, d, _ in vector])
        for result, _, score in vector:
            fusion.candidates[result["uri"]].vector = score
        message = f"vector: {len(vector)} candidates (model {backend.identity.uri})"
        hyde_vector = _embedded(lambda: embed_passage(backend, hyde)) if hyde else None
        if hyde_vector is not None:
            passage = vector_leg(conn, matrix, hyde_vector, unbounded, narrow, steer=steer)
            fusion.add(
                WEIGHT_HYDE,
                [(r, d) for r, d, _ in vector_results(conn, model.id, passage, unbounded)],
                bonus=False,
            )
            message += f"; hyde: {len(passage)} candidates"
        elif hyde:
            message += "; hyde: skipped (the model did not answer)"
        lines.append({"stage": "vector", "message": message})
    lines.append(
        {
            "stage": "fusion",
            "message": f"RRF k={RRF_K}, {len(fusion.candidates)} unique candidates "
            f"(strong signal: {'yes' if strong else 'no'}, {strength})",
        }
    )
    fused = fusion.ranked()
    expansion = (
        expand_graph(conn, fusion, unbounded, matrix, query_vector, options.candidate_limit)
        if wants_graph
        else graph_leg.disabled()
    )
    lines.append({"stage": "graph", "message": graph_line(expansion)})
    lines.append({"stage": "expansion", "message": "skipped: no expansion model available"})
    lines.append({"stage": "rerank", "message": "skipped: no reranker available"})

    ranked = fusion.ranked()
    if bypass:  # the lexical order stands; graph neighbours may follow it
        lexical = [c for c in ranked if c.bm25 is not None]
        lexical.sort(key=lambda c: -(c.bm25 or 0.0))
        ranked = lexical + [c for c in ranked if c.bm25 is None]
    return PipelineRun(
        request=unbounded,
        matrix=matrix,
        query_vector=query_vector,
        steer=steer,
        wide=wide,
        narrow=narrow,
        terms=terms,
        intents=intents,
        hyde=hyde,
        bypass=bypass,
        strong=strong,
        fused=fused,
        ranked=ranked,
        expansion=expansion,
        graph_wanted=wants_graph,
        lines=lines,
    )


def final_scores(run: PipelineRun, limit: int) -> list[tuple[Candidate, float]]:
    """The answer before ``minScore``: the first ``limit`` candidates, scores min-max scaled."""
    ranked = run.ranked[:limit]
    return list(zip(ranked, normalise_scores([c.fusion + c.bonus for c in ranked]), strict=True))


def _answer(run: PipelineRun, min_score: float | None, options: QueryOptions) -> dict[str, Any]:
    kept = [
        (c, s)
        for c, s in final_scores(run, run.request.limit)
        if min_score is None or s >= min_score
    ]
    results = [dict(c.result, score=round(s, 6)) for c, s in kept]
    meta: dict[str, Any] = {
        "query": run.request.query,
        "mode": "hybrid",
        "totalResults": len(results),
    }
    echo_filters(meta, run.request)
    meta.update(
        {
            "expanded": False,
            "reranked": False,
            "vectorsUsed": not run.bypass,
            "candidateLimit": options.candidate_limit or (40 if options.thorough else 20),
            "graphExpansion": run.expansion.meta(),
        }
    )
    if min_score is not None:
        meta["minScore"] = min_score
    if options.query_modes:
        meta["queryModes"] = query_modes_meta(run)
    if options.explain:
        meta["explain"] = {
            "lines": run.lines,
            "results": [_explain_result(i, c, s) for i, (c, s) in enumerate(kept, 1)],
        }
    return {"results": results, "meta": meta}


def query_modes_meta(run: PipelineRun) -> dict[str, Any]:
    return {"term": len(run.terms), "intent": len(run.intents), "hyde": run.hyde is not None}


def _embedded(
    make: Callable[[], npt.NDArray[np.float32]],
) -> npt.NDArray[np.float32] | None:
    """An extra vector (intent, hyde) or None when the model fails: it only refines."""
    try:
        return make()
    except GnoError:
        return None


def _explain_result(rank: int, candidate: Candidate, score: float) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "rank": rank,
        "docid": candidate.result["docid"],
        "score": round(score, 6),
        "fusionScore": round(candidate.fusion + candidate.bonus, 6),
    }
    if candidate.bm25 is not None:
        entry["bm25Score"] = round(candidate.bm25, 6)
    if candidate.vector is not None:
        entry["vecScore"] = round(candidate.vector, 6)
    return entry


__all__ = ["QUERY_MODES", "PipelineRun", "hybrid_query", "run_pipeline", "strong_signal"]
