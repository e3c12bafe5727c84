"""Checking a draft against its closed Capsule, claim by claim (``claim-verification@1.0``).

A claim is one sentence of the draft with its ``[n]`` citation markers
removed; spans are UTF-16 code-unit offsets into the draft. A citation is
valid only when it names a passage of the Capsule whose freshness receipt
says ``unchanged``; anything else is a rejected citation with its reason.

The verifier here runs no model. A claim is ``supported`` when the passages
it cites contain it (the whole sentence, or every content word and number
of it); a claim that cites valid passages which do not contain it is
``uncertain``; a claim without a valid citation is ``insufficient``.
Nothing is ever marked ``contradicted``: absence of support is not a
contradiction. Every substantive claim must be supported, or the answer is
withheld (``abstained``) with the reason.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.engine.canonical import hash_canonical, sha256_text

SCHEMA_VERSION: Final = "1.0"
VERIFIER: Final = "gno-trio-lexical-containment-v1"
VERIFIER_FINGERPRINT: Final = sha256_text(VERIFIER)
_MARKER: Final = re.compile(r"\[(\d{1,4})\]")
_ANY_BRACKET: Final = re.compile(r"\[[^\]\n]{0,24}\]")
_SENTENCE: Final = re.compile(
    r"(?:`[^`\n]*`|[^`\n.!?]|[.!?](?=[^\s\[]))+(?:[.!?]+|(?=\n)|$)(?:[ \t]*(?:\[[^\]\n]{0,24}\])+)?"
)
"""A sentence: up to a full stop that ends it (not one inside a number, a name or a code
span) or the end of its line, with the citation markers that follow it."""
_WORD: Final = re.compile(r"\w+", re.UNICODE)
_STOP_WORDS: Final = (
    "the a an and or of to in on at for with by from is are was were be been it this that "
    "these those as its their his her our your not no"
)
_STOP: Final = frozenset(_STOP_WORDS.split())
MIN_CLAIM_WORDS: Final = 3
ABSTENTION_TEXT: Final = {
    "coverage_below_threshold": (
        "The answer is withheld: not every claim is supported by the Capsule's passages."
    ),
    "no_substantive_claims": (
        "The answer is withheld: the draft makes no claim that can be checked."
    ),
    "citation_hygiene_failed": (
        "The answer is withheld: some citations name passages that are missing, changed or "
        "outside the Capsule."
    ),
    "contradiction_detected": "The answer is withheld: the passages contradict a claim.",
}


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _content_words(text: str) -> set[str]:
    return {w for w in (m.casefold() for m in _WORD.findall(text)) if w not in _STOP}


@dataclass(slots=True)
class _Claim:
    text: str
    start: int
    end: int
    markers: list[tuple[str, int, int, int | None]] = field(default_factory=list)
    """(marker text, start, end, passage number or None when malformed)."""


def split_claims(draft: str) -> list[_Claim]:
    """The draft's sentences as claims, each with the citation markers that follow it."""
    claims = []
    for match in _SENTENCE.finditer(draft):
        chunk = match.group(0)
        markers = []
        for bracket in _ANY_BRACKET.finditer(chunk):
            number = _MARKER.fullmatch(bracket.group(0))
            markers.append(
                (
                    bracket.group(0),
                    match.start() + bracket.start(),
                    match.start() + bracket.end(),
                    int(number.group(1)) if number else None,
                )
            )
        bare = _ANY_BRACKET.sub("", chunk)
        text = " ".join(bare.split())
        if not text:
            continue
        lead = len(chunk) - len(chunk.lstrip())
        claims.append(
            _Claim(text, match.start() + lead, match.start() + len(chunk.rstrip()), markers)
        )
    return claims


def _supported(claim: str, passages: Sequence[str]) -> float | None:
    """The verifier's confidence that the passages state the claim, or None."""
    folded = _fold(claim).rstrip(".!? ")
    joined = " ".join(_fold(p) for p in passages)
    if folded and folded in joined:
        return 1.0
    wanted = _content_words(claim)
    if not wanted:
        return None
    have = _content_words(" ".join(passages))
    numbers = {w for w in wanted if w.isdigit()}
    if not numbers <= have:
        return None
    coverage = len(wanted & have) / len(wanted)
    return round(coverage, 4) if coverage >= 0.9 else None


def _reference(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: item[key]
        for key in (
            "evidenceId",
            "uri",
            "startLine",
            "endLine",
            "text",
            "sourceHash",
            "mirrorHash",
            "passageHash",
        )
    }


