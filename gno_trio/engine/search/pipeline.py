"""``query``: hybrid retrieval, BM25 and vectors fused by their evidence, links added.

The steps:

1. Depth: ``fast`` skips graph expansion; ``thorough`` raises the candidate
   limit to 40. No expander or reranker runs here, so ``expanded`` and
   ``reranked`` are always false, and said so.
2. Legs, every one of them whenever vectors are stored: BM25 of the query
   (limit x 2 x m; documents matching only some words included), BM25 of each
   ``term`` entry (limit x m), vectors of the query (limit x 2 x m) and of the
   ``hyde`` passage, embedded as a document (limit x m); m = 3 when filters
   prune after retrieval or recency reorders, else 1. ``intent`` entries join
   the intent, which steers which chunk represents a document.
3. Evidence-weighted fusion (:mod:`.evidence`): every candidate's raw BM25
   and its best chunk's cosine, min-max normalised over the candidates, mixed
   with BM25 weighted by the query's lexical coverage.
4. Graph: neighbours of the five best fused documents (up to 20) join the
   candidates and everything is weighed again, unless ``fast`` or the graph
   is turned off.
5. Scores are min-max normalised over the answer; ``minScore`` and
   ``limit`` apply last.

Without stored vectors for the configured model (or with a model that
cannot run) the query is the model-free one of :mod:`.hybrid`,
byte for byte, flagged ``bm25_only``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gno_trio.engine.search import chunkkeeper, refine
from gno_trio.engine.search import graph_expansion as graph_leg
from gno_trio.engine.search import hybrid as lexical_query
from gno_trio.engine.search.docrankers import document_ranker
from gno_trio.engine.search.evidence import (
    EVIDENCE_DEPTH,
    LexicalEvidence,
    lexical_evidence,
    lexical_weight,
    weigh,
)
from gno_trio.engine.search.finevectors import rescore_line, sentence_evidence, wants_rescoring
from gno_trio.engine.search.fusion import Candidate, Fusion
from gno_trio.engine.search.hybrid import QUERY_MODES, QueryOptions, validate_modes
from gno_trio.engine.search.legs import (
    expand_graph,
    graph_line,
    lexical_hits,
    nearest_cosines,
    vector_results,
)
from gno_trio.engine.search.querygrammar import parse_query, wants_recency
from gno_trio.engine.search.refine import StageOutcome
from gno_trio.engine.search.remote import RemoteModels
from gno_trio.engine.search.request import SearchRequest, validate_request
from gno_trio.engine.search.results import echo_filters
from gno_trio.engine.search.semantic import query_vector as checked_query
from gno_trio.engine.search.semantic import vector_leg
from gno_trio.engine.store.database import Connection
from gno_trio.engine.vectors.available import StoredVectors, stored_vectors
from gno_trio.engine.vectors.embedder import EmbeddingBackend, embed_passage
from gno_trio.engine.vectors.index import VectorMatrix
from gno_trio.errors import GnoError


def _post_filters(request: SearchRequest) -> bool:
    scope = request.scope
    return bool(
        scope.tags_all
        or scope.tags_any
        or scope.since
        or scope.until
        or scope.categories
        or scope.author
        or scope.exclude
        or scope.min_score is not None
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
    coverage: float  # share of the query's words the index holds
    lexical_weight: float  # BM25's weight in the fusion (vectors: the rest)
    fused: list[Candidate]  # fusion order before graph expansion
    ranked: list[Candidate]  # the final order (graph neighbours weighed in), uncut
    expansion: graph_leg.GraphExpansion
    graph_wanted: bool
    lines: list[dict[str, str]]
    expansion_stage: StageOutcome
    rerank_stage: StageOutcome


def checked_vectors(
    conn: Connection, backend: EmbeddingBackend | None, request: SearchRequest
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
    conn: Connection,
    request: SearchRequest,
    options: QueryOptions,
    backend: EmbeddingBackend | None,
    *,
    unavailable: str | None = None,
    models: RemoteModels | None = None,
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
        _say_lexical_only(result["meta"], options)
        return result
    run = run_pipeline(conn, request, options, backend, stored, query_vector, models)
    return _answer(run, request.scope.min_score, options)


def _say_lexical_only(meta: dict[str, Any], options: QueryOptions) -> None:
    """A stage asked of the model-free query is reported as not run, with the reason."""
    reason = "no embeddings exist yet, and the keyword-only query runs no model"
    if options.expand is True or (options.expand is None and options.thorough):
        meta["expansionSkipped"] = reason
    if options.rerank is True or (options.rerank is None and options.thorough):
        meta["rerankSkipped"] = reason


def run_pipeline(
    conn: Connection,
    request: SearchRequest,
    options: QueryOptions,
    backend: EmbeddingBackend,
    stored: StoredVectors,
    query_vector: npt.NDArray[np.float32],
    models: RemoteModels | None = None,
) -> PipelineRun:
    """The legs, the fusion and the graph step for a request already validated."""
    model, matrix = stored.model, stored.matrix
    expanded, expansion_stage = refine.expansion(models, request.query, options)
    modes = [*validate_modes(options.query_modes), *expanded]
    intents = [text for mode, text in modes if mode == "intent"]
    if intents and not request.scope.intent:
        request = request.within(intent=" ".join(intents))
    terms = [text for mode, text in modes if mode == "term"]
    hyde = next((text for mode, text in modes if mode == "hyde"), None)
    unbounded = request.within(min_score=None)
    m = 3 if _post_filters(request) or wants_recency(request.query) else 1
    wide = min(100, request.limit * 2 * m)
    narrow = min(100, request.limit * m)
    lines: list[dict[str, str]] = []

    words = lexical_evidence(conn, parse_query(request.query))
    raw = _content_bm25(conn, words, unbounded)
    weight = lexical_weight(words, max(raw.values(), default=0.0))
    fusion = Fusion()
    bm25 = lexical_hits(conn, dataclasses.replace(unbounded, limit=wide))
    fusion.add(bm25)
    lines.append(
        {
            "stage": "lexical",
            "message": f"bm25: {len(bm25)} candidates, plus {len(terms)} term entries",
        }
    )
    for term in terms:
        found = lexical_hits(conn, dataclasses.replace(unbounded, query=term, limit=narrow))
        for candidate, (result, _) in zip(fusion.add(found), found, strict=True):
            candidate.evidence.term += result["score"] / len(terms)
    steer = (
        _embedded(lambda: checked_query(backend, model, request.scope.intent or ""))
        if request.scope.intent and request.scope.intent.strip()
        else None
    )
    vector = vector_results(
        conn,
        model.id,
        vector_leg(conn, matrix, query_vector, unbounded, wide, steer=steer),
        unbounded,
    )
    fusion.add([(r, d) for r, d, _ in vector])
    message = f"vector: {len(vector)} candidates (model {backend.identity.uri})"
    hyde_vector = _embedded(lambda: embed_passage(backend, hyde)) if hyde else None
    if hyde_vector is not None:
        passage = vector_leg(conn, matrix, hyde_vector, unbounded, narrow, steer=steer)
        fusion.add([(r, d) for r, d, _ in vector_results(conn, model.id, passage, unbounded)])
        message += f"; hyde: {len(passage)} candidates"
    elif hyde:
        message += "; hyde: skipped (the model did not answer)"
    lines.append({"stage": "vector", "message": message})
    probes = [query_vector] if hyde_vector is None else [query_vector, hyde_vector]
    cosines: dict[int, list[float]] = {}  # each candidate's, worked out once per query
    _weigh(conn, fusion, matrix, probes, cosines, raw, weight, len(terms))
    fine = None
    if wants_rescoring(words.coverage):
        fine = sentence_evidence(conn, model.id, query_vector, fusion.ranked())
        if fine:
            _weigh(conn, fusion, matrix, probes, cosines, raw, weight, len(terms), fine)
    lines.append(
        {
            "stage": "fusion",
            "message": f"evidence-weighted: {len(fusion.candidates)} unique candidates, "
            f"lexical coverage {words.coverage:.2f}, weights bm25 {weight:.2f} / vector "
            f"{1 - weight:.2f} (min-max normalised over the candidates)",
        }
    )
    lines.append(rescore_line(words.coverage, fine))
    fused = fusion.ranked()
    wants_graph = options.graph and not options.fast
    expansion = (
        expand_graph(conn, fusion, unbounded, matrix, query_vector, options.candidate_limit)
        if wants_graph
        else graph_leg.disabled()
    )
    if expansion.candidates:  # the neighbours join the pool: every score is weighed again
        _weigh(conn, fusion, matrix, probes, cosines, raw, weight, len(terms), fine)
    lines.append({"stage": "graph", "message": graph_line(expansion)})
    lines.append({"stage": "expansion", "message": expansion_stage.message})
    depth = options.candidate_limit or (40 if options.thorough else 20)
    ranked, rerank_stage = refine.reranking(models, request.query, fusion.ranked(), depth, options)
    lines.append({"stage": "rerank", "message": rerank_stage.message})
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
        coverage=words.coverage,
        lexical_weight=weight,
        fused=fused,
        ranked=ranked,
        expansion=expansion,
        graph_wanted=wants_graph,
        lines=lines,
        expansion_stage=expansion_stage,
        rerank_stage=rerank_stage,
    )


def _content_bm25(
    conn: Connection, words: LexicalEvidence, request: SearchRequest
) -> dict[int, float]:
    """Raw BM25 of the query's content words (any of them) for the best documents: the
    lexical evidence fusion weighs. Words in most documents ("what", "the") are left
    out, so a question's phrasing does not outweigh what it asks about."""
    if not words.content:
        return {}
    content = parse_query(" ".join(words.content))
    anyword = dataclasses.replace(content, match=content.any_match)
    held = chunkkeeper.current(conn)
    return {
        int(row["id"]): score
        for row, score in document_ranker(conn, held).rank(anyword, request, EVIDENCE_DEPTH, None)
    }


