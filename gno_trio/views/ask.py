"""The reader's view of an Ask answer, the same on every surface (MCP text, CLI output).

Status and coverage first, who wrote the draft, the answer (or why it was
withheld), each claim with its verdict and exact ``gno://`` line spans, then
the sources cited; with ``show_sources`` also every passage the Capsule kept.
"""

from __future__ import annotations

from gno_trio.engine import AskOutcome


def ask_summary(outcome: AskOutcome, *, markdown: bool = False, show_sources: bool = False) -> str:
    result = outcome.result
    verification = result.get("verification")
    bullet = "- " if markdown else "  "
    lines: list[str] = []
    if verification is not None:
        claims = verification["claims"]
        coverage = claims["coverage"]
        lines.append(
            f"Answer {claims['answerStatus']}: {coverage['supportedClaims']} of "
            f"{coverage['totalClaims']} claims supported by the Capsule "
            f"(freshness: {verification['freshness']['contentStatus']})"
        )
        if claims["abstentionReason"]:
            lines.append(f"Withheld because: {claims['abstentionReason']}")
    lines.append(outcome.note)
    if "answer" in result:
        lines += ["", result["answer"], ""]
    if verification is not None:
        for claim in verification["claims"]["claims"]:
            spans = ", ".join(
                f"{ref['uri']}:{ref['startLine']}-{ref['endLine']} ({ref['evidenceId'][:12]})"
                for ref in claim["evidence"]
            )
            lines.append(
                f"{bullet}[{claim['status']}] {claim['text']}" + (f" <- {spans}" if spans else "")
            )
    for citation in result.get("citations", []):
        lines.append(
            f"Source: {citation['uri']} lines {citation['startLine']}-{citation['endLine']}"
        )
    if "answer" not in result:
        for hit in result["results"]:
            anchor = f":{hit['line']}" if "line" in hit else ""
            lines.append(f"{bullet}{hit['uri']}{anchor} ({hit['score']:.3f})")
    if show_sources and verification is not None:
        lines.append("Capsule evidence:")
        lines += [
            f"{bullet}{item['uri']} lines {item['startLine']}-{item['endLine']}"
            for item in verification["capsule"]["evidence"]
        ]
    return "\n".join(lines).strip()


__all__ = ["ask_summary"]
