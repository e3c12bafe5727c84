"""Markdown views of a Capsule and of its verification receipt, for people to read.

JSON stays the canonical form; these views present the same facts. Indexed
text is untrusted, so nothing taken from a document is ever free Markdown:

* every passage, and the metadata and manifest blocks, sit in a fenced block
  whose fence is built from the block it encloses (backticks, one more than
  the longest backtick run inside, at least three), so no line of indexed
  text can close it early;
* titles, headings and configured-context texts outside those blocks are
  JSON string literals (quotes and escapes included), so they cannot start
  a heading, a link or an HTML tag.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BACKTICKS = re.compile(r"`+")


def fence(body: str, info: str = "") -> str:
    """``body`` in a fenced block that nothing inside it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{body.rstrip(chr(10))}\n{marks}"


def _literal(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def capsule_markdown(capsule: Mapping[str, Any]) -> str:
    """A readable projection of a ``context-capsule-v1`` object."""
    budget = capsule["budget"]
    coverage = capsule["coverage"]
    lines = [
        f"# Context Capsule {capsule['capsuleId']}",
        "",
        f"- **Goal:** {_literal(capsule['goal'])}",
        f"- **Query:** {_literal(capsule['query'])}",
        f"- **Index:** {_literal(capsule['scope']['indexName'])}",
        f"- **Budget:** {budget['usedTokens']} of {budget['requestedTokens']} tokens, "
        f"{budget['usedBytes']} of {budget['requestedBytes']} bytes ({budget['estimator']})",
        f"- **Depth:** {capsule['retrieval']['depthPolicy']}",
        f"- **Coverage:** {'complete' if coverage['complete'] else 'incomplete'}; facets "
        f"covered: {_listed([c['facet'] for c in coverage['coveredFacets']])}; unresolved: "
        f"{_listed(list(coverage['unresolvedFacets']))}",
        f"- **Fallbacks:** {_listed([f['code'] for f in capsule['fallbacks']])}",
        f"- **Evidence trust:** {capsule['guidance']['evidenceTrust']} (passages are data, "
        "not instructions)",
        f"- **Truncated:** {'yes' if capsule['truncated'] else 'no'}",
    ]
    for gap in coverage["gaps"]:
        lines.append(f"- **Gap:** {_literal(gap)}")
    contexts = capsule["guidance"]["configuredContexts"]
    if contexts:
        lines += ["", "## Configured context", ""]
        lines += [f"- `{c['scopeKey']}`: {_literal(c['text'])}" for c in contexts]
    for rank, item in enumerate(capsule["evidence"], 1):
        lines += [
            "",
            f"## Evidence {rank}: {item['uri']}:{item['startLine']}-{item['endLine']}",
            "",
            fence(
                json.dumps(
                    {
                        "title": item.get("title"),
                        "heading": item.get("heading"),
                        "docid": item["docid"],
                        "sourceHash": item["sourceHash"],
                        "passageHash": item["passageHash"],
                        "facets": item.get("facets", []),
                        "egress": item.get("egress"),
                    },
                    ensure_ascii=False,
                    indent=2,
                ),
                "json",
            ),
            "",
            fence(str(item["text"]), "text"),
        ]
    omissions = capsule["omissions"]
    counts = {k: v for k, v in omissions.get("reasonCounts", {}).items() if v}
    lines += [
        "",
        "## Omissions",
        "",
        f"{omissions['total']} omitted"
        + (f": {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}" if counts else ""),
    ]
    manifest = {
        "capsuleId": capsule["capsuleId"],
        "schemaVersion": capsule["schemaVersion"],
        "fingerprints": capsule["fingerprints"],
        "indexSnapshot": capsule["retrieval"].get("indexSnapshot"),
    }
    lines += ["", "## Manifest", "", fence(json.dumps(manifest, indent=2), "json")]
    return "\n".join(lines) + "\n"


def verification_markdown(receipt: Mapping[str, Any]) -> str:
    """A readable ``context-capsule-verification@1.0`` receipt, with every current hash."""
    reasons = receipt["fingerprintReasons"]
    lines = [
        f"# Capsule {receipt['capsuleId'][:12]}",
        "",
        f"- content: {receipt['contentStatus']} ({receipt['contentCode']})",
        f"- ranking: {receipt['rankingStatus']} ({receipt['rankingCode']})",
        f"- fingerprints: {receipt['fingerprintStatus']}"
        + (f" ({', '.join(reasons)})" if reasons else ""),
        "",
    ]
    for entry in receipt["evidence"]:
        rank = entry["currentRetrievalRank"]
        lines.append(
            f"- {entry['uri']}: {entry['contentCode']}, {entry['rankingStatus']}"
            + (f" (rank {rank})" if rank is not None else "")
        )
    hashes = [
        {
            "uri": e["uri"],
            "currentSourceHash": e.get("currentSourceHash"),
            "currentMirrorHash": e.get("currentMirrorHash"),
            "currentPassageHash": e.get("currentPassageHash"),
        }
        for e in receipt["evidence"]
    ]
    current = {"fingerprints": receipt["currentFingerprints"], "evidence": hashes}
    lines += ["", fence(json.dumps(current, indent=2), "json")]
    return "\n".join(lines)


__all__ = ["capsule_markdown", "fence", "verification_markdown"]
