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
import sqlite3
from datetime import UTC, datetime
from typing import Any

from gno_trio.config import Config
from gno_trio.engine.context import codes
from gno_trio.engine.context.candidates import CandidatePool, collect_candidates, retrieve_documents
from gno_trio.engine.context.capsule import (
    MAX_OMISSION_ITEMS,
    CapsuleFrame,
    assemble,
    config_fingerprint,
    context_rules,
    egress_lineage,
    policies_of,
)
from gno_trio.engine.context.facets import derive_facets
from gno_trio.engine.context.request import (
    BYTES_PER_TOKEN_REQUEST,
    MAX_SAFE_INTEGER,
    ContextRequest,
    NormalizedRequest,
    normalize_request,
)
from gno_trio.engine.context.selection import Selection, pack, smallest_alone
from gno_trio.engine.context.snapshot import index_fingerprint, read_snapshot
from gno_trio.errors import GnoError


def _scope_collections(request: NormalizedRequest, config: Config) -> tuple[str, ...]:
    """Collections the Capsule may draw from: requested, else the prefix's, else all."""
    if request.collections:
        return request.collections
    if request.uri_filter is not None:
        return (request.uri_filter[len("gno://") :].split("/", 1)[0],)
    return tuple(sorted(c.name for c in config.collections))


def compile_capsule(
    conn: sqlite3.Connection,
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
        return index_fingerprint(
            conn,
            index_name=index_name,
            tokenizer=config.fts_tokenizer,
            collections=scope,
            lineage=lineage,
        )

    try:
        with read_snapshot(conn):
            before = fingerprint()
            retrieved = retrieve_documents(conn, normalized, moment)
            pool = collect_candidates(conn, normalized, retrieved, facets, policies)
            after = fingerprint()
    except sqlite3.Error as exc:
        raise GnoError(codes.RETRIEVAL_FAILED, f"Reading the index failed: {exc}") from None
    if before != after:
        raise GnoError(codes.INDEX_CHANGED, "The index changed while the Capsule was compiled")
    if not pool.passages:
        raise GnoError(
            codes.NO_EVIDENCE,
            f"No indexed passage in scope matches {normalized.search_query!r}",
        )
    frame = CapsuleFrame(
        request=normalized,
        index_name=index_name,
        facets=facets,
        query_variants=tuple(dict.fromkeys((normalized.search_query, *normalized.term_texts))),
        index_before=before,
        index_after=after,
        config_fingerprint=config_fingerprint(config),
        rules=context_rules(config),
        policies=policies,
        lineage=lineage,
        collection_lineages={name: egress_lineage([name], policies) for name in policies},
    )

    def build(selection: Selection) -> dict[str, Any] | None:
        capsule = assemble(frame, selection, audit_limit=0)
        return capsule if frame.fits(capsule) else None

    selection, capsule = pack(pool, facets, frame.room, build)
    if capsule is None:
        raise _nothing_fits(frame, pool)
    return _widest_audit(frame, selection, capsule)


def _widest_audit(
    frame: CapsuleFrame, selection: Selection, fitted: dict[str, Any]
) -> dict[str, Any]:
    """The fitted Capsule listing as many omitted candidates as the room left allows.

    Evidence is packed first with an empty audit list; the audit then takes
    what remains, up to its cap of 100 entries. Its total and per-reason
    counts are exact whatever the number of entries listed.
    """
    low, high = 0, min(MAX_OMISSION_ITEMS, fitted["omissions"]["total"])
    best = fitted
    while low < high:
        middle = (low + high + 1) // 2
        trial = assemble(frame, selection, audit_limit=middle)
        if frame.fits(trial):
            low, best = middle, trial
        else:
            high = middle - 1
    return best


def _nothing_fits(frame: CapsuleFrame, pool: CandidatePool) -> GnoError:
    """``no_evidence`` when no passage speaks to the goal, else ``invalid_budget``.

    The budget error names the least budget that would produce a Capsule: the
    size of the Capsule holding only the smallest admissible passage, measured
    at that budget (the requested numbers are part of the bytes measured).
    """
    request = frame.request
    if smallest_alone(pool, frame.facets, frame.room) is None:
        return GnoError(
            codes.NO_EVIDENCE,
            f"No retrieved passage in scope speaks to any facet of the goal "
            f"({', '.join(frame.facets)})",
        )
    tokens, size = request.budget_tokens, 0
    for _ in range(8):
        trial = dataclasses.replace(
            frame,
            request=dataclasses.replace(
                request,
                budget_tokens=tokens,
                budget_bytes=max(request.budget_bytes, size + request.safety_margin_bytes)
                if request.budget_bytes_given
                else min(MAX_SAFE_INTEGER, tokens * BYTES_PER_TOKEN_REQUEST),
            ),
        )
        selection = smallest_alone(pool, frame.facets, trial.room)
        if selection is None:
            break
        size = assemble(trial, selection, audit_limit=0)["budget"]["usedBytes"]
        if size + request.safety_margin_tokens == tokens:
            break
        tokens = size + request.safety_margin_tokens
    return GnoError(
        codes.INVALID_BUDGET,
        f"No passage fits the budget: the smallest Capsule, with one passage, needs "
        f"budgetTokens of at least {size + request.safety_margin_tokens} and budgetBytes of "
        f"at least {size + request.safety_margin_bytes} (requested {request.budget_tokens} "
        f"tokens and {request.budget_bytes} bytes)",
    )
