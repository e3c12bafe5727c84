"""The ``gno-context-agent-v1`` projection: what a model reads of a Capsule.

The full Capsule goes to the application as ``structuredContent``; the model
gets this compact, versioned view of the same facts once, as canonical JSON.
Key names and tuple positions are a published contract:

* ``v`` version, ``id`` Capsule id;
* ``b`` requested tokens, requested bytes, used tokens, used bytes,
  estimator, tokenizer fingerprint;
* ``r`` depth policy, index, config, retrieval, embedding-model and
  rerank-model fingerprints, enabled capability names, fallbacks as
  ``capability:code``;
* ``e`` one tuple per passage: URI, start line, end line, source hash,
  mirror hash, passage hash, exact text, title, heading, context ids, egress;
* ``g`` evidence trust, instruction boundary, guidance tuples (context id,
  scope type, scope key, text);
* ``c`` covered facets, then ``[facet, gap code]`` pairs;
* ``o`` total omissions, then the non-zero ``[reason, count]`` pairs;
* ``t`` whether the global evidence budget truncated the Capsule;
* ``trust`` always ``untrusted_data``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gno_trio.engine.canonical import canonical_json
from gno_trio.engine.context.selection import OMISSION_REASONS

PROJECTION_VERSION: Final = "gno-context-agent-v1"
_CAPABILITIES: Final = (
    "lexicalSearch",
    "semanticSearch",
    "reranking",
    "graphExpansion",
    "exactTokenCount",
    "configuredContext",
    "egressPolicy",
)


def agent_projection(capsule: Mapping[str, Any]) -> dict[str, Any]:
    budget = capsule["budget"]
    retrieval = capsule["retrieval"]
    fingerprints = capsule["fingerprints"]
    guidance = capsule["guidance"]
    coverage = capsule["coverage"]
    omissions = capsule["omissions"]
    return {
        "v": PROJECTION_VERSION,
        "id": capsule["capsuleId"],
        "b": [
            budget["requestedTokens"],
            budget["requestedBytes"],
            budget["usedTokens"],
            budget["usedBytes"],
            budget["estimator"],
            budget["tokenizerFingerprint"],
        ],
        "r": [
            retrieval["depthPolicy"],
            retrieval["indexSnapshot"]["after"],
            fingerprints["config"],
            fingerprints["retrieval"],
            fingerprints["embeddingModel"],
            fingerprints["rerankModel"],
            [name for name in _CAPABILITIES if capsule["capabilities"].get(name)],
            [f"{item['capability']}:{item['code']}" for item in capsule["fallbacks"]],
        ],
        "e": [
            [
                item["uri"],
                item["startLine"],
                item["endLine"],
                item["sourceHash"],
                item["mirrorHash"],
                item["passageHash"],
                item["text"],
                item["title"],
                item["heading"],
                item["contextIds"],
                item["egress"],
            ]
            for item in capsule["evidence"]
        ],
        "g": [
            guidance["evidenceTrust"],
            guidance["instructionBoundary"],
            [
                [entry["contextId"], entry["scopeType"], entry["scopeKey"], entry["text"]]
                for entry in guidance["configuredContexts"]
            ],
        ],
        "c": [
            [entry["facet"] for entry in coverage["coveredFacets"]],
            [[gap["facet"], gap["code"]] for gap in coverage["gaps"]],
        ],
        "o": [
            omissions["total"],
            [
                [reason, omissions["reasonCounts"][reason]]
                for reason in OMISSION_REASONS
                if omissions["reasonCounts"].get(reason)
            ],
        ],
        "t": capsule["truncated"],
        "trust": "untrusted_data",
    }


def agent_projection_text(capsule: Mapping[str, Any]) -> str:
    """The projection as the canonical JSON text a model sees."""
    return canonical_json(agent_projection(capsule))
