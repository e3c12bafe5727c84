"""The stages of ``query-diagnose`` when the query runs hybrid (vectors are stored).

The evidence comes from the very run ``query`` formats
(:func:`~gno_trio.engine.search.pipeline.run_pipeline`): the BM25 leg as
deep as it was cut, the vector leg, where evidence-weighted fusion put the
target, what one hop of graph expansion did, and whether the final cut kept
it. The final cut is reported by the last stage that ran: graph when graph
expansion ran, else fusion.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from gno_trio.engine.search.graph_expansion import SEED_LIMIT
from gno_trio.engine.search.pipeline import PipelineRun, final_scores
from gno_trio.engine.search.semantic import vector_leg
from gno_trio.engine.store.database import Connection

VECTOR_WINDOW: Final = 100
"""How deep the vector leg is searched for the target (the largest query limit)."""


def _stage(
    stage: str,
    sources: int,
    position: int | None,
    score: float | None,
    drop: str | None,
    reason: str,
) -> dict[str, Any]:
    return {
        "id": stage,
        "status": "active",
        "sourceCount": sources,
        "present": position is not None,
        "rank": position,
        "score": None if score is None else round(float(score), 6),
        "survived": position is not None and drop is None,
        "dropReason": drop,
        "reason": reason,
    }


def vector_stage(conn: Connection, run: PipelineRun, doc_id: int) -> dict[str, Any]:
    """Where the target ranks among the documents nearest the query (cut at ``run.wide``)."""
    sources = 1 + (run.hyde is not None)
    hits = vector_leg(
        conn, run.matrix, run.query_vector, run.request, VECTOR_WINDOW, steer=run.steer
    )
    position = next((i for i, hit in enumerate(hits, 1) if int(hit.row["id"]) == doc_id), None)
    if position is None:
        return _stage(
            "vector",
            sources,
            None,
            None,
            "not_in_candidate_set",
            f"not among the {len(hits)} documents nearest the query",
        )
    hit = hits[position - 1]
    drop = None if position <= run.wide else "below_cutoff"
    reason = f"vector rank {position}, similarity {hit.score:.3f}" + (
        "" if drop is None else f"; only the first {run.wide} go on to fusion"
    )
    return _stage("vector", sources, position, hit.score, drop, reason)


def _final_cut(
    run: PipelineRun, uri: str, min_score: float | None
) -> tuple[int | None, float | None, str | None, str]:
    """The target's place in the final order, its score, the drop reason and the words."""
    position = next((i for i, c in enumerate(run.ranked, 1) if c.result["uri"] == uri), None)
    if position is None:
        return None, None, "not_in_candidate_set", "not among the fused candidates"
    limit = run.request.limit
    if position > limit:
        raw = run.ranked[position - 1]
        return (
            position,
            raw.fusion,
            "below_cutoff",
            f"final rank {position} is past the requested limit of {limit}",
        )
    score = final_scores(run, limit)[position - 1][1]
    if min_score is not None and score < min_score:
        return position, score, "below_cutoff", f"score {score:.6f} is under minScore {min_score}"
    return position, score, None, f"returned at rank {position}"


def fusion_stage(run: PipelineRun, uri: str, min_score: float | None) -> dict[str, Any]:
    """Where evidence-weighted fusion put the target; the final cut too when graph did not run."""
    sources = 2 + len(run.terms) + (run.hyde is not None)
    position = next((i for i, c in enumerate(run.fused, 1) if c.result["uri"] == uri), None)
    if position is None:
        reason = "in neither the BM25 nor the vector candidates"
        return _stage("fusion", sources, None, None, "not_in_candidate_set", reason)
    candidate = run.fused[position - 1]
    legs = [
        name
        for name, present in (
            ("bm25", bool(candidate.evidence.bm25)),
            ("vector", candidate.evidence.cosine is not None),
        )
        if present
    ]
    e = candidate.evidence
    reason = (
        f"fused rank {position} (evidence from {' and '.join(legs) or 'term entries'}: "
        f"bm25 {e.bm25_norm:.3f} x {run.lexical_weight:.2f} + vector {e.vector_norm:.3f} x "
        f"{1 - run.lexical_weight:.2f})"
    )
    if run.graph_wanted:
        return _stage("fusion", sources, position, candidate.fusion, None, reason)
    final, score, drop, said = _final_cut(run, uri, min_score)
    return _stage("fusion", sources, final, score, drop, f"{reason}; {said}")


def graph_stage(run: PipelineRun, uri: str, min_score: float | None) -> dict[str, Any]:
    """What one hop of links did for the target, and the final cut after it."""
    seeds = [c.result["uri"] for c in run.fused[:SEED_LIMIT]]
    final, score, drop, said = _final_cut(run, uri, min_score)
    candidate = next((c for c in run.ranked if c.result["uri"] == uri), None)
    if uri in seeds:
        role = f"a seed of graph expansion (fused top {SEED_LIMIT})"
    elif candidate is not None and candidate.graph:
        role = "a neighbour added by graph expansion"
    else:
        role = f"not linked from the top {SEED_LIMIT} fused documents"
    sources = run.expansion.seed_count
    return _stage("graph", sources, final, score, drop, f"{role}; {said}")


def target_seq(run: PipelineRun, mirror: str) -> int | None:
    """The target's chunk nearest the query (its vector anchor), or None without vectors."""
    rows = run.matrix.rows_of(mirror)
    if len(rows) == 0:
        return None
    best = rows[int(np.argmax(run.matrix.vectors(rows) @ run.query_vector))]
    return int(run.matrix.seqs[best])


__all__ = ["VECTOR_WINDOW", "fusion_stage", "graph_stage", "target_seq", "vector_stage"]
