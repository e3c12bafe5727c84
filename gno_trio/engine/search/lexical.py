"""BM25 search over the document-level FTS index.

Documents are ranked first (cheap: p99 well under a millisecond on the
fixture corpora), then only the returned documents get a snippet, taken
from their best-matching chunk, which also gives the line anchor. Running
``snippet()`` over whole documents instead costs seconds on large pages.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.ingest.documents.records import conversion_block
from gno_trio.engine.search.anchors import Anchor, anchors_for
from gno_trio.engine.search.docindex.ranking import TantivyRanker, ranker
from gno_trio.engine.search.filters import Filters
from gno_trio.engine.search.querygrammar import LexicalQuery, fts_quote, parse_query, wants_recency
from gno_trio.engine.search.timefilter import parse_time_bound
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS
from gno_trio.errors import GnoError

_ACTIVE = "d.active = 1"
# Everything a search result is built from, read for the top rows only: the
# document's columns, its collection's folder, its tags, and the id range of
# its chunks (where its snippet comes from).
_RESULT_COLUMNS = ", ".join(
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
        # A mirror's chunks are written together, in order: its first and last
        # chunk ids are those of its first and last seq (two index seeks, where
        # MIN/MAX(id) walk every chunk entry of a long page).
        "(SELECT id FROM content_chunks WHERE mirror_hash = d.mirror_hash "
        "ORDER BY seq LIMIT 1) AS first_chunk",
        "(SELECT id FROM content_chunks WHERE mirror_hash = d.mirror_hash "
        "ORDER BY seq DESC LIMIT 1) AS last_chunk",
    ]
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
        f"WITH top AS ({ranked}) SELECT {_RESULT_COLUMNS}, top.rank "
        f"FROM top JOIN documents d ON d.id = top.id WHERE {_ACTIVE} ORDER BY top.rank"
    )


_UNFILTERED_RANK_SQL = _rank_sql("")
# The date a document is "about": its frontmatter date, else its file time.
_DOC_DATE = "COALESCE(d.frontmatter_date, d.source_mtime)"


@dataclass(frozen=True, slots=True)
class ContextRule:
    """User guidance attached to results by scope (never treated as evidence)."""

    scope_type: str  # global | collection | prefix
    scope_key: str
    text: str


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int = 5
    collection: str | None = None
    min_score: float | None = None
    lang: str | None = None
    intent: str | None = None
    exclude: Sequence[str] = ()
    since: str | None = None
    until: str | None = None
    categories: Sequence[str] = ()
    author: str | None = None
    tags_all: Sequence[str] = ()
    tags_any: Sequence[str] = ()
    uri_prefix: str | None = None
    contexts: Sequence[ContextRule] = field(default_factory=tuple)
    now: datetime | None = None


def _normalise_tags(tags: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for tag in tags:
        cleaned = tag.strip().lstrip("#").lower()
        if cleaned:
            seen[cleaned] = None
    return list(seen)


def _exclude_phrases(terms: Sequence[str]) -> tuple[str, ...]:
    """The exclude terms worth matching, each an exact phrase.

    Control characters become spaces (FTS5 ends a string at NUL and reports
    "unterminated string"), and a term with no letter or digit is dropped:
    it cannot match a token, and an empty phrase is a syntax error.
    """
    phrases = []
    for term in terms:
        cleaned = "".join(" " if unicodedata.category(c) == "Cc" else c for c in term).strip()
        if any(unicodedata.category(c)[0] in "LN" for c in cleaned):
            phrases.append(cleaned)
    return tuple(phrases)


def validate_request(request: SearchRequest) -> None:
    if not 1 <= request.limit <= 100:
        raise GnoError("INVALID_INPUT", "limit must be between 1 and 100")
    if request.min_score is not None and not 0 <= request.min_score <= 1:
        raise GnoError("INVALID_INPUT", "minScore must be between 0 and 1")


def request_filters(conn: sqlite3.Connection, request: SearchRequest) -> Filters:
    """A request's filters, normalised (``NOT_FOUND`` for an unknown collection)."""
    collection = None
    if request.collection:
        collection = request.collection.strip().lower()
        if (
            conn.execute("SELECT 1 FROM collections WHERE name = ?", (collection,)).fetchone()
            is None
        ):
            raise GnoError("NOT_FOUND", f"Collection not found: {request.collection}")
    now = request.now or datetime.now(UTC)
    since = until = None
    if request.since:
        since = _iso(parse_time_bound(request.since, now=now))
    if request.until:
        until = _iso(parse_time_bound(request.until, now=now, end_of_range=True))
    author = request.author.strip().lower() if request.author else ""
    lang = request.lang.strip().lower() if request.lang else ""
    return Filters(
        collection=collection,
        uri_prefix=request.uri_prefix or None,
        since=since,
        until=until,
        tags_all=tuple(_normalise_tags(request.tags_all)),
        tags_any=tuple(_normalise_tags(request.tags_any)),
        categories=tuple(c.strip().lower() for c in request.categories if c.strip()),
        author=author or None,
        lang=lang or None,
        exclude=_exclude_phrases(request.exclude),
    )


