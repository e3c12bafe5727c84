"""BM25 search over the document-level FTS index.

Documents are ranked first (cheap: p99 well under a millisecond on the
fixture corpora), then only the returned documents get a snippet, taken
from their best-matching chunk, which also gives the line anchor. Running
``snippet()`` over whole documents instead costs seconds on large pages.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.search import chunkkeeper
from gno_trio.engine.search.anchors import anchors_for
from gno_trio.engine.search.docrankers import document_ranker
from gno_trio.engine.search.querygrammar import parse_query, wants_recency
from gno_trio.engine.search.request import SearchRequest, validate_request
from gno_trio.engine.search.results import (
    document_instant,
    echo_filters,
    normalise_scores,
    result_object,
)
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.scratch_fulltext import Tokenized
from gno_trio.errors import GnoError


def search(conn: Connection, request: SearchRequest) -> dict[str, Any]:
    """Run a BM25 search; returns a ``search-results@1.0`` object."""
    validate_request(request)
    if request.now is None:  # one clock for the filters and their echo
        request = replace(request, now=datetime.now(UTC))
    parsed = parse_query(request.query)
    recency = wants_recency(request.query)
    fetch = request.limit * 3 if recency else request.limit
    held = chunkkeeper.current(conn)  # one state read per search, for both steps
    said = None if held is None else Tokenized(held.tokenize)
    ranked = document_ranker(conn, held).rank(parsed, request, fetch, said)
    if recency:
        ranked = sorted(ranked, key=lambda pair: document_instant(pair[0]), reverse=True)[
            : request.limit
        ]
    scores = normalise_scores([score for _, score in ranked])
    kept = [
        (row, score)
        for (row, _), score in zip(ranked, scores, strict=True)
        if request.scope.min_score is None or score >= request.scope.min_score
    ]
    snippet_match = parsed.any_match
    intent = request.scope.intent
    if intent and intent.strip():
        with contextlib.suppress(GnoError):  # an intent with no words steers nothing
            snippet_match = f"({parsed.any_match}) OR ({parse_query(intent).any_match})"
    spans = {
        row["mirror_hash"]: (int(row["first_chunk"]), int(row["last_chunk"]))
        for row, _ in kept
        if row["mirror_hash"] and row["first_chunk"] is not None
    }
    anchors = anchors_for(conn, spans, snippet_match, held, said)
    results = [
        result_object(row, score, anchors.get(row["mirror_hash"]), request) for row, score in kept
    ]
    meta: dict[str, Any] = {
        "query": request.query,
        "mode": "bm25",
        "totalResults": len(results),
    }
    echo_filters(meta, request)
    return {"results": results, "meta": meta}
