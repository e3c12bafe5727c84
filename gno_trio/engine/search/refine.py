"""The optional stages of ``query``: expansion before the legs, reranking after fusion.

Each stage is *asked for* when the caller says ``expand``/``rerank`` true or
``thorough``, is *tried* when asked for or left to the default (and not
``fast``), and is turned off by ``false``. What happened is always told:
the explain line of the stage, and for a stage that was asked for and did
not run, ``meta.expansionSkipped`` / ``meta.rerankSkipped`` with the reason
(not configured, refused by the egress policy, failed, too slow). A failed
stage leaves the query as it would have been without it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from gno_trio.engine.search import remote
from gno_trio.engine.search.fusion import Candidate
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.results import normalise_scores


@dataclass(frozen=True, slots=True)
class StageOutcome:
    """Whether an optional stage ran, whether the caller asked for it, and what to say."""

    ran: bool
    asked: bool
    message: str

    @property
    def skipped_reason(self) -> str | None:
        """The reason to report in ``meta`` (only for a stage asked for and not run)."""
        return self.message.removeprefix("skipped: ") if self.asked and not self.ran else None


def _wanted(explicit: bool | None, options: QueryOptions) -> tuple[bool, bool]:
    """(try it, asked for it) for a stage switch."""
    asked = explicit is True or (explicit is None and options.thorough)
    return asked or (explicit is None and not options.fast), asked


def _not_tried(explicit: bool | None, options: QueryOptions) -> str:
    if explicit is False:
        return "skipped: turned off for this query"
    return "skipped: fast skips it"


def expansion(
    models: remote.RemoteModels | None, query: str, options: QueryOptions
) -> tuple[list[tuple[str, str]], StageOutcome]:
    """Query modes the expansion endpoint adds (none when it does not run) and the outcome."""
    attempt, asked = _wanted(options.expand, options)
    if not attempt:
        return [], StageOutcome(False, asked, _not_tried(options.expand, options))
    uri = models.expand_uri if models else None
    why = remote.unusable(uri, "expand")
    if why is not None or models is None or uri is None:
        return [], StageOutcome(False, asked, f"skipped: {why}")
    refused = models.judge(uri, "snippet")
    if refused is not None:
        return [], StageOutcome(False, asked, f"skipped: the egress policy refuses it: {refused}")
    try:
        modes = remote.expand(uri, query, models.budget_s)
    except remote.RemoteFailed as failure:
        return [], StageOutcome(False, asked, f"skipped: {failure}")
    if any(kind == "hyde" for kind, _ in options.query_modes):
        modes = [(kind, text) for kind, text in modes if kind != "hyde"]
    terms = sum(1 for kind, _ in modes if kind == "term")
    hyde = "a hyde passage" if any(kind == "hyde" for kind, _ in modes) else "no hyde passage"
    return modes, StageOutcome(True, asked, f"expansion: {terms} term variants and {hyde}")


def _document(candidate: Candidate) -> str:
    result = candidate.result
    snippet = str(result.get("snippet") or "").replace("<mark>", "").replace("</mark>", "")
    return "\n".join(part for part in (str(result.get("title") or ""), snippet) if part)


def reranking(
    models: remote.RemoteModels | None,
    query: str,
    ranked: Sequence[Candidate],
    depth: int,
    options: QueryOptions,
) -> tuple[list[Candidate], StageOutcome]:
    """The final order with the reranker's order over the first ``depth`` candidates (the
    fused order when it does not run), and the outcome."""
    attempt, asked = _wanted(options.rerank, options)
    order = list(ranked)
    if not attempt:
        return order, StageOutcome(False, asked, _not_tried(options.rerank, options))
    uri = models.rerank_uri if models else None
    why = remote.unusable(uri, "rerank")
    if why is not None or models is None or uri is None:
        return order, StageOutcome(False, asked, f"skipped: {why}")
    if not order:
        return order, StageOutcome(False, asked, "skipped: no candidates to rerank")
    refused = models.judge(uri, "snippet")
    if refused is not None:
        return order, StageOutcome(
            False, asked, f"skipped: the egress policy refuses it: {refused}"
        )
    head, tail = order[:depth], order[depth:]
    started = time.monotonic()
    try:
        scores = remote.rerank(uri, query, [_document(c) for c in head], models.budget_s)
    except remote.RemoteFailed as failure:
        return order, StageOutcome(False, asked, f"skipped: {failure}; fused order kept")
    for candidate, score in zip(head, scores, strict=True):
        candidate.rerank = score
    head.sort(key=lambda c: -(c.rerank or 0.0))  # stable: ties keep the fused order
    took = (time.monotonic() - started) * 1000
    message = f"rerank: top {len(head)} reordered by {uri.partition('#')[0]} in {took:.0f} ms"
    return head + tail, StageOutcome(True, asked, message)


def final_values(ranked: Sequence[Candidate]) -> list[float]:
    """Scores in the final order: reranked candidates above the rest, each part min-max
    scaled, so the scores fall as the ranks do."""
    reranked = [c for c in ranked if c.rerank is not None]
    if not reranked:
        return normalise_scores([c.fusion for c in ranked])
    top = normalise_scores([c.rerank or 0.0 for c in reranked])
    rest = normalise_scores([c.fusion for c in ranked[len(reranked) :]])
    return normalise_scores([1.0 + v for v in top] + rest)


__all__ = ["StageOutcome", "expansion", "final_values", "reranking"]