def filter_clauses(conn: sqlite3.Connection, request: SearchRequest) -> tuple[list[str], list[Any]]:
    """SQL conditions (on documents ``d``) and their parameters for a request's filters."""
    return sql_filters(conn, request_filters(conn, request))


def sql_filters(conn: sqlite3.Connection, filters: Filters) -> tuple[list[str], list[Any]]:
    """The SQL form of normalised filters (on documents ``d``)."""
    clauses = [_ACTIVE]
    params: list[Any] = []
    if filters.collection:
        clauses.append("d.collection = ?")
        params.append(filters.collection)
    if filters.uri_prefix:
        clauses.append("substr(d.uri, 1, ?) = ?")
        params.extend([len(filters.uri_prefix), filters.uri_prefix])
    # Stored dates mix shapes ("2024-03-01", "...T10:00:00Z", naive times), so
    # they are compared as instants: as text, "2024-03-01" sorts before
    # "2024-03-01T00:00:00.000Z" and a note dated that day would fall out of
    # since=2024-03-01.
    if filters.since:
        clauses.append(f"julianday({_DOC_DATE}) >= julianday(?)")
        params.append(filters.since)
    if filters.until:
        clauses.append(f"julianday({_DOC_DATE}) <= julianday(?)")
        params.append(filters.until)
    if filters.tags_all:
        marks = ", ".join("?" for _ in filters.tags_all)
        clauses.append(
            f"(SELECT COUNT(DISTINCT t.tag) FROM doc_tags t WHERE t.doc_id = d.id "
            f"AND t.tag IN ({marks})) = ?"
        )
        params.extend([*filters.tags_all, len(filters.tags_all)])
    if filters.tags_any:
        marks = ", ".join("?" for _ in filters.tags_any)
        clauses.append(
            f"EXISTS (SELECT 1 FROM doc_tags t WHERE t.doc_id = d.id AND t.tag IN ({marks}))"
        )
        params.extend(filters.tags_any)
    if filters.categories:
        marks = ", ".join("?" for _ in filters.categories)
        clauses.append(
            f"(lower(COALESCE(d.content_type, '')) IN ({marks}) OR EXISTS (SELECT 1 FROM "
            f"json_each(d.categories_json) j WHERE lower(j.value) IN ({marks})))"
        )
        params.extend([*filters.categories, *filters.categories])
    if filters.author:
        clauses.append("instr(lower(COALESCE(d.author, '')), ?) > 0")
        params.append(filters.author)
    if filters.lang:
        clauses.append(
            "(d.language_hint IS NULL OR lower(d.language_hint) = ? "
            "OR lower(d.language_hint) LIKE ? || '-%')"
        )
        params.extend([filters.lang, filters.lang])
    if filters.exclude:
        tantivy = ranker(conn)
        if tantivy is None:
            clauses.append(
                "d.id NOT IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?)"
            )
            params.append(" OR ".join(fts_quote(p) for p in filters.exclude))
        else:
            clauses.append("d.id NOT IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(tantivy.matching_any(filters.exclude))))
    return clauses, params


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def document_instant(row: sqlite3.Row) -> datetime:
    """When a document is dated (frontmatter date, else mtime), as an aware instant.

    Undated or unparseable values sort as the oldest possible moment.
    """
    for value in (row["frontmatter_date"], row["source_mtime"]):
        if not value:
            continue
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            continue
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return datetime.min.replace(tzinfo=UTC)


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


def _rank(
    conn: sqlite3.Connection, parsed: LexicalQuery, request: SearchRequest, fetch: int
) -> list[tuple[sqlite3.Row, float]]:
    """Documents matching every term, topped up with any-term matches.

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
    if clauses == [_ACTIVE]:
        sql = _UNFILTERED_RANK_SQL
        query_params: tuple[Any, ...] = ()
    else:
        sql = _rank_sql(" AND ".join(clauses))
        query_params = tuple(params)

    def run(match: str, limit: int) -> list[sqlite3.Row]:
        return conn.execute(sql, (match, *query_params, limit)).fetchall()

    strict = [(row, -float(row["rank"])) for row in run(parsed.match, fetch)]
    relaxed = relaxed_match(parsed)
    if len(strict) >= fetch or relaxed is None:
        return strict
    seen = {int(row["id"]) for row, _ in strict}
    extra = [
        (row, -float(row["rank"]))
        for row in run(relaxed, fetch + len(seen))
        if int(row["id"]) not in seen
    ][: fetch - len(strict)]
    return _topped_up(strict, extra)


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


def strictly_matching(
    conn: sqlite3.Connection, parsed: LexicalQuery, doc_ids: Sequence[int]
) -> set[int]:
    """Which of these documents match every term of the query (not just some)."""
    if not doc_ids:
        return set()
    tantivy = ranker(conn)
    if tantivy is not None:
        return tantivy.among(parsed, doc_ids)
    return {
        int(row[0])
        for row in conn.execute(
            "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ? AND rowid IN "
            "(SELECT value FROM json_each(?))",
            (parsed.match, json.dumps(list(doc_ids))),
        )
    }


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
            f"SELECT {_RESULT_COLUMNS} FROM json_each(?) wanted "
            f"CROSS JOIN documents d ON d.id = wanted.value WHERE {_ACTIVE}",
            (json.dumps(list(doc_ids)),),
        )
    }


def normalise_scores(raw: Sequence[float]) -> list[float]:
    """Min-max over the returned set: best 1, worst 0, all equal -> 1."""
    if not raw:
        return []
    high, low = max(raw), min(raw)
    if math.isclose(high, low):
        return [1.0 for _ in raw]
    return [(value - low) / (high - low) for value in raw]


def contexts_for(uri: str, collection: str, rules: Sequence[ContextRule]) -> str | None:
    texts = []
    for rule in rules:
        key = rule.scope_key
        if (
            rule.scope_type == "global"
            or (rule.scope_type == "collection" and key.rstrip(":").lower() == collection)
            or (rule.scope_type == "prefix" and uri.startswith(key))
        ):
            texts.append(rule.text)
    return "\n".join(texts) if texts else None


def tags_by_doc(conn: sqlite3.Connection, doc_ids: Sequence[int]) -> dict[int, list[str]]:
    if not doc_ids:
        return {}
    marks = ", ".join("?" for _ in doc_ids)
    found: dict[int, list[str]] = {}
    for doc_id, tag in conn.execute(
        f"SELECT doc_id, tag FROM doc_tags WHERE doc_id IN ({marks}) ORDER BY tag", tuple(doc_ids)
    ):
        found.setdefault(doc_id, []).append(tag)
    return found


def source_block(row: sqlite3.Row, root: str | None) -> dict[str, Any]:
    source: dict[str, Any] = {
        "relPath": row["rel_path"],
        "mime": row["source_mime"],
        "ext": row["source_ext"],
        "modifiedAt": row["source_mtime"],
        "sizeBytes": row["source_size"],
        "sourceHash": row["source_hash"],
    }
    if root:
        source["absPath"] = f"{root.rstrip('/')}/{row['rel_path']}"
    dated = date_instant(row["frontmatter_date"])
    if dated is not None:
        source["documentDate"] = dated
    return source


def date_instant(value: object) -> str | None:
    """A frontmatter date as the UTC instant it names (a calendar date: its midnight UTC).

    Output contracts carry document dates as date-times; a value that is no
    date at all is left out rather than passed on.
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return _iso(moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC))


