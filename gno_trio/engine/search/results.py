"""Search results as the ``search-results@1.0`` schema shapes them.

A hit's ``source`` block, dates, tags, contexts and the echoed filters are
built here for every mode (bm25, vector, hybrid) and for document reads,
so a document looks the same whichever tool returned it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.ingest.documents.records import conversion_block
from gno_trio.engine.search.anchortext import Anchor
from gno_trio.engine.search.request import ContextRule, SearchRequest, iso_instant, normalise_tags
from gno_trio.engine.search.timefilter import parse_time_bound
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView


def result_rows(conn: Connection, doc_ids: Sequence[int]) -> dict[int, RowView]:
    """The result columns of these active documents, by id."""
    return SQLITE_STORES.search_documents(conn).result_rows(doc_ids)


def document_instant(row: RowView) -> datetime:
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


def tags_by_doc(conn: Connection, doc_ids: Sequence[int]) -> dict[int, list[str]]:
    return SQLITE_STORES.search_documents(conn).tags_by_doc(doc_ids)


def source_block(row: RowView, root: str | None) -> dict[str, Any]:
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
    return iso_instant(moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC))


def collection_roots(conn: Connection) -> dict[str, str]:
    return SQLITE_STORES.search_documents(conn).collection_roots()


def result_object(
    row: RowView,
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


def echo_filters(meta: dict[str, Any], request: SearchRequest) -> None:
    scope = request.scope
    if scope.collection:
        meta["collection"] = scope.collection.strip().lower()
    if scope.lang:
        meta["queryLanguage"] = scope.lang
    if scope.intent:
        meta["intent"] = scope.intent
    if scope.exclude:
        meta["exclude"] = list(scope.exclude)
    # The bounds echo as the instants they resolved to ("yesterday" included).
    now = request.now or datetime.now(UTC)
    if scope.since:
        meta["since"] = iso_instant(parse_time_bound(scope.since, now=now))
    if scope.until:
        meta["until"] = iso_instant(parse_time_bound(scope.until, now=now, end_of_range=True))
    if scope.categories:
        meta["categories"] = list(scope.categories)
    if scope.author:
        meta["author"] = scope.author
    if scope.tags_all:
        meta["tagsAll"] = normalise_tags(scope.tags_all)
    if scope.tags_any:
        meta["tagsAny"] = normalise_tags(scope.tags_any)
    if scope.min_score is not None:
        meta["minScore"] = scope.min_score
