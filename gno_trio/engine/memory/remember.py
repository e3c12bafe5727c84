"""Remember: store one fact, or say which stored facts it resembles.

Without a ``decision`` nothing is written: the caller gets the candidates
it may want to supersede. ``add`` writes a new fact unless the exact text
is already current in scope; ``supersede`` replaces one current fact,
checked by URI and content hash, and a fact can have only one successor.
Every write happens under the shared write lease and returns only once the
fact file is indexed (lexically searchable).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence, Set
from typing import Any

from gno_trio.engine.memory.queries import StoredFact, fact_from_row
from gno_trio.engine.store.memory import FactStore
from gno_trio.errors import GnoError

CANDIDATE_LIMIT = 16
LEXICAL_THRESHOLD = 0.5
MAX_MATCH_TOKENS = 64
SEMANTIC_UNAVAILABLE = "no embedding model available"
_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text: str) -> set[str]:
    return set(_TOKEN_RE.findall(text.lower()))


def jaccard(left: set[str], right: set[str]) -> float:
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


Similarity = Callable[[str, Sequence[str]], list[float]]
"""Cosine of a text with each of several others (the semantic matcher)."""


def matching_block(
    *, semantic_threshold: float | None = None, unavailable: str = SEMANTIC_UNAVAILABLE
) -> dict[str, Any]:
    """How candidates were matched: semantically (with its threshold) or lexically, and why."""
    if semantic_threshold is not None:
        return {"mode": "semantic", "threshold": semantic_threshold}
    return {"mode": "lexical", "threshold": LEXICAL_THRESHOLD, "semanticUnavailable": unavailable}


def find_exact(
    facts: FactStore, collection: str, scopes: Sequence[str], hash_hex: str
) -> StoredFact | None:
    row = facts.by_hash(collection, scopes, hash_hex)
    return fact_from_row(row) if row is not None else None


def candidates(
    facts: FactStore,
    collection: str,
    scopes: Sequence[str],
    text: str,
    hash_hex: str,
    *,
    nearby: Sequence[StoredFact] = (),
    similarity: Similarity | None = None,
    threshold: float = LEXICAL_THRESHOLD,
) -> list[dict[str, Any]]:
    """Current in-scope facts like ``text``, most similar first.

    Candidates are the facts sharing words with ``text`` plus ``nearby`` (the
    vector leg's, when the collection is embedded). With ``similarity`` they
    are scored by it (cosine of embeddings) against ``threshold``; without,
    by the Jaccard overlap of their words.
    """
    words = sorted(tokens(text))[:MAX_MATCH_TOKENS]
    found: dict[str, tuple[StoredFact, float]] = {}
    if words:
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = facts.resembling(match, collection, scopes, CANDIDATE_LIMIT)
        mine = tokens(text)
        for row in rows:
            fact = fact_from_row(row)
            found[fact.uri] = (fact, jaccard(mine, tokens(fact.record.text)))
    for fact in nearby:
        found.setdefault(fact.uri, (fact, 0.0))
    if similarity is not None and found:
        pairs = list(found.values())
        scores = similarity(text, [fact.record.text for fact, _ in pairs])
        found = {fact.uri: (fact, score) for (fact, _), score in zip(pairs, scores, strict=True)}
    found = {
        uri: (fact, 1.0 if fact.record.content_hash == hash_hex else score)
        for uri, (fact, score) in found.items()
    }
    exact = find_exact(facts, collection, scopes, hash_hex)
    if exact is not None:
        found[exact.uri] = (exact, 1.0)
    ordered = sorted(found.values(), key=lambda pair: (-pair[1], pair[0].record.record_id))
    out = []
    for fact, score in ordered:
        entry = fact.as_dict()
        entry["similarity"] = round(score, 6)
        entry["match"] = "exact" if score >= 1.0 else "likely" if score >= threshold else "weak"
        out.append(entry)
    return out


def successor_of(facts: FactStore, uri: str, collection: str) -> str | None:
    return facts.successor(uri, collection)


def predecessor(facts: FactStore, collection: str, uri: str, expected_hash: str) -> StoredFact:
    """The fact a supersede replaces, checked: current, same collection, same hash."""
    row = facts.at(uri, collection)
    if row is None or not row["valid"]:
        raise GnoError(
            "MEMORY_PREDECESSOR_NOT_FOUND",
            f"No current fact at {uri} in collection {collection}",
        )
    fact = fact_from_row(row)
    if fact.record.content_hash != expected_hash.strip().lower():
        raise GnoError(
            "MEMORY_PREDECESSOR_HASH_MISMATCH",
            f"{uri} has contentHash {fact.record.content_hash}, not {expected_hash}",
        )
    successor = successor_of(facts, uri, collection)
    if successor is not None:
        raise GnoError("MEMORY_SUPERSEDE_CONFLICT", f"{uri} was already superseded by {successor}")
    return fact


def check_fences(hash_hex: str, fenced_spans: Set[str], derived_from: Sequence[str]) -> None:
    """Refuse recalled text replayed as a new fact, and facts derived from gno:// documents."""
    if hash_hex in fenced_spans:
        raise GnoError(
            "MEMORY_FENCED_REPLAY",
            "This text is a span returned by recall (it is in the receipt's spanHashes); "
            "store new facts, not recalled ones",
        )
    for origin in derived_from:
        # URI schemes are case-insensitive: GNO://notes/x names the same documents.
        if str(origin).strip().lower().startswith("gno://"):
            raise GnoError(
                "MEMORY_FENCED_DERIVED",
                f"Facts derived from indexed documents are rejected (derivedFrom {origin})",
            )
