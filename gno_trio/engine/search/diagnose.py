"""``diagnose``: why one named document does or does not rank for a query.

Retrieval here is model-free (see :mod:`gno_trio.engine.search.hybrid`), so the
evidence is lexical: does the target match the strict query (every term),
the relaxed any-term query, where does it rank by BM25 in each leg, where
does it land after fusion, and which filters, if any, shut it out. The
vector, expansion, rerank and graph stages are reported as skipped, because
they did not run; nothing here pretends they did.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from gno_trio.engine.reads.documents import resolve
from gno_trio.engine.search.hybrid import QueryOptions, query
from gno_trio.engine.search.lexical import (
    FIELD_WEIGHTS,
    SearchRequest,
    filter_clauses,
    relaxed_match,
    validate_request,
)
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
FUSION_WINDOW: Final = 100
"""How deep the fused list is searched for the target (the largest query limit)."""

_SKIPPED_STAGES: Final = (
    ("vector", "skipped: no embedding model is available to this server"),
    ("expansion", "skipped: no query expansion model is available to this server"),
    ("graph", "skipped: graph expansion is not part of this server's query pipeline"),
    ("rerank", "skipped: no reranker is available to this server"),
)


# Wire name of each filter and the SearchRequest field that carries it.
_FILTER_FIELDS = (
    ("collection", "collection"),
    ("since", "since"),
    ("until", "until"),
    ("tagsAll", "tags_all"),
    ("tagsAny", "tags_any"),
    ("categories", "categories"),
    ("author", "author"),
    ("lang", "lang"),
    ("exclude", "exclude"),
)


def _single_filters(request: SearchRequest) -> list[tuple[str, SearchRequest]]:
    """One request per filter the caller set, each carrying only that filter."""
    bare = SearchRequest(query=request.query, now=request.now)
    return [
        (name, dataclasses.replace(bare, **{field: getattr(request, field)}))
        for name, field in _FILTER_FIELDS
        if getattr(request, field)
    ]


def _passes(conn: sqlite3.Connection, request: SearchRequest, doc_id: int) -> bool:
    clauses, params = filter_clauses(conn, request)
    sql = f"SELECT 1 FROM documents d WHERE d.id = ? AND {' AND '.join(clauses)}"
    return conn.execute(sql, (doc_id, *params)).fetchone() is not None


def _skipped_stage(stage: str, reason: str) -> dict[str, Any]:
    """A stage that did not run for this query, and why."""
    return {
        "id": stage,
        "status": "skipped",
        "matched": False,
        "sourceCount": 0,
        "rank": None,
        "score": None,
        "reason": reason,
    }


def _leg(
    conn: sqlite3.Connection,
    stage: str,
    match: str | None,
    request: SearchRequest,
    doc_id: int,
) -> dict[str, Any]:
    """The target's BM25 rank and raw score among filtered documents matching ``match``."""
    if match is None:
        return _skipped_stage(
            stage, "skipped: the query has fewer than two terms, so there is no relaxed form"
        )
    clauses, params = filter_clauses(conn, request)
    weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
    rows = conn.execute(
        f"SELECT d.id, bm25(documents_fts, {weights}) AS rank FROM documents_fts "
        f"JOIN documents d ON d.id = documents_fts.rowid "
        f"WHERE documents_fts MATCH ? AND {' AND '.join(clauses)} ORDER BY rank",
        (match, *params),
    ).fetchall()
    position = next((i for i, row in enumerate(rows, 1) if int(row[0]) == doc_id), None)
    score = None if position is None else round(-float(rows[position - 1][1]), 6)
    reason = (
        f"matched at BM25 rank {position} of {len(rows)}"
        if position is not None
        else f"no match among {len(rows)} documents that pass the filters"
    )
    return {
        "id": stage,
        "status": "active",
        "matched": position is not None,
        "sourceCount": len(rows),
        "rank": position,
        "score": score,
        "reason": reason,
    }


def _fusion(
    conn: sqlite3.Connection,
    request: SearchRequest,
    options: QueryOptions,
    uri: str,
) -> dict[str, Any]:
    """Where the full model-free query pipeline places the target, and whether it is kept."""
    wide = dataclasses.replace(request, limit=FUSION_WINDOW, min_score=None)
    hits = query(conn, wide, options)["results"]
    position = next((i for i, hit in enumerate(hits, 1) if hit["uri"] == uri), None)
    score = None if position is None else float(hits[position - 1]["score"])
    if position is None:
        reason = f"not among the first {FUSION_WINDOW} fused results"
        drop: str | None = "not_in_candidate_set"
    elif position > request.limit:
        reason = f"fused rank {position} is past the requested limit of {request.limit}"
        drop = "below_cutoff"
    elif request.min_score is not None and score is not None and score < request.min_score:
        reason = f"fused score {score} is under minScore {request.min_score}"
        drop = "below_cutoff"
    else:
        reason = f"returned at fused rank {position}"
        drop = None
    return {
        "id": "fusion",
        "status": "active",
        "matched": position is not None,
        "sourceCount": len(hits),
        "rank": position,
        "score": score,
        "survived": drop is None,
        "dropReason": drop,
        "reason": reason,
    }


def _target_block(
    ref: str, row: sqlite3.Row | None, status: str, reasons: Sequence[str]
) -> dict[str, Any]:
    return {
        "ref": ref,
        "status": status,
        "docid": None if row is None else row["docid"],
        "uri": None if row is None else row["uri"],
        "title": None if row is None else row["title"],
        "filterReasons": list(reasons),
    }


def diagnose(
    conn: sqlite3.Connection,
    request: SearchRequest,
    target: str,
    options: QueryOptions | None = None,
) -> dict[str, Any]:
    """``query-diagnose`` evidence for ``target`` under ``request`` (the ``gno_query`` inputs).

    Status ``not_found`` means no active document answers to ``target``;
    ``no_indexed_content`` a document with nothing in the text index;
    ``filtered_out`` one that a filter excludes (``filterReasons`` names each
    such filter); otherwise ``diagnosed``, with the lexical legs and fusion
    reporting where the target stands.
    """
    options = options or QueryOptions()
    validate_request(request)
    parsed = parse_query(request.query)
    try:
        row: sqlite3.Row | None = resolve(conn, parse_ref(target))
    except GnoError as error:
        if error.code != "NOT_FOUND":
            raise
        row = None
    skipped = [_skipped_stage(stage, reason) for stage, reason in _SKIPPED_STAGES]
    meta = {
        "mode": "bm25_only",
        "vectorsUsed": False,
        "expanded": False,
        "reranked": False,
        "limit": request.limit,
    }
    base = {"schemaVersion": SCHEMA_VERSION, "query": request.query, "meta": meta}
    if row is None:
        return {**base, "target": _target_block(target, None, "not_found", ()), "stages": skipped}
    doc_id = int(row["id"])
    indexed = conn.execute("SELECT 1 FROM documents_fts WHERE rowid = ?", (doc_id,)).fetchone()
    if indexed is None:
        block = _target_block(target, row, "no_indexed_content", ())
        return {**base, "target": block, "stages": skipped}
    reasons = [
        name for name, single in _single_filters(request) if not _passes(conn, single, doc_id)
    ]
    status = "filtered_out" if reasons else "diagnosed"
    stages = [
        _leg(conn, "bm25_strict", parsed.match, request, doc_id),
        _leg(conn, "bm25_relaxed", relaxed_match(parsed), request, doc_id),
        _fusion(conn, request, options, row["uri"]),
        *skipped,
    ]
    return {**base, "target": _target_block(target, row, status, reasons), "stages": stages}
