"""Recall: budgeted, cited, current facts for explicit scopes.

Scope filtering and the exclusion of superseded facts happen inside the
SQL query, before any limit, so a busy scope can never push another
scope's facts out of the candidate set or leak them in. The lexical leg is
BM25 over the fact documents (any query term may match); hits are read from
the validated projection of their files, and the selection honours both the
fact and the token budget (tokens estimated as UTF-8 bytes / 4, rounded up).
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.egress.policy import strictest
from gno_trio.engine.facts import normalize_text
from gno_trio.engine.memory import receipts
from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.queries import (
    FACT_COLUMNS,
    StoredFact,
    current_facts_clause,
    fact_from_row,
)
from gno_trio.engine.search.fusion import rrf_points
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS
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
    conn: sqlite3.Connection, match: str, collection: str, scopes: Sequence[str], limit: int
) -> list[StoredFact]:
    """Current in-scope facts matching ``match``, best BM25 first, at most ``limit``."""
    weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
    sql = (
        f"SELECT {FACT_COLUMNS}, bm25(documents_fts, {weights}) AS rank "
        f"FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid "
        f"JOIN memory_records m ON m.document_id = d.id "
        f"WHERE documents_fts MATCH ? AND {current_facts_clause(scopes)} "
        f"ORDER BY rank, d.id LIMIT ?"
    )
    rows = conn.execute(sql, (match, collection, *scopes, limit)).fetchall()
    return [fact_from_row(row) for row in rows]


def match_expression(query: str) -> str:
    """The FTS5 "any term" expression for a natural-language recall query.

    Recall queries are phrased like the fact they look for, so a stray
    double quote (``a 27" screen``) is not a syntax error: when the query
    grammar refuses the text as typed, it is tried again without quotes.
    ``MEMORY_QUERY_REQUIRED`` when no searchable term is left.
    """
    text = normalize_text(query)
    for attempt in (text, text.replace('"', " ")):
        try:
            return parse_query(attempt).any_match
        except GnoError:
            continue
    raise GnoError("MEMORY_QUERY_REQUIRED", f"Query has no searchable terms: {query!r}")


def candidate_limit(max_facts: int) -> int:
    """How many candidates each leg brings: enough to fill the largest budget."""
    return max(LEXICAL_LIMIT, max_facts)


def _fuse(legs: Sequence[Sequence[StoredFact]]) -> list[tuple[StoredFact, float]]:
    """Facts of all legs by reciprocal rank fusion (k = 60) over their URIs, best first."""
    scores: dict[str, float] = {}
    facts: dict[str, StoredFact] = {}
    for leg in legs:
        for rank, fact in enumerate(leg, 1):
            facts.setdefault(fact.uri, fact)
            scores[fact.uri] = scores.get(fact.uri, 0.0) + rrf_points(1.0, rank)
    order = sorted(scores, key=lambda uri: (-scores[uri], uri))
    return [(facts[uri], scores[uri]) for uri in order]


def recall(
    conn: sqlite3.Connection,
    *,
    query: str,
    collection: CollectionPolicy,
    scopes: Sequence[str],
    identity: Identity,
    max_facts: int = DEFAULT_MAX_FACTS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    vector_hits: Sequence[StoredFact] | None = None,
    semantic_unavailable: str = SEMANTIC_UNAVAILABLE,
) -> dict[str, Any]:
    """``memory-recall@1.0`` for already-validated arguments.

    The candidate limit grows with ``max_facts`` so that every budget the
    input schema allows (up to 64 facts) can actually be filled. With
    ``vector_hits`` (the vector leg ran) the two legs are fused by URI with
    reciprocal rank fusion and ``retrieval.mode`` is ``hybrid``.
    """
    match = match_expression(query)
    limit = candidate_limit(max_facts)
    try:
        lexical = lexical_candidates(conn, match, collection.name, scopes, limit)
    except sqlite3.Error as exc:
        raise GnoError("MEMORY_QUERY_FAILED", f"Recall query failed: {exc}") from exc
    fused = _fuse([lexical] if vector_hits is None else [lexical, list(vector_hits)])
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
