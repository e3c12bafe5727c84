"""BM25 search over the document-level FTS index.

Documents are ranked first (cheap: p99 well under a millisecond on the
fixture corpora), then only the returned documents get a snippet, taken
from their best-matching chunk, which also gives the line anchor. Running
``snippet()`` over whole documents instead costs seconds on large pages.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.search import chunkkeeper, docmemory
from gno_trio.engine.search.anchors import anchors_for
from gno_trio.engine.search.chunkmemory import ChunkMemory
from gno_trio.engine.search.docindex.ranking import TantivyRanker, ranker
from gno_trio.engine.search.filters import Filters
from gno_trio.engine.search.keyruns import KeyArray, listed_keys
from gno_trio.engine.search.querygrammar import LexicalQuery, fts_quote, parse_query, wants_recency
from gno_trio.engine.search.request import (
    ACTIVE,
    SearchRequest,
    request_filters,
    sql_filters,
    validate_request,
)
from gno_trio.engine.search.results import (
    document_instant,
    echo_filters,
    normalise_scores,
    result_object,
)
from gno_trio.engine.search.snippetcut import Tokenized
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS
from gno_trio.errors import GnoError

# Everything a search result is built from: the document's columns, its
# collection's folder and its tags. Vector hits (which come with their window)
# read these.
DOCUMENT_COLUMNS = ", ".join(
    [
        *(
            f"d.{name}"
            for name in (
                "id",
                "collection",
                "rel_path",
                "docid",
                "uri",
                "title",
                "source_hash",
                "source_mime",
                "source_ext",
                "source_size",
                "source_mtime",
                "mirror_hash",
                "converter_id",
                "converter_version",
                "conversion_warnings_json",
                "content_type",
                "categories_json",
                "frontmatter_date",
            )
        ),
        "(SELECT path FROM collections WHERE name = d.collection) AS collection_root",
        "(SELECT json_group_array(tag) FROM doc_tags WHERE doc_id = d.id) AS tags_json",
    ]
)
# A lexical hit also needs the id range of its chunks (where its snippet comes
# from), read for the top rows only. A mirror's chunks are written together, in
# order: its first and last chunk ids are those of its first and last seq (two
# index seeks, where MIN/MAX(id) walk every chunk entry of a long page).
RESULT_COLUMNS = (
    f"{DOCUMENT_COLUMNS}, "
    "(SELECT id FROM content_chunks WHERE mirror_hash = d.mirror_hash "
    "ORDER BY seq LIMIT 1) AS first_chunk, "
    "(SELECT id FROM content_chunks WHERE mirror_hash = d.mirror_hash "
    "ORDER BY seq DESC LIMIT 1) AS last_chunk"
)
_WEIGHTS = ", ".join(str(w) for w in FIELD_WEIGHTS)


def _rank_sql(filters: str) -> str:
    """Rank first (cut to the limit), then read result columns for the top rows only."""
    if filters:
        ranked = (
            f"SELECT d.id AS id, bm25(documents_fts, {_WEIGHTS}) AS rank "
            f"FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid "
            f"WHERE documents_fts MATCH ? AND {filters} ORDER BY rank LIMIT ?"
        )
    else:
        # Inactive documents are not in the FTS index, so with no other
        # filter no document row is read before the cut.
        ranked = (
            f"SELECT rowid AS id, bm25(documents_fts, {_WEIGHTS}) AS rank "
            f"FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rank LIMIT ?"
        )
    return (
        f"WITH top AS ({ranked}) SELECT {RESULT_COLUMNS}, top.rank "
        f"FROM top JOIN documents d ON d.id = top.id WHERE {ACTIVE} ORDER BY top.rank"
    )


_UNFILTERED_RANK_SQL = _rank_sql("")


def relaxed_match(parsed: LexicalQuery) -> str | None:
    """Any-term form of a multi-term query (negations kept), or None."""
    if len(parsed.positive_terms) + len(parsed.phrases) < 2:
        return None
    if not parsed.negative_terms:
        return parsed.any_match
    negatives = " OR ".join(
        fts_quote(t) if " " in t else fts_quote(t) + "*" for t in parsed.negative_terms
    )
    return f"({parsed.any_match}) NOT ({negatives})"


def rank_documents(
    conn: sqlite3.Connection,
    parsed: LexicalQuery,
    request: SearchRequest,
    fetch: int,
    held: ChunkMemory | None,
    said: Tokenized | None = None,
) -> list[tuple[sqlite3.Row, float]]:
    """Documents matching every term, topped up with any-term matches.

    ``held`` is the memory of ``conn``'s index state (:func:`.chunkkeeper.current`):
    requests are ranked on its document index when it has one, one filtered by
    collection over that collection's rows; other filters rank on FTS5
    (``said``: the search's tokenizations, shared with its other steps).

    A query whose terms never all co-occur would otherwise return nothing;
    documents matching only some terms follow every full match, their raw
    scores scaled below the weakest full match so the order stays honest.
    Whichever index ranks documents (see :mod:`.docindex`), the rule is this.
    """
    filters = request_filters(conn, request)
    tantivy = ranker(conn)
    if tantivy is not None:
        return _rank_on_tantivy(conn, tantivy, parsed, filters, fetch)
    clauses, params = sql_filters(conn, filters)
    if clauses == [ACTIVE]:
        sql = _UNFILTERED_RANK_SQL
        query_params: tuple[Any, ...] = ()
    else:
        sql = _rank_sql(" AND ".join(clauses))
        query_params = tuple(params)

    in_memory: tuple[docmemory.DocumentMemory, Tokenized, KeyArray | None] | None = None
    if held is not None and held.documents is not None and _read_cheaply(filters):
        among = None if clauses == [ACTIVE] else _filtered_rows(conn, clauses, params)
        in_memory = (
            held.documents,
            said if said is not None else Tokenized(held.tokenize),
            among,
        )

    def run(match: str, limit: int) -> list[tuple[sqlite3.Row, float]]:
        if in_memory is not None:
            with contextlib.suppress(docmemory.Unsupported):
                return _ranked_in_memory(conn, *in_memory, match, limit)
        return [
            (row, -float(row["rank"]))
            for row in conn.execute(sql, (match, *query_params, limit)).fetchall()
        ]

    strict = run(parsed.match, fetch)
    relaxed = relaxed_match(parsed)
    if len(strict) >= fetch or relaxed is None:
        return strict
    seen = {int(row["id"]) for row, _ in strict}
    extra = [pair for pair in run(relaxed, fetch + len(seen)) if int(pair[0]["id"]) not in seen][
        : fetch - len(strict)
    ]
    return _topped_up(strict, extra)


def _read_cheaply(filters: Filters) -> bool:
    """Whether the rows these filters keep are read from an index: none, or a
    collection's. Any other filter tests every document; FTS5 tests only the
    matching ones, which costs less for all but the commonest words."""
    return filters == Filters(collection=filters.collection)


def _filtered_rows(
    conn: sqlite3.Connection, clauses: Sequence[str], params: Sequence[Any]
) -> KeyArray:
    """The ids (ascending) of the documents a filtered rank statement would keep: the
    same clauses, so a filter means the same on either index."""
    (listed,) = conn.execute(
        f"SELECT group_concat(id) FROM (SELECT d.id AS id FROM documents d "
        f"WHERE {' AND '.join(clauses)} ORDER BY d.id)",
        tuple(params),
    ).fetchone()
    return listed_keys(listed)


def _ranked_in_memory(
    conn: sqlite3.Connection,
    documents: docmemory.DocumentMemory,
    said: Tokenized,
    among: KeyArray | None,
    match: str,
    limit: int,
) -> list[tuple[sqlite3.Row, float]]:
    """What the rank statement returns, ranked on the held document index (``among``:
    the rows a filter keeps, None for all)."""
    ranked = documents.ranked(match, limit, said, among)
    rows = result_rows(conn, [doc for doc, _ in ranked])
    return [(rows[doc], -rank) for doc, rank in ranked if doc in rows]


def _topped_up(
    strict: list[tuple[sqlite3.Row, float]], extra: list[tuple[sqlite3.Row, float]]
) -> list[tuple[sqlite3.Row, float]]:
    """Full matches, then the any-term ones scaled below the weakest full match."""
    if strict and extra:
        floor = min(score for _, score in strict)
        top = max(score for _, score in extra)
        if top > 0 and floor > 0:
            factor = 0.5 * floor / top
            extra = [(row, score * factor) for row, score in extra]
    return strict + extra


def _rank_on_tantivy(
    conn: sqlite3.Connection,
    tantivy: TantivyRanker,
    parsed: LexicalQuery,
    filters: Filters,
    fetch: int,
) -> list[tuple[sqlite3.Row, float]]:
    strict_ids = tantivy.top(conn, parsed, filters, fetch, any_term=False)
    extra_ids: list[tuple[int, float]] = []
    if len(strict_ids) < fetch and relaxed_match(parsed) is not None:
        seen = {doc for doc, _ in strict_ids}
        extra_ids = [
            hit
            for hit in tantivy.top(conn, parsed, filters, fetch + len(seen), any_term=True)
            if hit[0] not in seen
        ]
    rows = result_rows(conn, [doc for doc, _ in (*strict_ids, *extra_ids)])
    # The index may lag SQLite by a batch: a document retired since is skipped.
    strict = [(rows[doc], score) for doc, score in strict_ids if doc in rows][:fetch]
    extra = [(rows[doc], score) for doc, score in extra_ids if doc in rows]
    return _topped_up(strict, extra[: fetch - len(strict)])


def unranked_documents(conn: sqlite3.Connection, collection: str) -> int:
    """Active documents of a collection that the ranking index does not hold (yet)."""
    tantivy = ranker(conn)
    if tantivy is None:
        row = conn.execute(
            "SELECT COUNT(*) FROM documents d WHERE d.collection = ? AND d.active = 1 "
            "AND NOT EXISTS (SELECT 1 FROM documents_fts f WHERE f.rowid = d.id)",
            (collection,),
        ).fetchone()
        return int(row[0])
    active = conn.execute(
        "SELECT COUNT(*) FROM documents WHERE collection = ? AND active = 1", (collection,)
    ).fetchone()
    return max(0, int(active[0]) - tantivy.collection_size(collection))


def result_rows(conn: sqlite3.Connection, doc_ids: Sequence[int]) -> dict[int, sqlite3.Row]:
    """The result columns of these active documents, by id.

    The id list drives the join (``CROSS JOIN`` keeps that order): left to
    itself the planner walks every active document through the ``active``
    index and tests each against the list, milliseconds at 10,000 documents.
    """
    if not doc_ids:
        return {}
    return {
        int(row["id"]): row
        for row in conn.execute(
            f"SELECT {RESULT_COLUMNS} FROM json_each(?) wanted "
            f"CROSS JOIN documents d ON d.id = wanted.value WHERE {ACTIVE}",
            (json.dumps(list(doc_ids)),),
        )
    }


def search(conn: sqlite3.Connection, request: SearchRequest) -> dict[str, Any]:
    """Run a BM25 search; returns a ``search-results@1.0`` object."""
    validate_request(request)
    if request.now is None:  # one clock for the filters and their echo
        request = replace(request, now=datetime.now(UTC))
    parsed = parse_query(request.query)
    recency = wants_recency(request.query)
    fetch = request.limit * 3 if recency else request.limit
    held = chunkkeeper.current(conn)  # one state read per search, for both steps
    said = None if held is None else Tokenized(held.tokenize)
    ranked = rank_documents(conn, parsed, request, fetch, held, said)
    if recency:
        ranked = sorted(ranked, key=lambda pair: document_instant(pair[0]), reverse=True)[
            : request.limit
        ]
    scores = normalise_scores([score for _, score in ranked])
    kept = [
        (row, score)
        for (row, _), score in zip(ranked, scores, strict=True)
        if request.min_score is None or score >= request.min_score
    ]
    snippet_match = parsed.any_match
    if request.intent and request.intent.strip():
        with contextlib.suppress(GnoError):  # an intent with no words steers nothing
            snippet_match = f"({parsed.any_match}) OR ({parse_query(request.intent).any_match})"
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
