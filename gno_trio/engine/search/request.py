"""What a search asks for: the request, its validation, and its filters as SQL.

Every retrieval path (BM25, vector, hybrid, diagnosis) takes the same
:class:`SearchRequest` and turns its filters into the same normalised
:class:`.filters.Filters`, then into conditions on documents ``d``; keeping
that here means a filter cannot mean one thing to the lexical leg and
another to the vector leg.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.search.docindex.ranking import ranker
from gno_trio.engine.search.filters import Filters
from gno_trio.engine.search.querygrammar import fts_quote
from gno_trio.engine.search.scope import EVERYTHING, Scope
from gno_trio.engine.search.timefilter import parse_time_bound
from gno_trio.errors import GnoError

ACTIVE = "d.active = 1"
# The date a document is "about": its frontmatter date, else its file time.
DOC_DATE = "COALESCE(d.frontmatter_date, d.source_mtime)"


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


def request_filters(conn: sqlite3.Connection, request: SearchRequest) -> Filters:
    """A request's filters, normalised (``NOT_FOUND`` for an unknown collection)."""
    scope = request.scope
    collection = None
    if scope.collection:
        collection = scope.collection.strip().lower()
        if (
            conn.execute("SELECT 1 FROM collections WHERE name = ?", (collection,)).fetchone()
            is None
        ):
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


def filter_clauses(conn: sqlite3.Connection, request: SearchRequest) -> tuple[list[str], list[Any]]:
    """SQL conditions (on documents ``d``) and their parameters for a request's filters."""
    return sql_filters(conn, request_filters(conn, request))


def sql_filters(conn: sqlite3.Connection, filters: Filters) -> tuple[list[str], list[Any]]:
    """The SQL form of normalised filters (on documents ``d``)."""
    clauses = [ACTIVE]
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
        clauses.append(f"julianday({DOC_DATE}) >= julianday(?)")
        params.append(filters.since)
    if filters.until:
        clauses.append(f"julianday({DOC_DATE}) <= julianday(?)")
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


def iso_instant(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
