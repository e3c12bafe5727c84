"""Reciprocal rank fusion of result lists, and the hybrid pipeline's candidate pool.

The model-free ``query`` (BM25 of the query and of its ``term`` entries)
fuses ranked lists with weighted RRF: each list adds
``weight / (k + rank)`` to the documents it ranks, plus a bonus for a
document at the top of a primary list. With vectors, the hybrid pipeline
and memory recall weigh evidence instead (:mod:`.evidence`); :class:`Fusion` holds its
candidates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.engine.search.evidence import Evidence
from gno_trio.engine.search.results import normalise_scores

RRF_K: Final = 60
WEIGHT_BM25: Final = 2.0
WEIGHT_BM25_VARIANT: Final = 0.5
BONUS_FIRST: Final = 0.1
BONUS_TOP5: Final = 0.04


def rrf_points(weight: float, rank: int) -> float:
    """What a list of ``weight`` gives the document it ranks ``rank`` (1-based)."""
    return weight / (RRF_K + rank)


def rank_bonus(rank: int) -> float:
    """The bonus for standing high in a primary list (the best of a document's counts)."""
    return BONUS_FIRST if rank == 1 else BONUS_TOP5 if rank <= 5 else 0.0


@dataclass(slots=True)
class Candidate:
    """One document of the hybrid pipeline: its result body and what each leg said of it."""

    result: dict[str, Any]
    doc_id: int
    evidence: Evidence = dataclasses.field(default_factory=Evidence)
    graph: bool = False
    rerank: float | None = None
    """The reranker's relevance, when a reranker ordered this candidate."""

    @property
    def fusion(self) -> float:
        """The fused score (see :mod:`.evidence`)."""
        return self.evidence.score


@dataclass(slots=True)
class Fusion:
    """The hybrid pipeline's candidates by URI, in the order the legs first named them."""

    candidates: dict[str, Candidate] = dataclasses.field(default_factory=dict)

    def add(self, hits: Sequence[tuple[dict[str, Any], int]]) -> list[Candidate]:
        """Each hit's candidate (the first body seen for a URI is the one kept)."""
        found = []
        for result, doc_id in hits:
            candidate = self.candidates.get(result["uri"])
            if candidate is None:
                candidate = Candidate(result, doc_id)
                self.candidates[result["uri"]] = candidate
            found.append(candidate)
        return found

    def ranked(self) -> list[Candidate]:
        return sorted(
            self.candidates.values(),
            key=lambda c: (-c.evidence.score, c.result["uri"]),
        )


def fuse(ranked_lists: Sequence[tuple[float, Sequence[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Weighted RRF over result lists keyed by URI; returns hits, best first, scores normalised.

    Ties keep the order documents were first seen.
    """
    scores: dict[str, float] = {}
    bonus: dict[str, float] = {}
    first_seen: dict[str, dict[str, Any]] = {}
    for weight, hits in ranked_lists:
        for rank, hit in enumerate(hits, 1):
            uri = hit["uri"]
            first_seen.setdefault(uri, hit)
            scores[uri] = scores.get(uri, 0.0) + rrf_points(weight, rank)
            bonus[uri] = max(bonus.get(uri, 0.0), rank_bonus(rank))
    order = sorted(scores, key=lambda u: scores[u] + bonus[u], reverse=True)
    fused = [scores[u] + bonus[u] for u in order]
    normalised = normalise_scores(fused)
    return [
        dict(first_seen[uri], score=round(score, 6))
        for uri, score in zip(order, normalised, strict=True)
    ]