def verify_claims(
    draft: str, capsule: Mapping[str, Any], freshness: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(claim-verification@1.0, semantic state)`` for ``draft`` against the Capsule."""
    started = time.perf_counter()
    evidence = list(capsule["evidence"])
    state = {e["evidenceId"]: e["contentStatus"] for e in freshness["evidence"]}
    claims_out: list[dict[str, Any]] = []
    rejected_all: list[dict[str, Any]] = []
    counts = {"supported": 0, "contradicted": 0, "insufficient": 0, "uncertain": 0}
    candidates = 0
    for claim in split_claims(draft):
        if len(_WORD.findall(claim.text)) < MIN_CLAIM_WORDS:
            continue
        candidates += 1
        cited: list[Mapping[str, Any]] = []
        rejected: list[dict[str, Any]] = []
        for marker, start, end, number in claim.markers:
            item = (
                evidence[number - 1]
                if number is not None and 1 <= number <= len(evidence)
                else None
            )
            reason = None
            if number is None:
                reason = "malformed_citation"
            elif item is None:
                reason = "out_of_capsule"
            elif state.get(item["evidenceId"]) == "missing":
                reason = "evidence_missing"
            elif state.get(item["evidenceId"]) != "unchanged":
                reason = "evidence_stale"
            if reason is None and item is not None:
                if item not in cited:
                    cited.append(item)
                continue
            rejected.append(
                {
                    "marker": marker,
                    "start": _utf16(draft, start),
                    "end": _utf16(draft, end),
                    "evidenceId": item["evidenceId"] if item is not None else None,
                    "reason": reason,
                }
            )
        rejected_all.extend(rejected)
        confidence = (
            _supported(claim.text, [str(item["text"]) for item in cited]) if cited else None
        )
        if not cited:
            status, rationale = "insufficient", "no_valid_evidence"
        elif confidence is None:
            status, rationale = "uncertain", "semantic_judgment_unavailable"
        else:
            status, rationale = "supported", "semantic_entailment"
        counts[status] += 1
        start16, end16 = _utf16(draft, claim.start), _utf16(draft, claim.end)
        claims_out.append(
            {
                "claimId": hash_canonical(
                    {
                        "capsuleId": capsule["capsuleId"],
                        "start": start16,
                        "end": end16,
                        "text": claim.text,
                    }
                ),
                "text": claim.text,
                "start": start16,
                "end": max(end16, start16 + 1),
                "status": status,
                "confidence": confidence if status == "supported" else None,
                "rationaleCode": rationale,
                "verifierFingerprint": VERIFIER_FINGERPRINT if status == "supported" else None,
                "evidence": [_reference(item) for item in cited]
                if status != "insufficient"
                else [],
                "rejectedCitations": rejected,
            }
        )
    total = len(claims_out)
    abstention: str | None = None
    if total == 0:
        abstention = "no_substantive_claims"
    elif rejected_all:
        abstention = "citation_hygiene_failed"
    elif counts["supported"] < total:
        abstention = "coverage_below_threshold"
    abstained = abstention is not None
    verification = {
        "schemaVersion": SCHEMA_VERSION,
        "coordinateSpace": "utf16_code_units",
        "capsuleId": capsule["capsuleId"],
        "answerHash": sha256_text(draft),
        "coverageThreshold": 1,
        "claims": claims_out,
        "rejectedCitations": rejected_all,
        "coverage": {
            "totalClaims": total,
            "supportedClaims": counts["supported"],
            "contradictedClaims": counts["contradicted"],
            "insufficientClaims": counts["insufficient"],
            "uncertainClaims": counts["uncertain"],
            "supportedRatio": round(counts["supported"] / total, 6) if total else 0,
        },
        "answerStatus": "abstained" if abstained else "verified",
        "abstained": abstained,
        "abstentionReason": abstention,
        "abstentionText": ABSTENTION_TEXT[abstention] if abstention is not None else None,
    }
    semantic = {
        "status": "completed",
        "reason": "verified" if candidates else "no_candidates",
        "schemaRequested": False,
        "schemaEnforced": False,
        "modelFingerprint": None,
        "verifierFingerprint": VERIFIER_FINGERPRINT,
        "candidateClaims": candidates,
        "verifiedClaims": counts["supported"],
        "unresolvedClaims": total - counts["supported"],
        "modelCalls": 0,
        "durationMs": round((time.perf_counter() - started) * 1000, 3),
    }
    return verification, semantic


__all__ = ["ABSTENTION_TEXT", "VERIFIER", "split_claims", "verify_claims"]
