"""``engine.answers``: retrieval, a closed Capsule, a draft, every claim checked or withheld.

``ask`` runs the query pipeline (the ``results`` a reader sees), compiles a
Context Capsule for the question, writes a draft from it (a configured chat
endpoint, or the Capsule's own sentences), and with ``verify`` holds the
draft against the Capsule and its freshness receipt: the answer is returned
only when every substantive claim is supported, else it is withheld and the
reason given. Sending evidence to an endpoint is an egress decision
(``remote_inference`` to the endpoint's zone, judged against every
collection in the Capsule, with a receipt in the egress audit); a refusal,
like an endpoint failure, falls back to the extractive draft and says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.context.face import ContextFace
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.search.face import SearchFace
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.request import SearchRequest
from gno_trio.engine.store.database import Connection
from gno_trio.engine.traces.face import TracesFace
from gno_trio.engine.traces.filters import retrieval_filters
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.ask.generation import Draft

DEFAULT_CONTEXT_BUDGET_TOKENS: Final = 12_000
CITATION_MARKER: Final = re.compile(r"\[(\d{1,4})\]")


@dataclass(frozen=True, slots=True)
class AskRequest:
    """One question: the ``query`` pipeline's request and options, and what to do with its hits.

    ``search.query`` is the question; the filters, query modes, candidate
    limit and graph switch are the same objects ``query`` takes, so the
    results an Ask cites are the ones ``query`` would return.
    """

    search: SearchRequest
    options: QueryOptions = field(default_factory=QueryOptions)
    verify: bool = True
    answer: bool = True
    no_rerank: bool = False
    max_answer_tokens: int | None = None
    context_budget_tokens: int | None = None
    context_budget_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class AskOutcome:
    """The ``ask@1.0`` object, who wrote the draft, and the trace that recorded it."""

    result: dict[str, Any]
    note: str
    trace_id: str | None


def _citation(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "evidenceId": item["evidenceId"],
        "docid": item["docid"],
        "uri": item["uri"],
        "startLine": item["startLine"],
        "endLine": item["endLine"],
    }


def _filters(request: AskRequest) -> dict[str, Any]:
    """The request as trace filters: the query's, and the Ask's own rerank switch."""
    found = retrieval_filters(request.search, request.options)
    if request.no_rerank:
        found["noRerank"] = True
    return found


class AskFace:
    """Ask of an opened index: over its query pipeline, Capsules and traces."""

    def __init__(
        self,
        kernel: EngineKernel,
        search: SearchFace,
        capsules: ContextFace,
        traces: TracesFace,
    ) -> None:
        self._kernel = kernel
        self._search = search
        self._capsules = capsules
        self._traces = traces

    def _draft(
        self, question: str, capsule: Mapping[str, Any], max_tokens: int, conn: Connection
    ) -> Draft:
        from gno_trio.engine.ask.generation import (
            GENERATION_FAILED,
            ExtractiveGenerator,
            generator_for,
        )
        from gno_trio.engine.egress import audit as egress_audit
        from gno_trio.engine.egress.policy import endpoint_zone

        generator, endpoint = generator_for(self._kernel.config)
        passages = list(capsule["evidence"])
        if endpoint is not None:
            decision = egress_audit.judge(
                self._kernel.stores.egress_receipts(conn),
                self._kernel.config.collections,
                collections=sorted({str(item["collection"]) for item in passages}),
                action="remote_inference",
                zone=endpoint_zone(endpoint),
                content_class="capsule",
                authenticated=True,
            )
            if not decision.allowed:
                reason = (
                    f"the egress policy keeps this evidence from the endpoint: {decision.reason}"
                )
                generator = ExtractiveGenerator(reason)
        try:
            return generator.draft(question, passages, max_tokens)
        except GnoError as error:
            if error.code != GENERATION_FAILED:
                raise
            return ExtractiveGenerator(error.message).draft(question, passages, max_tokens)

    def ask(self, request: AskRequest) -> AskOutcome:
        """``ask@1.0`` for one question; with ``verify``, a withheld or fully supported answer.

        Raises ``INVALID_INPUT`` for an empty question and the Context error
        codes when no Capsule can be compiled for it.
        """
        # Answer checking and its models load with the first question, not with the engine.
        from gno_trio.engine.ask.claims import verify_claims
        from gno_trio.engine.ask.generation import DEFAULT_MAX_ANSWER_TOKENS
        from gno_trio.engine.context.request import ContextRequest

        question = request.search.query.strip()
        if not question:
            raise GnoError("INVALID_INPUT", "query must not be empty")
        search, options = request.search, request.options
        with self._kernel.connection() as c:
            retrieval = self._search.query(replace(search, query=question), options)
            meta: dict[str, Any] = {
                key: retrieval["meta"][key] for key in ("expanded", "reranked", "vectorsUsed")
            }
            for key in ("intent", "candidateLimit", "exclude", "explain", "queryModes"):
                if key in retrieval["meta"]:
                    meta[key] = retrieval["meta"][key]
            result: dict[str, Any] = {
                "query": question,
                "mode": retrieval["meta"]["mode"],
            }
            if not request.answer and not request.verify:
                meta.update(answerGenerated=False, totalResults=len(retrieval["results"]))
                result.update(results=retrieval["results"], meta=meta)
                return AskOutcome(result, "Retrieval only: no answer was requested", None)
            capsule = self._capsules.compile(
                ContextRequest(
                    goal=question,
                    budget_tokens=request.context_budget_tokens or DEFAULT_CONTEXT_BUDGET_TOKENS,
                    budget_bytes=request.context_budget_bytes,
                    query=question,
                    scope=search.scope,
                    query_modes=tuple(options.query_modes),
                    graph=options.graph,
                    no_rerank=request.no_rerank,
                    candidate_limit=options.candidate_limit,
                ),
            )
            draft = self._draft(
                question, capsule, request.max_answer_tokens or DEFAULT_MAX_ANSWER_TOKENS, c
            )
            if request.verify:
                freshness = self._capsules.verify(capsule)
                claims, semantic = verify_claims(draft.text, capsule, freshness)
                abstained = bool(claims["abstained"])
                cited: dict[str, dict[str, Any]] = {}
                if not abstained:
                    by_id = {item["evidenceId"]: item for item in capsule["evidence"]}
                    for claim in claims["claims"]:
                        for ref in claim["evidence"]:
                            cited.setdefault(ref["evidenceId"], _citation(by_id[ref["evidenceId"]]))
                withheld = claims["abstentionText"] if draft.answers else draft.text
                result["answer"] = withheld if abstained else draft.text
                result["citations"] = list(cited.values())
                meta.update(
                    answerGenerated=draft.generated,
                    verificationRequested=True,
                    abstained=abstained,
                )
            else:
                numbers = {int(n) for n in CITATION_MARKER.findall(draft.text)}
                evidence = list(capsule["evidence"])
                result["answer"] = draft.text
                result["citations"] = [
                    _citation(evidence[n - 1]) for n in sorted(numbers) if 1 <= n <= len(evidence)
                ]
                meta.update(answerGenerated=draft.generated)
            result["results"] = retrieval["results"]
            if request.verify:
                result["verification"] = {
                    "schemaVersion": "1.0",
                    "mode": "closed_capsule",
                    "capsule": capsule,
                    "freshness": freshness,
                    "claims": claims,
                    "semantic": {
                        **{
                            k: semantic[k]
                            for k in (
                                "status",
                                "reason",
                                "schemaRequested",
                                "schemaEnforced",
                                "modelFingerprint",
                            )
                        },
                        "configFingerprint": capsule["fingerprints"]["config"],
                        **{
                            k: semantic[k]
                            for k in (
                                "verifierFingerprint",
                                "candidateClaims",
                                "verifiedClaims",
                                "unresolvedClaims",
                                "modelCalls",
                                "durationMs",
                            )
                        },
                    },
                }
            meta["totalResults"] = len(retrieval["results"])
            result["meta"] = meta
            trace_id = self._traces.record_capsule(
                pipeline="ask",
                goal=question,
                query=question,
                filters=_filters(request),
                capsule=capsule,
                retrieval=retrieval,
            )
            return AskOutcome(result, draft.note, trace_id)


__all__ = ["DEFAULT_CONTEXT_BUDGET_TOKENS", "AskFace", "AskOutcome", "AskRequest"]
