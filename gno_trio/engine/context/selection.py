"""Choosing passages: greedy packing under one budget for what the model reads.

The budget covers the whole model-visible projection of the Capsule, not
just passage text, and every choice changes other parts of it (coverage,
omission counts, guidance), so a passage is admitted only after the whole
Capsule with it has been assembled and measured. The order is deterministic:

1. the same span of the same document offered twice collapses to one;
   identical text elsewhere is a ``duplicate``;
2. when the goal has facets, a passage matching none of them is
   ``redundant_coverage``;
3. of the rest, the passage with the most relevance still to be had goes
   next (its facets weighted by rarity, a facet already covered counting
   half, plus goal words standing together), ties broken by retrieval rank
   and then by URI and lines;
4. a passage overlapping an admitted one of the same document is
   ``overlap``; a further passage that would give its document more than
   3/5 of the room (when several documents compete) is
   ``document_share_cap``;
5. a passage whose Capsule would not fit is ``global_budget``.

Every candidate ends up either selected or omitted with exactly one reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from gno_trio.engine.context.candidates import CandidatePool, Passage
from gno_trio.engine.context.canonical import PassageRef

OMISSION_REASONS: Final = (
    "duplicate",
    "overlap",
    "global_budget",
    "redundant_coverage",
    "document_share_cap",
    "filtered_by_scope",
    "invalid_coordinates",
)
# Admitting a passage grows the Capsule by at least its text, less a few
# hundred bytes at most (a coverage gap or warning it settles), so a passage
# larger than the room left by more than this is refused without assembling
# a Capsule for it.
_QUICK_REJECT_SLACK: Final = 2048
_SHARE_NUMERATOR: Final = 3
_SHARE_DENOMINATOR: Final = 5


# The order omitted candidates are listed in when the audit cannot list them
# all: what an agent would most want to fetch itself comes first.
AUDIT_ORDER: Final = (
    "global_budget",
    "document_share_cap",
    "overlap",
    "redundant_coverage",
    "duplicate",
    "filtered_by_scope",
    "invalid_coordinates",
)
UNRANKED: Final = 1 << 62


@dataclass(frozen=True, slots=True)
class Omission:
    """A candidate left out, why, and its retrieval rank (``UNRANKED`` when unread)."""

    ref: PassageRef
    reason: str
    rank: int = UNRANKED

    @classmethod
    def of(cls, passage: Passage, reason: str) -> Omission:
        return cls(passage.ref, reason, passage.retrieval_rank)

    def audit_key(self) -> tuple[int, int, tuple[str, int, int, str, str]]:
        return (AUDIT_ORDER.index(self.reason), self.rank, self.ref.sort_key())


@dataclass(frozen=True, slots=True)
class Selection:
    """Admitted passages in admission order, and every other candidate with its reason."""

    selected: tuple[Passage, ...]
    omissions: tuple[Omission, ...]
    matched_facets: frozenset[str]


# Assembles and measures the Capsule for a selection; None when it does not fit.
Builder = Callable[[Selection], "dict[str, object] | None"]


def _overlaps(candidate: Passage, selected: Sequence[Passage]) -> bool:
    start, end = candidate.ref.start_line or 0, candidate.ref.end_line or 0
    return any(
        item.ref.uri == candidate.ref.uri
        and start <= (item.ref.end_line or 0)
        and (item.ref.start_line or 0) <= end
        for item in selected
    )


class _Packer:
    """Packing state: the candidates still open and every omission decided so far.

    Construction applies the rules that never change (same span twice,
    identical text, no facet matched unless only meaning found anything);
    :meth:`blocked` the ones that depend on what has been admitted.
    """

    def __init__(self, pool: CandidatePool, facets: Sequence[str], room: int) -> None:
        self.share_cap = room * _SHARE_NUMERATOR // _SHARE_DENOMINATOR
        self.omissions: list[Omission] = [
            Omission(ref, "invalid_coordinates") for ref in pool.unreadable
        ]
        self.matched = frozenset(f for p in pool.passages for f in p.facets)
        ordered = sorted(pool.passages, key=lambda p: (p.retrieval_rank, p.ref.sort_key()))
        seen_ids: set[str] = set()
        seen_text: set[str | None] = set()
        kept: list[Passage] = []
        for passage in ordered:
            if passage.candidate_id in seen_ids:
                continue
            seen_ids.add(passage.candidate_id)
            if passage.ref.passage_hash in seen_text:
                self.omissions.append(Omission.of(passage, "duplicate"))
                continue
            seen_text.add(passage.ref.passage_hash)
            if facets and not passage.facets and not self._by_meaning(passage):
                self.omissions.append(Omission.of(passage, "redundant_coverage"))
                continue
            kept.append(passage)
        self.remaining = kept
        self.documents = len({p.ref.uri for p in kept})

    def _by_meaning(self, passage: Passage) -> bool:
        """Whether a passage that speaks no facet may stand in for the words: only when no
        passage speaks any (the goal is worded unlike the notes, in another language, say)
        and the vector leg found its document."""
        return not self.matched and "vector" in passage.retrieval_sources

    def blocked(self, candidate: Passage, selected: Sequence[Passage]) -> str | None:
        """The reason ``candidate`` can no longer join ``selected``, if any."""
        if _overlaps(candidate, selected):
            return "overlap"
        if self.documents > 1:
            same = sum(item.size for item in selected if item.ref.uri == candidate.ref.uri)
            if same and same + candidate.size > self.share_cap:
                return "document_share_cap"
        return None

    def selection(self, selected: Sequence[Passage], rest: Sequence[Passage]) -> Selection:
        """The state if packing stopped now: every leftover omitted for its reason."""
        tail = [Omission.of(p, self.blocked(p, selected) or "global_budget") for p in rest]
        return Selection(tuple(selected), (*self.omissions, *tail), self.matched)


def pack(
    pool: CandidatePool, facets: Sequence[str], room: int, build: Builder
) -> tuple[Selection, dict[str, object] | None]:
    """Admit passages greedily; returns the final selection and its fitted Capsule.

    ``room`` is the number of Capsule bytes the budget allows after its safety
    margins; it sizes the per-document share and lets a passage that is
    plainly too large be turned away without assembling a Capsule for it.
    """
    packer = _Packer(pool, facets, room)
    selected: list[Passage] = []
    capsule: dict[str, object] | None = None
    used = 0
    while packer.remaining:
        still_open = []
        for candidate in packer.remaining:
            reason = packer.blocked(candidate, selected)
            if reason is None:
                still_open.append(candidate)
            else:
                packer.omissions.append(Omission.of(candidate, reason))
        if not still_open:
            break
        covered = {facet for item in selected for facet in item.facets}
        pick = min(
            still_open,
            key=lambda p: (-p.gain(covered, facets), p.retrieval_rank, p.ref.sort_key()),
        )
        still_open.remove(pick)
        packer.remaining = still_open
        if capsule is not None and used + pick.size - _QUICK_REJECT_SLACK > room:
            packer.omissions.append(Omission.of(pick, "global_budget"))
            continue
        trial = [*selected, pick]
        fitted = build(packer.selection(trial, still_open))
        if fitted is None:
            packer.omissions.append(Omission.of(pick, "global_budget"))
            continue
        selected, capsule = trial, fitted
        used = _used_bytes(fitted)
    final = packer.selection(selected, ())
    while selected:
        fitted = build(final)
        if fitted is not None:
            return final, fitted
        # Unreachable while omission reasons are stable; kept so a future
        # change cannot return a Capsule over its budget.
        dropped = selected.pop()
        packer.omissions.append(Omission.of(dropped, "global_budget"))
        final = packer.selection(selected, ())
    return final, None


def cheapest_alone(
    pool: CandidatePool,
    facets: Sequence[str],
    room: int,
    cost: Callable[[Passage], int],
    count: int = 1,
) -> list[Selection]:
    """Selections holding only one admissible passage each, the ``count`` cheapest.

    ``cost`` estimates what a passage adds to the Capsule; the smallest
    Capsule packing could ever produce from ``pool`` is among these (its
    size also depends on the coverage the passage settles, so a caller
    wanting the exact least budget measures a few).
    """
    packer = _Packer(pool, facets, room)
    ranked = sorted(packer.remaining, key=lambda p: (cost(p), p.retrieval_rank, p.ref.sort_key()))
    return [
        packer.selection([alone], [p for p in packer.remaining if p is not alone])
        for alone in ranked[:count]
    ]


def _used_bytes(capsule: dict[str, object]) -> int:
    budget = capsule.get("budget")
    if isinstance(budget, dict):
        value = budget.get("usedBytes")
        if isinstance(value, int):
            return value
    return 0
