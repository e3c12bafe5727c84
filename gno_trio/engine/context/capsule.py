"""Assembling a Context Capsule (``context-capsule-v1``, schema version 1.1).

A Capsule is a closed JSON object. :class:`CapsuleFrame` holds everything
that does not depend on which passages were chosen (scope, retrieval
request, capability states, fingerprints, egress lineage); :func:`assemble`
adds the chosen evidence with its guidance, coverage and omission audit and
then seals it:

* ``capsuleId`` is the SHA-256 of the canonical JSON of the Capsule without
  the id itself and without the two measured fields (``usedBytes``,
  ``usedTokens``), so it names the content, not its accounting;
* the budget is spent on what the model reads: the canonical JSON of the
  ``gno-context-agent-v1`` projection, which carries every passage, span,
  hash, gap and count once. ``usedBytes`` is its UTF-8 size and
  ``usedTokens`` the engine's one token estimate of it (about four
  characters per token, :func:`~gno_trio.engine.ingest.chunker.estimate_tokens`),
  both found by iterating to a fixed point because the numbers are part of
  what they measure. The full Capsule in ``structuredContent`` is for the
  application and is bounded by the passages the budget admitted;
* no tokenizer is available, so the estimator is ``unicode_conservative``
  with a ``tokenizer_unavailable`` fallback and a ``token_estimate_used``
  warning; the byte limit (four bytes per token unless given) keeps text
  outside ASCII, where a character weighs more, from overrunning it.

Nothing here runs a model. Semantic search, reranking and graph expansion
are reported as requested-but-unavailable whenever the depth policy asks for
them, and their model fingerprints are null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.engine.canonical import hash_canonical, utf8_size
from gno_trio.engine.context import codes
from gno_trio.engine.context.candidates import Passage
from gno_trio.engine.context.guidance import GuidanceRule
from gno_trio.engine.context.lineage import Policies
from gno_trio.engine.context.projection import agent_projection_text
from gno_trio.engine.context.request import (
    NormalizedRequest,
)
from gno_trio.engine.context.selection import OMISSION_REASONS, Omission, Selection
from gno_trio.engine.ingest.chunker import CHARS_PER_TOKEN, estimate_tokens
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.1"
MAX_OMISSION_ITEMS: Final = 100

ESTIMATOR: Final = "unicode_conservative"
_MEASURED: Final = ("usedBytes", "usedTokens")
_FIXED_POINT_ROUNDS: Final = 16


def _capability_state(requested: bool, reason: str) -> dict[str, Any]:
    """A model-backed capability's state: not requested, or requested and unavailable.

    This server has no embedding model, reranker or graph stage to run, so a
    requested capability is always found unavailable, never ``used``.
    """
    if not requested:
        return {
            "requested": False,
            "attempted": False,
            "outcome": "not_requested",
            "fallbackReasons": [],
        }
    return {
        "requested": True,
        "attempted": True,
        "outcome": "unavailable",
        "fallbackReasons": [reason],
    }


def _fallbacks(request: NormalizedRequest) -> list[dict[str, str]]:
    found = [{"code": "tokenizer_unavailable", "capability": "token_count"}]
    if request.semantic_requested:
        found.append({"code": "embedding_unavailable", "capability": "semantic_search"})
    if request.rerank_requested:
        found.append({"code": "reranking_unavailable", "capability": "reranking"})
    if request.graph_requested:
        found.append({"code": "graph_unavailable", "capability": "graph_expansion"})
    return sorted(found, key=lambda item: (item["code"], item["capability"]))


@dataclass(frozen=True, slots=True)
class CapsuleFrame:
    """The selection-independent part of a Capsule, built once per compile."""

    request: NormalizedRequest
    index_name: str
    facets: tuple[str, ...]
    query_variants: tuple[str, ...]
    index_before: str
    index_after: str
    config_fingerprint: str
    rules: tuple[GuidanceRule, ...]
    policies: Policies
    lineage: Mapping[str, Any]
    collection_lineages: Mapping[str, Mapping[str, Any]]

    def scope(self) -> dict[str, Any]:
        request = self.request
        return {
            "indexName": self.index_name,
            "collections": list(request.collections),
            "uriPrefix": request.uri_prefix,
            "tagsAll": list(request.tags_all),
            "tagsAny": list(request.tags_any),
            "categories": list(request.categories),
            "since": request.since_instant,
            "until": request.until_instant,
        }

    def retrieval(self) -> dict[str, Any]:
        request = self.request
        return {
            "depthPolicy": request.depth_policy,
            "facets": list(self.facets),
            "queryVariants": list(self.query_variants),
            "expansionPolicy": "deterministic_only",
            "request": {
                "author": request.author,
                "lang": request.lang,
                "intent": request.intent,
                "exclude": list(request.exclude),
                "minScore": request.min_score,
                "queryModes": [{"mode": mode, "text": text} for mode, text in request.query_modes],
                "limit": request.limit,
                "candidateLimit": request.candidate_limit,
                "graphRequested": request.graph_requested,
                "rerankRequested": request.rerank_requested,
            },
            "capabilityStates": {
                "semanticSearch": _capability_state(
                    request.semantic_requested, "embedding_unavailable"
                ),
                "reranking": _capability_state(request.rerank_requested, "reranking_unavailable"),
                "graphExpansion": _capability_state(request.graph_requested, "graph_unavailable"),
            },
            "indexSnapshot": {
                "before": self.index_before,
                "after": self.index_after,
                "stable": True,
            },
        }

    def budget(self) -> dict[str, Any]:
        request = self.request
        return {
            "authority": "canonical_json",
            "requestedTokens": request.budget_tokens,
            "requestedBytes": request.budget_bytes,
            "safetyMarginTokens": request.safety_margin_tokens,
            "safetyMarginBytes": request.safety_margin_bytes,
            "usedTokens": 1,
            "usedBytes": 0,
            "estimator": ESTIMATOR,
            "tokenizerFingerprint": None,
        }

    @property
    def room(self) -> int:
        """Projection bytes the budget admits after its safety margins."""
        request = self.request
        return min(
            request.budget_bytes - request.safety_margin_bytes,
            (request.budget_tokens - request.safety_margin_tokens) * CHARS_PER_TOKEN,
        )

    def fits(self, capsule: Mapping[str, Any]) -> bool:
        budget = capsule["budget"]
        request = self.request
        return bool(
            budget["usedBytes"] + request.safety_margin_bytes <= request.budget_bytes
            and budget["usedTokens"] + request.safety_margin_tokens <= request.budget_tokens
        )

    def static_fields(self) -> dict[str, Any]:
        scope = self.scope()
        retrieval = self.retrieval()
        fallbacks = _fallbacks(self.request)
        retrieval_fingerprint = hash_canonical(
            {
                "goal": self.request.goal,
                "query": self.request.query,
                "scope": scope,
                "retrieval": retrieval,
                "fallbacks": fallbacks,
                "contexts": sorted(rule.context_id for rule in self.rules),
            }
        )
        return {
            "schemaVersion": SCHEMA_VERSION,
            "coordinateSpace": "canonical_mirror",
            "goal": self.request.goal,
            "query": self.request.query,
            "scope": scope,
            "budget": self.budget(),
            "retrieval": retrieval,
            "fingerprints": {
                "config": self.config_fingerprint,
                "retrieval": retrieval_fingerprint,
                "embeddingModel": None,
                "rerankModel": None,
                "tokenizer": None,
            },
            "fallbacks": fallbacks,
            "egressLineage": dict(self.lineage),
        }


def _evidence(frame: CapsuleFrame, passage: Passage, rank: int, ids: list[str]) -> dict[str, Any]:
    ref = passage.ref
    policy = frame.policies.get(passage.collection)
    return {
        "evidenceId": passage.candidate_id,
        "uri": ref.uri,
        "docid": ref.docid,
        "collection": passage.collection,
        "title": passage.title,
        "heading": passage.heading,
        "startLine": ref.start_line,
        "endLine": ref.end_line,
        "text": passage.text,
        "sourceHash": ref.source_hash,
        "mirrorHash": ref.mirror_hash,
        "passageHash": ref.passage_hash,
        "modifiedAt": passage.modified_at,
        "documentDate": passage.document_date,
        "observedAt": None,
        "contextIds": ids,
        "retrievalRank": passage.retrieval_rank,
        "selectionRank": rank,
        "retrievalSources": list(passage.retrieval_sources),
        "facets": sorted(passage.facets),
        "trust": "untrusted",
        "egress": policy[0] if policy else "unclassified",
        "egressLineage": dict(frame.collection_lineages[passage.collection]),
    }


def _coverage(
    facets: Sequence[str], evidence: Sequence[Mapping[str, Any]], matched: frozenset[str]
) -> dict[str, Any]:
    supporting: dict[str, list[str]] = {}
    for item in evidence:
        for facet in item["facets"]:
            supporting.setdefault(facet, []).append(item["evidenceId"])
    unresolved = [facet for facet in facets if facet not in supporting]
    return {
        "complete": not unresolved,
        "requestedFacets": list(facets),
        "coveredFacets": [
            {"facet": facet, "evidenceIds": sorted(set(supporting[facet]))}
            for facet in facets
            if facet in supporting
        ],
        "unresolvedFacets": unresolved,
        "gaps": [
            {
                "facet": facet,
                "code": "global_budget_exhausted" if facet in matched else "facet_not_found",
            }
            for facet in unresolved
        ],
    }


def _omissions(omissions: Sequence[Omission], audit_limit: int) -> dict[str, Any]:
    """The omission audit: exact counts, and the first ``audit_limit`` entries."""
    unique: dict[str, Omission] = {}
    for item in sorted(omissions, key=Omission.audit_key):
        unique.setdefault(item.ref.identity, item)
    kept = list(unique.values())
    counts = dict.fromkeys(OMISSION_REASONS, 0)
    for item in kept:
        counts[item.reason] += 1
    listed = kept[: max(0, min(audit_limit, MAX_OMISSION_ITEMS))]
    return {
        "total": len(kept),
        "items": [
            {"candidateId": item.ref.identity, **item.ref.as_fields(), "reason": item.reason}
            for item in listed
        ],
        "reasonCounts": counts,
        "truncated": len(listed) < len(kept),
    }


def assemble(
    frame: CapsuleFrame, selection: Selection, *, audit_limit: int = MAX_OMISSION_ITEMS
) -> dict[str, Any]:
    """The sealed Capsule for ``selection`` (whether or not it fits its budget).

    ``audit_limit`` caps how many omitted candidates are listed by location.
    """
    payload = frame.static_fields()
    guidance: dict[str, GuidanceRule] = {}
    evidence = []
    for rank, passage in enumerate(selection.selected, 1):
        bound = [rule for rule in frame.rules if rule.applies_to(passage)]
        for rule in bound:
            guidance[rule.context_id] = rule
        ids = sorted({rule.context_id for rule in bound})
        evidence.append(_evidence(frame, passage, rank, ids))
    omissions = _omissions(selection.omissions, audit_limit)
    coverage = _coverage(frame.facets, evidence, selection.matched_facets)
    warnings = [{"code": "token_estimate_used"}]
    if not coverage["complete"]:
        warnings.append({"code": "incomplete_coverage"})
    if omissions["truncated"]:
        warnings.append({"code": "omissions_truncated"})
    payload.update(
        {
            "capabilities": {
                "lexicalSearch": True,
                "semanticSearch": False,
                "reranking": False,
                "graphExpansion": False,
                "exactTokenCount": False,
                "configuredContext": bool(guidance),
                "egressPolicy": True,
            },
            "guidance": {
                "extractiveOnly": True,
                "evidenceTrust": "untrusted_data",
                "instructionBoundary": "hard_delimited",
                "configuredContexts": [guidance[key].as_guidance() for key in sorted(guidance)],
            },
            "evidence": evidence,
            "coverage": coverage,
            "omissions": omissions,
            "truncated": omissions["reasonCounts"]["global_budget"] > 0,
            "warnings": sorted(warnings, key=lambda item: item["code"]),
        }
    )
    return seal(payload)


def capsule_id(capsule: Mapping[str, Any]) -> str:
    """The identity of a Capsule's content (its id and measured sizes excluded)."""
    budget = {k: v for k, v in capsule["budget"].items() if k not in _MEASURED}
    content = {k: v for k, v in capsule.items() if k != "capsuleId"}
    return hash_canonical({**content, "budget": budget})


def seal(payload: dict[str, Any]) -> dict[str, Any]:
    """Add ``capsuleId`` and the measured size of the model-visible projection."""
    identity = capsule_id(payload)
    size, tokens = 0, 1
    for _ in range(_FIXED_POINT_ROUNDS):
        budget = {**payload["budget"], "usedBytes": size, "usedTokens": tokens}
        capsule = {**payload, "budget": budget, "capsuleId": identity}
        text = agent_projection_text(capsule)
        measured = (utf8_size(text), max(1, estimate_tokens(text)))
        if measured == (size, tokens):
            return capsule
        size, tokens = measured
    raise GnoError(codes.RUNTIME_ERROR, "Capsule size accounting did not settle")