def _weigh(
    conn: Connection,
    fusion: Fusion,
    matrix: VectorMatrix,
    probes: list[npt.NDArray[np.float32]],
    cosines: dict[int, list[float]],
    bm25: dict[int, float],
    weight: float,
    terms: int,
    sentences: dict[int, float] | None = None,
) -> None:
    """Every candidate's BM25 and cosine to the query (and hyde passage, and the best
    sentence-window cosine of those rescored), then the fused scores.

    ``cosines`` holds what earlier weighings of this query found (``[]``: no vectors),
    so a weighing again after rescoring or graph expansion reads only the newcomers.
    """
    candidates = list(fusion.candidates.values())
    newcomers = [c.doc_id for c in candidates if c.doc_id not in cosines]
    found = nearest_cosines(conn, matrix, probes, newcomers)
    for doc_id in newcomers:
        cosines[doc_id] = found.get(doc_id, [])
    for candidate in candidates:
        nearest = cosines[candidate.doc_id]
        candidate.evidence.bm25 = bm25.get(candidate.doc_id)
        candidate.evidence.cosine = nearest[0] if nearest else None
        candidate.evidence.hyde = nearest[1] if len(nearest) > 1 else None
        candidate.evidence.sentence = (sentences or {}).get(candidate.doc_id)
    weigh([c.evidence for c in candidates], weight, terms)


