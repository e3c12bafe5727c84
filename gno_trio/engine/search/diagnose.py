"""``diagnose``: why one named document does or does not rank for a query.

The answer is GNO's ``query-diagnose@1.0`` (no content-type boost is ever
applied here, and MCP callers never carry project affinity, so the closed
1.0 shape is the exact one). It follows the pipeline ``query`` runs for the
same request: where the target ranks in the BM25 leg (every term first, then
any term, as search ranks), which filters shut it out, and then either

* with stored vectors (and no ``fast``, which GNO keeps BM25-only here): the
  hybrid run itself (:mod:`gno_trio.engine.search.diagnose_hybrid`): the
  vector leg, fusion, one hop of graph expansion, the final cut; or
* without them: the model-free query (:mod:`gno_trio.engine.search.hybrid`),
  where fusion is the last stage and the vector and graph stages say why
  they did not run.

Rerank never runs and says so; nothing here pretends a stage ran. Stages
are traced only for a target that resolved to an indexed document that
passes the filters.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any, Final

from gno_trio.engine.lookup import resolve
from gno_trio.engine.search import diagnose_hybrid as staged
from gno_trio.engine.search.anchors import chunk_spans, text_match
from gno_trio.engine.search.anchortext import exact_first
from gno_trio.engine.search.boosts import content_type_boost
from gno_trio.engine.search.docrankers import document_ranker, relaxed_match
from gno_trio.engine.search.hybrid import QueryOptions, query
from gno_trio.engine.search.pipeline import (
    PipelineRun,
    checked_vectors,
    final_scores,
    query_modes_meta,
    run_pipeline,
    validate_options,
)
from gno_trio.engine.search.querygrammar import LexicalQuery, parse_query
from gno_trio.engine.search.request import (
    SearchRequest,
    request_document_filter,
    validate_request,
)
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.uris import parse_ref
from gno_trio.engine.vectors.embedder import EmbeddingBackend
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
FUSION_WINDOW: Final = 100
"""How deep the fused list is searched for the target (the largest query limit)."""

_NO_RERANK: Final = "skipped: no reranker is available to this server"
_NO_GRAPH: Final = "skipped: without vectors the query is BM25 only, with no graph expansion"
_FAST: Final = "skipped: fast keeps the diagnosis BM25-only (no model is loaded)"
_NO_CHUNK: Final = {"seq": None, "startLine": None, "endLine": None, "language": None}


# Wire name of each filter and the Scope field that carries it.
_FILTER_FIELDS = (
    ("collection", "collections"),
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
        (name, bare.within(**{field: getattr(request.scope, field)}))
        for name, field in _FILTER_FIELDS
        if getattr(request.scope, field)
    ]


def _passes(conn: Connection, request: SearchRequest, doc_id: int) -> bool:
    return SQLITE_STORES.search_documents(conn).passes(
        doc_id, request_document_filter(conn, request)
    )


def _indexed(conn: Connection, doc_id: int) -> bool:
    """Whether the index that ranks documents holds this one."""
    return document_ranker(conn).holds(doc_id)


def _skipped_stage(stage: str, reason: str) -> dict[str, Any]:
    """A stage that did not run for this query, and why."""
    return {
        "id": stage,
        "status": "skipped",
        "sourceCount": 0,
        "present": False,
        "rank": None,
        "score": None,
        "survived": False,
        "dropReason": "skipped",
        "reason": reason,
    }


def _ranked(
    conn: Connection, parsed: LexicalQuery, request: SearchRequest, *, any_term: bool
) -> list[tuple[int, float]]:
    """(document id, raw BM25 score) of every filtered document matching, best first.

    ``any_term``: matching some positive term, not all (the top-up form).
    """
    return document_ranker(conn).matches(parsed, request, any_term=any_term)


def _bm25(
    conn: Connection,
    request: SearchRequest,
    options: QueryOptions,
    doc_id: int,
    passed: int | None = None,
) -> dict[str, Any]:
    """The target in the BM25 leg: documents with every term rank first, then any term.

    The model-free leg hands fusion as many documents as the query asked for
    (twice as many when ``term`` entries are fused in); the hybrid one hands
    it ``passed``. A target ranked deeper is dropped below that cutoff.
    """
    parsed = parse_query(request.query)
    strict = _ranked(conn, parsed, request, any_term=False)
    seen = {doc for doc, _ in strict}
    relaxed = []
    if relaxed_match(parsed) is not None:
        relaxed = [
            item for item in _ranked(conn, parsed, request, any_term=True) if item[0] not in seen
        ]
    ranked = strict + relaxed
    terms = sum(1 for mode, _ in options.query_modes if mode == "term")
    if passed is None:
        passed = request.limit * 2 if terms else request.limit
    position = next((i for i, (doc, _) in enumerate(ranked, 1) if doc == doc_id), None)
    drop: str | None
    if position is None:
        score, drop = None, "not_in_candidate_set"
        reason = f"matches no term among {len(ranked)} documents that pass the filters"
    else:
        score = ranked[position - 1][1]
        every = position <= len(strict)
        drop = None if position <= passed else "below_cutoff"
        reason = (
            f"BM25 rank {position} of {len(ranked)}, matching "
            f"{'every term' if every else 'some of the terms'}"
            + ("" if drop is None else f"; only the first {passed} go on to fusion")
        )
    return {
        "id": "bm25",
        "status": "active",
        "sourceCount": 1 + terms,
        "present": position is not None,
        "rank": position,
        "score": score,
        "survived": position is not None and drop is None,
        "dropReason": drop,
        "reason": reason,
    }


def _fusion(
    conn: Connection,
    request: SearchRequest,
    options: QueryOptions,
    uri: str,
) -> dict[str, Any]:
    """Where the full model-free query pipeline places the target, and whether it is kept."""
    wide = dataclasses.replace(request.within(min_score=None), limit=FUSION_WINDOW)
    hits = query(conn, wide, options)["results"]
    position = next((i for i, hit in enumerate(hits, 1) if hit["uri"] == uri), None)
    score = None if position is None else float(hits[position - 1]["score"])
    if position is None:
        reason = f"not among the first {FUSION_WINDOW} fused results"
        drop: str | None = "not_in_candidate_set"
    elif position > request.limit:
        reason = f"fused rank {position} is past the requested limit of {request.limit}"
        drop = "below_cutoff"
    elif (floor := request.scope.min_score) is not None and score is not None and score < floor:
        reason = f"fused score {score} is under minScore {floor}"
        drop = "below_cutoff"
    else:
        reason = f"returned at fused rank {position}"
        drop = None
    return {
        "id": "fusion",
        "status": "active",
        "sourceCount": 1 + sum(1 for mode, _ in options.query_modes if mode == "term"),
        "present": position is not None,
        "rank": position,
        "score": score,
        "survived": position is not None and drop is None,
        "dropReason": drop,
        "reason": reason,
    }


def _target_chunk(
    conn: Connection, mirror: str, request: SearchRequest, nearest: int | None = None
) -> dict[str, Any]:
    """The target's chunk that best matches the query's words.

    With none matching: the chunk nearest the query's vector (``nearest``)
    when vectors ran, else its first chunk.
    """
    span = chunk_spans(conn, [mirror]).get(mirror)
    if span is None:
        return dict(_NO_CHUNK)
    chunks = SQLITE_STORES.chunk_matches(conn)
    for expression in exact_first(parse_query(request.query).any_match):
        row = chunks.best_lines(text_match(expression), span)
        if row is not None:
            break
    else:
        row = None
        if nearest is not None:
            row = chunks.lines_at(mirror, nearest)
        if row is None:
            row = chunks.lines_of(span[0])
    if row is None:  # the chunks went while diagnosing
        return dict(_NO_CHUNK)
    return {"seq": row[0], "startLine": row[1], "endLine": row[2], "language": row[3]}


def _target_block(
    conn: Connection,
    ref: str,
    row: RowView | None,
    status: str,
    reasons: Sequence[str],
) -> dict[str, Any]:
    """What the target is: identity, content type (from its frontmatter) and chunks."""
    mirror = None if row is None else row["mirror_hash"]
    chunks = 0
    if mirror:
        chunks = SQLITE_STORES.chunk_matches(conn).count_of(mirror)
    content_type = None if row is None else row["content_type"]
    categories = (
        [] if row is None or not row["categories_json"] else json.loads(row["categories_json"])
    )
    return {
        "ref": ref,
        "status": status,
        "docid": None if row is None else row["docid"],
        "uri": None if row is None else row["uri"],
        "title": None if row is None else row["title"],
        "contentType": content_type,
        "contentTypeSource": "frontmatter" if content_type else None,
        "categories": list(categories),
        # No configured content type, so no graph hints and no rule to compare with.
        "graphHints": [],
        "contentTypeRulesFingerprint": content_type_boost()["rulesFingerprint"],
        "contentTypeFingerprintMatches": None,
        "mirrorHash": mirror or None,
        "chunkCount": chunks,
        "filterReasons": list(reasons),
    }


def diagnose(
    conn: Connection,
    request: SearchRequest,
    target: str,
    options: QueryOptions | None = None,
    *,
    backend: EmbeddingBackend | None = None,
    unavailable: str | None = None,
) -> dict[str, Any]:
    """``query-diagnose@1.0`` evidence for ``target`` under ``request`` (the ``gno_query`` inputs).

    Status ``not_found`` means no document answers to ``target``;
    ``inactive`` one whose file is gone since the last sync;
    ``no_indexed_content`` a document with nothing in the text index;
    ``filtered_out`` one that a filter excludes (``filterReasons`` names each
    such filter); otherwise ``diagnosed``, with every stage reporting where
    the target stands. ``backend`` is the configured embedding model (None:
    none could be built, ``unavailable`` says why).
    """
    options = options or QueryOptions()
    validate_request(request)
    validate_options(options)
    parse_query(request.query)
    try:
        row: RowView | None = resolve(conn, parse_ref(target), inactive=True)
    except GnoError as error:
        if error.code != "NOT_FOUND":
            raise
        row = None
    run: PipelineRun | None = None
    if options.fast:
        unavailable = _FAST
    else:
        stored, embedded, failed = checked_vectors(conn, backend, request)
        if backend is not None and stored is not None and embedded is not None:
            run = run_pipeline(conn, request, options, backend, stored, embedded)
        else:
            unavailable = f"skipped: {failed or unavailable or 'no embedding model is configured'}"
    meta = _meta(conn, request, options, run)
    base = {"schemaVersion": SCHEMA_VERSION, "query": request.query, "meta": meta}
    untraced = {**base, "stages": [], "chunk": dict(_NO_CHUNK)}
    if row is None:
        return {**untraced, "target": _target_block(conn, target, None, "not_found", ())}
    if not row["active"]:
        return {**untraced, "target": _target_block(conn, target, row, "inactive", ())}
    doc_id = int(row["id"])
    if not _indexed(conn, doc_id) or not row["mirror_hash"]:
        block = _target_block(conn, target, row, "no_indexed_content", ())
        return {**untraced, "target": block}
    reasons = [
        name for name, single in _single_filters(request) if not _passes(conn, single, doc_id)
    ]
    if reasons:
        return {**untraced, "target": _target_block(conn, target, row, "filtered_out", reasons)}
    rerank = _skipped_stage("rerank", _NO_RERANK)
    if run is None:
        stages = [
            _bm25(conn, request, options, doc_id),
            _skipped_stage("vector", unavailable or _FAST),
            _fusion(conn, request, options, row["uri"]),
            _skipped_stage(
                "graph", "skipped: fast skips graph expansion" if options.fast else _NO_GRAPH
            ),
            rerank,
        ]
        nearest = None
    else:
        vector = staged.vector_stage(conn, run, doc_id)
        graph_step = (
            staged.graph_stage(run, row["uri"], request.scope.min_score)
            if run.graph_wanted
            else _skipped_stage(
                "graph",
                "skipped: fast skips graph expansion"
                if options.fast
                else "skipped: graph expansion is turned off for this query",
            )
        )
        stages = [
            _bm25(conn, request, options, doc_id, passed=run.wide),
            vector,
            staged.fusion_stage(run, row["uri"], request.scope.min_score),
            graph_step,
            rerank,
        ]
        nearest = staged.target_seq(run, row["mirror_hash"])
    return {
        **base,
        "target": _target_block(conn, target, row, "diagnosed", ()),
        "stages": stages,
        "chunk": _target_chunk(conn, row["mirror_hash"], request, nearest),
    }


def _meta(
    conn: Connection,
    request: SearchRequest,
    options: QueryOptions,
    run: PipelineRun | None,
) -> dict[str, Any]:
    """The retrieval meta of the query being diagnosed (what ``gno_query`` would report)."""
    if run is None:
        returned = query(conn, request, options)["meta"]
        meta: dict[str, Any] = {
            "mode": "bm25_only",
            "vectorsUsed": False,
            "reranked": False,
            "totalResults": int(returned["totalResults"]),
        }
        if "queryModes" in returned:
            meta["queryModes"] = returned["queryModes"]
        return meta
    kept = [
        s
        for _, s in final_scores(run, request.limit)
        if request.scope.min_score is None or s >= request.scope.min_score
    ]
    meta = {
        "mode": "hybrid",
        "vectorsUsed": True,
        "reranked": run.rerank_stage.ran,
        "totalResults": len(kept),
    }
    if options.query_modes:
        meta["queryModes"] = query_modes_meta(options)
    return meta
