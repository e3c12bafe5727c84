"""One compile, end to end: request in, sealed Context Capsule out (or a coded error).

Validation happens before the database is touched. Retrieval, passage
materialisation and both index fingerprints run inside one read transaction,
so the evidence and the fingerprint describe the same state. Packing then
assembles and measures whole Capsules until no further passage fits. The
result is a pure function of the request, the configuration and the index
(and of the clock, for relative dates such as ``since: yesterday``):
compiling twice gives byte-identical Capsules with the same id. Nothing is
persisted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.engine.canonical import canonical_json, utf8_size
from gno_trio.engine.context import codes
from gno_trio.engine.context.candidates import (
    CandidatePool,
    Passage,
    PassageCap,
    collect_candidates,
)
from gno_trio.engine.context.capsule import CapsuleFrame, assemble
from gno_trio.engine.context.facets import derive_facets
from gno_trio.engine.context.guidance import context_rules
from gno_trio.engine.context.lineage import (
    config_fingerprint,
    egress_lineage,
    policies_of,
    scope_fingerprint,
)
from gno_trio.engine.context.passages import MAX_PASSAGE_BYTES
from gno_trio.engine.context.request import (
    BYTES_PER_TOKEN_REQUEST,
    ContextRequest,
    NormalizedRequest,
    normalize_request,
)
from gno_trio.engine.context.request_fields import MAX_SAFE_INTEGER
from gno_trio.engine.context.retrieval import retrieve_documents
from gno_trio.engine.context.selection import Selection, cheapest_alone, pack
from gno_trio.engine.store.database import Connection, StoreError, read_snapshot
from gno_trio.errors import GnoError

_HASH: Final = "0" * 64
# Room kept for the heading an evidence entry names, unknown until its
# window is chosen.
_HEADING_ALLOWANCE: Final = 96
# One-passage Capsules measured to find the least budget that holds one.
_MEASURED_ALONE: Final = 16


def _scope_collections(request: NormalizedRequest, config: Config) -> tuple[str, ...]:
    """Collections the Capsule may draw from: requested, else the prefix's, else all."""
    if request.collections:
        return request.collections
    if request.uri_filter is not None:
        return (request.uri_filter[len("gno://") :].split("/", 1)[0],)
    return tuple(sorted(c.name for c in config.collections))


