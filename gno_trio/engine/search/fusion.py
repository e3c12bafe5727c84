"""Reciprocal rank fusion as GNO's ``query`` weighs it.

Each list (BM25 of the query, BM25 variants, vectors, the HyDE passage,
graph neighbours) adds ``weight / (k + rank)`` to the documents it ranks,
plus a bonus for a document at the top of a primary list; the strong-signal
test on BM25's raw scores decides whether the words alone answered.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.engine.search.results import normalise_scores

RRF_K: Final = 60
WEIGHT_BM25: Final = 2.0
WEIGHT_BM25_VARIANT: Final = 0.5
WEIGHT_VECTOR: Final = 2.0
WEIGHT_HYDE: Final = 0.7
WEIGHT_GRAPH: Final = 0.8
BONUS_FIRST: Final = 0.1
BONUS_TOP5: Final = 0.04
STRONG_TOP: Final = 0.84
STRONG_GAP: Final = 0.14


def rrf_points(weight: float, rank: int) -> float:
    """What a list of ``weight`` gives the document it ranks ``rank`` (1-based)."""
    return weight / (RRF_K + rank)


def rank_bonus(rank: int) -> float:
    """The bonus for standing high in a primary list (the best of a document's counts)."""
    return BONUS_FIRST if rank == 1 else BONUS_TOP5 if rank <= 5 else 0.0


@dataclass(slots=True)
class Candidate:
    """One document in the fusion: its result body and what each list said of it."""

    result: dict[str, Any]
    doc_id: int
    fusion: float = 0.0
    bonus: float = 0.0
    bm25: float | None = None
    vector: float | None = None
    graph: bool = False


@dataclass(slots=True)
class Fusion:
    candidates: dict[str, Candidate] = dataclasses.field(default_factory=dict)

    def add(
        self,
        weight: float,
        hits: Sequence[tuple[dict[str, Any], int]],
        *,
        bonus: bool = True,
    ) -> None:
        for rank, (result, doc_id) in enumerate(hits, 1):
            found = self.candidates.get(result["uri"])
            if found is None:
                found = Candidate(result, doc_id)
                self.candidates[result["uri"]] = found
            found.fusion += rrf_points(weight, rank)
            if bonus:
                found.bonus = max(found.bonus, rank_bonus(rank))

    def ranked(self) -> list[Candidate]:
        return sorted(
            self.candidates.values(),
            key=lambda c: (-(c.fusion + c.bonus), c.result["uri"]),
        )


def strong_signal(raw_scores: Sequence[float]) -> tuple[bool, float, float]:
    """GNO's test on the BM25 top hits: (strong, normalised top, gap to the second)."""
    if not raw_scores:
        return False, 0.0, 0.0
    squash = [1.0 / (1.0 + math.exp(-(abs(s) - 4.5) / 2.8)) for s in raw_scores[:5]]
    top = squash[0]
    gap = top - (squash[1] if len(squash) > 1 else 0.0)
    return top >= STRONG_TOP and gap >= STRONG_GAP, top, gap


def fuse(ranked_lists: Sequence[tuple[float, Sequence[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Weighted RRF over result lists keyed by URI; returns hits, best first, scores normalised.

    The model-free ``query`` fuses whole result lists this way (ties keep the
    order documents were first seen); :class:`Fusion` adds the same points
    and bonuses per document for the hybrid pipeline (ties by URI).
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
