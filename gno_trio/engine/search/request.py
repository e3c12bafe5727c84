"""What a search asks for: the request, its validation, its filters as the stores take them.

Every retrieval path (BM25, vector, hybrid, diagnosis) takes the same
:class:`SearchRequest` and turns its filters into the same normalised
:class:`~gno_trio.engine.store.document_filters.Filters`, then into the same
conditions on documents; keeping that here means a filter cannot mean one
thing to the lexical leg and another to the vector leg.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.search.docindex.ranking import ranker
from gno_trio.engine.search.querygrammar import fts_quote
from gno_trio.engine.search.scope import EVERYTHING, Scope
from gno_trio.engine.search.timefilter import parse_time_bound
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.document_filters import DocumentFilter, Filters, document_filter
from gno_trio.errors import GnoError


@dataclass(frozen=True, slots=True)
class ContextRule:
    """User guidance attached to results by scope (never treated as evidence)."""

    scope_type: str  # global | collection | prefix
    scope_key: str
    text: str


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One ranked retrieval: the query, how many hits, and the :class:`Scope` it searches."""

    query: str
    limit: int = 5
    scope: Scope = EVERYTHING
    contexts: Sequence[ContextRule] = field(default_factory=tuple)
    now: datetime | None = None

    @property
    def collection(self) -> str | None:
        return self.scope.collection

    def within(self, **changes: Any) -> SearchRequest:
        """This request with its scope changed (``request.within(min_score=None)``)."""
        return replace(self, scope=self.scope.but(**changes))


def normalise_tags(tags: Sequence[str]) -> list[str]:
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
    scope = request.scope
    if scope.min_score is not None and not 0 <= scope.min_score <= 1:
        raise GnoError("INVALID_INPUT", "minScore must be between 0 and 1")
    if len(scope.collections) > 1:
        raise GnoError("INVALID_INPUT", "a search takes one collection")


def request_filters(conn: Connection, request: SearchRequest) -> Filters:
    """A request's filters, normalised (``NOT_FOUND`` for an unknown collection)."""
    scope = request.scope
    collection = None
    if scope.collection:
        collection = scope.collection.strip().lower()
        if not SQLITE_STORES.documents(conn).collection_exists(collection):
            raise GnoError("NOT_FOUND", f"Collection not found: {scope.collection}")
    now = request.now or datetime.now(UTC)
    since = until = None
    if scope.since:
        since = iso_instant(parse_time_bound(scope.since, now=now))
    if scope.until:
        until = iso_instant(parse_time_bound(scope.until, now=now, end_of_range=True))
    author = scope.author.strip().lower() if scope.author else ""
    lang = scope.lang.strip().lower() if scope.lang else ""
    return Filters(
        collection=collection,
        uri_prefix=scope.uri_prefix or None,
        since=since,
        until=until,
        tags_all=tuple(normalise_tags(scope.tags_all)),
        tags_any=tuple(normalise_tags(scope.tags_any)),
        categories=tuple(c.strip().lower() for c in scope.categories if c.strip()),
        author=author or None,
        lang=lang or None,
        exclude=_exclude_phrases(scope.exclude),
    )


def request_document_filter(conn: Connection, request: SearchRequest) -> DocumentFilter:
    """A request's filters as the search stores take them."""
    return document_filter_for(conn, request_filters(conn, request))


def document_filter_for(conn: Connection, filters: Filters) -> DocumentFilter:
    """Normalised filters as the search stores take them: an excluded phrase is looked
    up on the index that ranks documents (in the statement for FTS5, beforehand for
    tantivy)."""
    if not filters.exclude:
        return document_filter(filters)
    tantivy = ranker(conn)
    if tantivy is None:
        return document_filter(
            filters, excluded_match=" OR ".join(fts_quote(p) for p in filters.exclude)
        )
    return document_filter(filters, excluded_ids=list(tantivy.matching_any(filters.exclude)))


def iso_instant(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