def final_scores(run: PipelineRun, limit: int) -> list[tuple[Candidate, float]]:
    """The answer before ``minScore``: the first ``limit`` candidates, scores min-max scaled."""
    ranked = run.ranked[:limit]
    return list(zip(ranked, refine.final_values(ranked), strict=True))


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
            "expanded": run.expansion_stage.ran,
            "reranked": run.rerank_stage.ran,
            "vectorsUsed": True,
            "candidateLimit": options.candidate_limit or (40 if options.thorough else 20),
            "graphExpansion": run.expansion.meta(),
        }
    )
    for key, stage in (
        ("expansionSkipped", run.expansion_stage),
        ("rerankSkipped", run.rerank_stage),
    ):
        if stage.skipped_reason is not None:
            meta[key] = stage.skipped_reason
    if min_score is not None:
        meta["minScore"] = min_score
    if options.query_modes:
        meta["queryModes"] = query_modes_meta(options)
    if options.explain:
        meta["explain"] = {
            "lines": [
                *run.lines,
                *(_evidence_line(i, c, run.lexical_weight) for i, (c, _) in enumerate(kept, 1)),
            ],
            "results": [_explain_result(i, c, s) for i, (c, s) in enumerate(kept, 1)],
        }
    return {"results": results, "meta": meta}


def query_modes_meta(options: QueryOptions) -> dict[str, Any]:
    """Counts of the caller's own entries (expansion's are not counted)."""
    typed = options.query_modes
    return {
        "term": sum(1 for kind, _ in typed if kind == "term"),
        "intent": sum(1 for kind, _ in typed if kind == "intent"),
        "hyde": any(kind == "hyde" for kind, _ in typed),
    }


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
        "fusionScore": round(candidate.fusion, 6),
    }
    evidence = candidate.evidence
    if evidence.bm25 is not None:
        entry["bm25Score"] = round(evidence.bm25, 6)
    if evidence.cosine is not None:
        entry["vecScore"] = round(evidence.cosine, 6)
    if candidate.rerank is not None:
        entry["rerankScore"] = round(candidate.rerank, 6)
    return entry


def _evidence_line(rank: int, candidate: Candidate, weight: float) -> dict[str, str]:
    """One returned document's fused score spelled out: each leg raw, normalised, weighed."""
    e = candidate.evidence
    bm25 = "none" if e.bm25 is None else f"{e.bm25:.3f}"
    cosine = "none" if e.cosine is None else f"{e.cosine:.3f}"
    message = (
        f"#{rank} {candidate.result['docid']}: bm25 {bm25} -> {e.bm25_norm:.3f} x {weight:.2f}"
        f" + cosine {cosine} -> {e.vector_norm:.3f} x {1 - weight:.2f}"
    )
    if e.sentence is not None:
        message += f" (sentence window {e.sentence:.3f})"
    if e.term:
        message += f" + terms {e.term:.3f}"
    if e.hyde is not None:
        message += f" + hyde cosine {e.hyde:.3f}"
    return {"stage": "fusion", "message": f"{message} = {e.score:.3f}"}


__all__ = ["QUERY_MODES", "PipelineRun", "hybrid_query", "run_pipeline"]