def collection_roots(conn: sqlite3.Connection) -> dict[str, str]:
    return {r[0]: r[1] for r in conn.execute("SELECT name, path FROM collections")}


def search(conn: sqlite3.Connection, request: SearchRequest) -> dict[str, Any]:
    """Run a BM25 search; returns a ``search-results@1.0`` object."""
    validate_request(request)
    if request.now is None:  # one clock for the filters and their echo
        request = replace(request, now=datetime.now(UTC))
    parsed = parse_query(request.query)
    recency = wants_recency(request.query)
    fetch = request.limit * 3 if recency else request.limit
    ranked = _rank(conn, parsed, request, fetch)
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
    anchors = anchors_for(conn, spans, snippet_match)
    results = [_result(row, score, anchors.get(row["mirror_hash"]), request) for row, score in kept]
    meta: dict[str, Any] = {
        "query": request.query,
        "mode": "bm25",
        "totalResults": len(results),
    }
    _echo_filters(meta, request)
    return {"results": results, "meta": meta}


def _result(
    row: sqlite3.Row,
    score: float,
    anchor: Anchor | None,
    request: SearchRequest,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "docid": row["docid"],
        "score": round(score, 6),
        "uri": row["uri"],
        "snippet": anchor.snippet if anchor else "",
        "source": source_block(row, row["collection_root"]),
        "title": row["title"],
        "conversion": conversion_block(row),
    }
    if anchor is not None:
        result["line"] = anchor.line
        result["snippetRange"] = {"startLine": anchor.start_line, "endLine": anchor.end_line}
        if anchor.language:
            result["snippetLanguage"] = anchor.language
    if row["content_type"]:
        result["contentType"] = row["content_type"]
    categories_json = row["categories_json"]
    categories = json.loads(categories_json) if categories_json not in (None, "", "[]") else None
    if categories:
        result["categories"] = categories
    tags_json = row["tags_json"]
    if tags_json not in (None, "[]"):
        result["tags"] = sorted(json.loads(tags_json))
    context = contexts_for(row["uri"], row["collection"], request.contexts)
    if context:
        result["context"] = context
    return result


def _echo_filters(meta: dict[str, Any], request: SearchRequest) -> None:
    if request.collection:
        meta["collection"] = request.collection.strip().lower()
    if request.lang:
        meta["queryLanguage"] = request.lang
    if request.intent:
        meta["intent"] = request.intent
    if request.exclude:
        meta["exclude"] = list(request.exclude)
    # The bounds echo as the instants they resolved to ("yesterday" included).
    now = request.now or datetime.now(UTC)
    if request.since:
        meta["since"] = _iso(parse_time_bound(request.since, now=now))
    if request.until:
        meta["until"] = _iso(parse_time_bound(request.until, now=now, end_of_range=True))
    if request.categories:
        meta["categories"] = list(request.categories)
    if request.author:
        meta["author"] = request.author
    if request.tags_all:
        meta["tagsAll"] = _normalise_tags(request.tags_all)
    if request.tags_any:
        meta["tagsAny"] = _normalise_tags(request.tags_any)
    if request.min_score is not None:
        meta["minScore"] = request.min_score