def compile_capsule(
    conn: Connection,
    config: Config,
    index_name: str,
    request: ContextRequest,
    *,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Compile the Capsule for ``request`` over the index behind ``conn``.

    Raises ``GnoError`` with a Context code (:mod:`~gno_trio.engine.context.codes`)
    on failure; no partial Capsule is ever returned.
    """
    moment = now or datetime.now(UTC)
    normalized = normalize_request(request, config, index_name, moment)
    facets = derive_facets(normalized.search_query, normalized.term_texts)
    scope = _scope_collections(normalized, config)
    policies = policies_of(config)
    lineage = egress_lineage(scope, policies)

    def fingerprint() -> str:
        return scope_fingerprint(conn, config, index_name, scope)

    frame = CapsuleFrame(
        request=normalized,
        index_name=index_name,
        facets=facets,
        query_variants=tuple(dict.fromkeys((normalized.retrieval_query, *normalized.term_texts))),
        index_before="",
        index_after="",
        config_fingerprint=config_fingerprint(config),
        rules=context_rules(config),
        policies=policies,
        lineage=lineage,
        collection_lineages={name: egress_lineage([name], policies) for name in policies},
    )
    try:
        with read_snapshot(conn):
            before = fingerprint()
            frame = dataclasses.replace(frame, index_before=before, index_after=before)
            retrieved = retrieve_documents(conn, config, normalized, moment)
            pool = collect_candidates(
                conn, normalized, retrieved, facets, policies, passage_cap(frame)
            )
            after = fingerprint()
    except StoreError as exc:
        raise GnoError(codes.RETRIEVAL_FAILED, f"Reading the index failed: {exc}") from None
    if before != after:
        raise GnoError(codes.INDEX_CHANGED, "The index changed while the Capsule was compiled")
    if not pool.passages:
        raise GnoError(
            codes.NO_EVIDENCE,
            f"No indexed passage in scope matches {normalized.retrieval_query!r}",
        )
    frame = dataclasses.replace(frame, index_after=after)

    def build(selection: Selection) -> dict[str, Any] | None:
        capsule = assemble(frame, selection, audit_limit=0)
        return capsule if frame.fits(capsule) else None

    selection, capsule = pack(pool, facets, frame.room, build)
    if capsule is None:
        raise _nothing_fits(frame, pool)
    # The omission audit is not part of what the model reads, so it costs no
    # budget: the sealed Capsule lists as many omitted candidates as it may.
    return assemble(frame, selection)


def passage_cap(frame: CapsuleFrame) -> PassageCap:
    """The room one passage of a document may take in the projection.

    It is the budget's room less what a Capsule with no passage already
    spends and less what this document's evidence entry and guidance add,
    capped at :data:`MAX_PASSAGE_BYTES` so that a large budget buys more
    passages rather than longer ones.
    """
    empty = assemble(frame, Selection((), (), frozenset()), audit_limit=0)
    spare: int = frame.room - int(empty["budget"]["usedBytes"])

    def cap(uri: str, title: str | None, collection: str) -> int:
        overhead = _entry_size(frame, uri, title, None, collection) + _HEADING_ALLOWANCE
        return max(1, min(MAX_PASSAGE_BYTES, spare - overhead))

    return cap


def _entry_size(
    frame: CapsuleFrame, uri: str, title: str | None, heading: str | None, collection: str
) -> int:
    """Projection bytes a passage adds besides its text: its tuple and its guidance."""
    rules = [rule for rule in frame.rules if rule.covers(uri, collection)]
    policy = frame.policies.get(collection)
    entry = [uri, 1 << 20, 1 << 20, _HASH, _HASH, _HASH, "", title, heading]
    entry += [[rule.context_id for rule in rules], policy[0] if policy else "unclassified"]
    return (
        utf8_size(canonical_json(entry))
        + 1
        + sum(
            utf8_size(canonical_json([r.context_id, r.scope_type, r.scope_key, r.text])) + 1
            for r in rules
        )
    )


def _projected_size(frame: CapsuleFrame) -> Callable[[Passage], int]:
    def size(passage: Passage) -> int:
        return passage.size + _entry_size(
            frame, passage.ref.uri, passage.title, passage.heading, passage.collection
        )

    return size


def _nothing_fits(frame: CapsuleFrame, pool: CandidatePool) -> GnoError:
    """``no_evidence`` when no passage speaks to the goal, else ``invalid_budget``.

    The budget error names the least budget that would produce a Capsule: the
    size of the smallest one-passage Capsule, measured at that budget (the
    requested numbers are part of what is measured) over the cheapest few
    passages, since what a passage settles in coverage changes the size too.
    """
    request = frame.request
    cost = _projected_size(frame)
    if not cheapest_alone(pool, frame.facets, frame.room, cost):
        return GnoError(
            codes.NO_EVIDENCE,
            f"No retrieved passage in scope speaks to any facet of the goal "
            f"({', '.join(frame.facets)})",
        )
    tokens, size = request.budget_tokens, request.budget_bytes
    for _ in range(8):
        trial = dataclasses.replace(
            frame,
            request=dataclasses.replace(
                request,
                budget_tokens=tokens,
                budget_bytes=size
                if request.budget_bytes_given
                else min(MAX_SAFE_INTEGER, tokens * BYTES_PER_TOKEN_REQUEST),
            ),
        )
        needs = []
        for selection in cheapest_alone(pool, frame.facets, trial.room, cost, _MEASURED_ALONE):
            budget = assemble(trial, selection, audit_limit=0)["budget"]
            need_size = budget["usedBytes"] + request.safety_margin_bytes
            need_tokens = budget["usedTokens"] + request.safety_margin_tokens
            if not request.budget_bytes_given:
                need_tokens = max(need_tokens, -(-need_size // BYTES_PER_TOKEN_REQUEST))
            needs.append((need_tokens, need_size))
        if min(needs) == (tokens, size):
            break
        tokens, size = min(needs)
    wanted = f"budgetTokens of at least {tokens}"
    if request.budget_bytes_given:
        wanted += f" and budgetBytes of at least {size}"
    return GnoError(
        codes.INVALID_BUDGET,
        f"No passage fits the budget: the smallest Capsule, with one passage, needs "
        f"{wanted} (requested {request.budget_tokens} tokens and {request.budget_bytes} "
        f"bytes)",
    )
