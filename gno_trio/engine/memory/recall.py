"""Recall: budgeted, cited, current facts for explicit scopes.

Scope filtering and the exclusion of superseded facts happen inside the
SQL query, before any limit, so a busy scope can never push another
scope's facts out of the candidate set or leak them in. The lexical leg is
BM25 over the fact documents (any query term may match); hits are read from
the validated projection of their files, and the selection honours both the
fact and the token budget (tokens estimated as UTF-8 bytes / 4, rounded up).
With vectors, the legs are fused as ``query`` fuses them (evidence weighted,
see :mod:`gno_trio.engine.search.evidence`): BM25 counts as much as the
index holds the query's words, so a question in one language over facts in
another ranks by meaning even when a stray word matches an unrelated fact.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.egress.policy import strictest
from gno_trio.engine.facts import normalize_text
from gno_trio.engine.memory import receipts
from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.queries import StoredFact, fact_from_row
from gno_trio.engine.search.evidence import Evidence, lexical_evidence, lexical_weight, weigh
from gno_trio.engine.search.querygrammar import LexicalQuery, parse_query
from gno_trio.engine.store.database import Connection, StoreError
from gno_trio.engine.store.memory import FactStore
from gno_trio.errors import GnoError

LEXICAL_LIMIT = 32
DEFAULT_MAX_FACTS = 8
DEFAULT_MAX_TOKENS = 512
SEMANTIC_UNAVAILABLE = "no embedding model available"


@dataclass(frozen=True, slots=True)
class CollectionPolicy:
    name: str
    policy: str
    source: str


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


def lineage(policies: Sequence[CollectionPolicy]) -> dict[str, Any]:
    """Egress lineage: the strictest policy among the sources, with a digest."""
    unique = {p.name: p for p in policies}
    sources = [
        {"collection": p.name, "policy": p.policy, "source": p.source}
        for p in sorted(unique.values(), key=lambda p: p.name)
    ]
    effective = strictest(s["policy"] for s in sources)
    digest = hashlib.sha256(
        json.dumps(
            {"effectivePolicy": effective, "sources": sources}, separators=(",", ":")
        ).encode("utf-8")
    ).hexdigest()
    return {"effectivePolicy": effective, "digest": digest, "sources": sources}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lexical_candidates(
    facts: FactStore, match: str, collection: str, scopes: Sequence[str], limit: int
) -> list[tuple[StoredFact, float]]:
    """Current in-scope facts matching ``match`` with their BM25 (higher is better), best
    first, at most ``limit``."""
    return [
        (fact_from_row(row), -rank) for row, rank in facts.ranked(match, collection, scopes, limit)
    ]


def recall_query(query: str) -> LexicalQuery:
    """The parsed natural-language recall query (its ``any_match`` is the FTS5 expression).

    Recall queries are phrased like the fact they look for, so a stray
    double quote (``a 27" screen``) is not a syntax error: when the query
    grammar refuses the text as typed, it is tried again without quotes.
    ``MEMORY_QUERY_REQUIRED`` when no searchable term is left.
    """
    text = normalize_text(query)
    for attempt in (text, text.replace('"', " ")):
        try:
            return parse_query(attempt)
        except GnoError:
            continue
    raise GnoError("MEMORY_QUERY_REQUIRED", f"Query has no searchable terms: {query!r}")


def candidate_limit(max_facts: int) -> int:
    """How many candidates each leg brings: enough to fill the largest budget."""
    return max(LEXICAL_LIMIT, max_facts)


def _fuse(
    conn: Connection,
    query: LexicalQuery,
    lexical: Sequence[tuple[StoredFact, float]],
    vector: Sequence[tuple[StoredFact, float]] | None,
) -> list[tuple[StoredFact, float]]:
    """Facts of both legs by the evidence-weighted fusion ``query`` uses, best first.

    Each fact's BM25 and cosine are min-max normalised over the candidates;
    BM25 weighs by the query's lexical coverage and strength. Without the
    vector leg, BM25 alone ranks (weight 1).
    """
    facts: dict[str, StoredFact] = {}
    evidence: dict[str, Evidence] = {}
    for fact, bm25 in lexical:
        facts.setdefault(fact.uri, fact)
        evidence.setdefault(fact.uri, Evidence()).bm25 = bm25
    weight = 1.0
    if vector is not None:
        for fact, cosine in vector:
            facts.setdefault(fact.uri, fact)
            evidence.setdefault(fact.uri, Evidence()).cosine = cosine
        top = max((bm25 for _, bm25 in lexical), default=0.0)
        weight = lexical_weight(lexical_evidence(conn, query), top)
    weigh(evidence.values(), weight, 0)
    order = sorted(evidence, key=lambda uri: (-evidence[uri].score, uri))
    return [(facts[uri], evidence[uri].score) for uri in order]


def recall(
    conn: Connection,
    fact_store: FactStore,
    *,
    query: str,
    collection: CollectionPolicy,
    scopes: Sequence[str],
    identity: Identity,
    max_facts: int = DEFAULT_MAX_FACTS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    vector_hits: Sequence[tuple[StoredFact, float]] | None = None,
    semantic_unavailable: str = SEMANTIC_UNAVAILABLE,
) -> dict[str, Any]:
    """``memory-recall@1.0`` for already-validated arguments.

    The candidate limit grows with ``max_facts`` so that every budget the
    input schema allows (up to 64 facts) can actually be filled. With
    ``vector_hits`` (the vector leg ran: facts with their cosine to the query)
    the two legs are fused by URI, weighing each by its evidence, and
    ``retrieval.mode`` is ``hybrid``.
    """
    parsed = recall_query(query)
    limit = candidate_limit(max_facts)
    try:
        lexical = lexical_candidates(fact_store, parsed.any_match, collection.name, scopes, limit)
        fused = _fuse(conn, parsed, lexical, vector_hits)
    except StoreError as exc:
        raise GnoError("MEMORY_QUERY_FAILED", f"Recall query failed: {exc}") from exc
    fact_lineage = lineage([collection])
    facts: list[dict[str, Any]] = []
    used = 0
    omitted = 0
    for hit, score in fused:
        cost = estimate_tokens(hit.record.text)
        if len(facts) >= max_facts or used + cost > max_tokens:
            omitted += 1
            continue
        used += cost
        fact = hit.as_dict()
        fact["score"] = round(score, 8)
        fact["spanHash"] = hit.record.content_hash
        fact["egressLineage"] = fact_lineage
        facts.append(fact)
    result: dict[str, Any] = {
        "facts": facts,
        "receipt": receipts.issue(
            identity, now_iso(), [f["docid"] for f in facts], [f["spanHash"] for f in facts]
        ),
        "budget": {
            "maxFacts": max_facts,
            "maxTokens": max_tokens,
            "usedTokens": used,
            "omitted": omitted,
        },
        "retrieval": (
            {"mode": "hybrid"}
            if vector_hits is not None
            else {"mode": "lexical", "semanticUnavailable": semantic_unavailable}
        ),
    }
    if facts:
        result["egressLineage"] = fact_lineage
    else:
        result["hint"] = (
            "No memories in scope yet. Store one with: "
            f'gno-trio remember "<fact>" --collection {collection.name} --scope {scopes[0]} --add'
        )
    return result
