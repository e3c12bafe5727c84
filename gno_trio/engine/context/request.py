"""What a caller asks of the Capsule compiler, and its one canonical form.

Two requests that mean the same thing must compile to the same Capsule, so
every value is normalised before anything is read (Unicode NFC, trimmed,
filter lists de-duplicated and sorted, defaults filled in) and every problem
is refused here, with its Context error code, before retrieval starts: an
unknown collection, a malformed date or a budget that cannot hold anything
never costs a database round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from gno_trio.config import Config
from gno_trio.engine.context import codes
from gno_trio.engine.context.facets import retrieval_line
from gno_trio.engine.context.request_fields import (
    LANGUAGE_TAG,
    MAX_FILTER_CHARS,
    MAX_SAFE_INTEGER,
    MAX_TEXT_CHARS,
    DepthPolicy,
    checked_collections,
    checked_depth,
    checked_query_modes,
    checked_tags,
    checked_uri_prefix,
    filter_values,
    goal_text,
    optional_text,
    positive_int,
    refuse,
    search_text,
    time_bounds,
)
from gno_trio.engine.ingest.chunker import CHARS_PER_TOKEN
from gno_trio.engine.search.scope import EVERYTHING, Scope

DEFAULT_LIMIT: Final = 20
DEFAULT_CANDIDATE_LIMIT: Final = 40
# budgetBytes defaults to budgetTokens times this: the same 4 characters per
# token the shared estimate counts, so neither limit is tighter for ASCII text.
BYTES_PER_TOKEN_REQUEST: Final = CHARS_PER_TOKEN
# Passages taken from each retrieved document: the depth policy's only lever
# besides the default candidate limit, since no model runs at any depth.
PASSAGES_PER_DOCUMENT: Final[dict[str, int]] = {"fast": 1, "balanced": 2, "thorough": 3}


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """The inputs of one compile, as a caller writes them (MCP argument names in snake case).

    ``scope`` is the retrieval's (its ``collections`` are searched one by one).
    """

    goal: str
    budget_tokens: int
    query: str | None = None
    scope: Scope = EVERYTHING
    query_modes: Sequence[tuple[str, str]] = ()
    graph: bool | None = None
    no_rerank: bool = False
    limit: int | None = None
    candidate_limit: int | None = None
    budget_bytes: int | None = None
    safety_margin_tokens: int = 0
    safety_margin_bytes: int = 0
    depth_policy: str = "balanced"


@dataclass(frozen=True, slots=True)
class NormalizedRequest:
    """A validated request; every field is in the form the Capsule records."""

    goal: str
    query: str
    search_query: str
    retrieval_query: str
    collections: tuple[str, ...]
    uri_prefix: str | None
    uri_filter: str | None
    query_modes: tuple[tuple[str, str], ...]
    term_texts: tuple[str, ...]
    tags_all: tuple[str, ...]
    tags_any: tuple[str, ...]
    categories: tuple[str, ...]
    exclude: tuple[str, ...]
    author: str | None
    lang: str | None
    intent: str | None
    min_score: float | None
    since: str | None
    until: str | None
    since_instant: str | None
    until_instant: str | None
    graph_requested: bool
    rerank_requested: bool
    limit: int
    candidate_limit: int
    budget_tokens: int
    budget_bytes: int
    budget_bytes_given: bool
    safety_margin_tokens: int
    safety_margin_bytes: int
    depth_policy: DepthPolicy

    @property
    def passages_per_document(self) -> int:
        return PASSAGES_PER_DOCUMENT[self.depth_policy]

    def search_scope(self, collection: str | None) -> Scope:
        """The scope of the search run for ``collection`` (``None``: every collection).

        The values are the normalised ones; the URI prefix is the filter form
        (``uri_filter``) the search compares against stored URIs.
        """
        return Scope(
            collections=(collection,) if collection else (),
            uri_prefix=self.uri_filter,
            since=self.since,
            until=self.until,
            tags_all=self.tags_all,
            tags_any=self.tags_any,
            categories=self.categories,
            author=self.author,
            lang=self.lang,
            exclude=self.exclude,
            min_score=self.min_score,
            intent=self.intent,
        )

    @property
    def semantic_requested(self) -> bool:
        """Balanced and thorough ask for the vector leg; fast never does."""
        return self.depth_policy != "fast"


def _budget(request: ContextRequest) -> tuple[int, int]:
    tokens = request.budget_tokens
    if not 1 <= tokens <= MAX_SAFE_INTEGER:
        raise refuse(codes.INVALID_BUDGET, "budgetTokens must be a positive safe integer")
    if request.budget_bytes is None:
        size = min(MAX_SAFE_INTEGER, tokens * BYTES_PER_TOKEN_REQUEST)
    else:
        size = request.budget_bytes
        if not 1 <= size <= MAX_SAFE_INTEGER:
            raise refuse(codes.INVALID_BUDGET, "budgetBytes must be a positive safe integer")
    margin_tokens, margin_bytes = request.safety_margin_tokens, request.safety_margin_bytes
    if not 0 <= margin_tokens < tokens:
        raise refuse(
            codes.INVALID_BUDGET,
            f"safetyMarginTokens ({margin_tokens}) must be at least 0 and below "
            f"budgetTokens ({tokens})",
        )
    if not 0 <= margin_bytes < size:
        raise refuse(
            codes.INVALID_BUDGET,
            f"safetyMarginBytes ({margin_bytes}) must be at least 0 and below the byte "
            f"budget ({size})",
        )
    return tokens, size


def normalize_request(
    request: ContextRequest, config: Config, index_name: str, now: datetime
) -> NormalizedRequest:
    """Validate ``request`` against ``config`` and fill in every default.

    Checks run in the order a caller would fix them: goal, collections and
    URI scope, budget, then the remaining filters.
    """
    goal = goal_text(request.goal, "goal")
    query = goal if request.query is None else goal_text(request.query, "query")
    search_query = search_text(query)
    scope = request.scope
    collections = checked_collections(scope.collections, config)
    uri_prefix, uri_filter = checked_uri_prefix(scope.uri_prefix, config, collections, index_name)
    budget_tokens, budget_bytes = _budget(request)
    since, until, since_instant, until_instant = time_bounds(scope.since, scope.until, now)
    depth = checked_depth(request.depth_policy)
    modes, terms = checked_query_modes(request.query_modes)
    if scope.min_score is not None and not 0 <= scope.min_score <= 1:
        raise refuse(codes.INVALID_FILTER, "minScore must be between 0 and 1")
    lang = optional_text(scope.lang, "lang", 64)
    if lang is not None and not LANGUAGE_TAG.fullmatch(lang):
        raise refuse(codes.INVALID_FILTER, f"lang must be a BCP-47 language tag (got {lang!r})")
    return NormalizedRequest(
        goal=goal,
        query=query,
        search_query=search_query,
        retrieval_query=retrieval_line(search_query),
        collections=collections,
        uri_prefix=uri_prefix,
        uri_filter=uri_filter,
        query_modes=modes,
        term_texts=terms,
        tags_all=checked_tags(scope.tags_all, "tagsAll"),
        tags_any=checked_tags(scope.tags_any, "tagsAny"),
        categories=filter_values(scope.categories, "categories"),
        exclude=filter_values(scope.exclude, "exclude"),
        author=optional_text(scope.author, "author", MAX_FILTER_CHARS),
        lang=lang,
        intent=optional_text(scope.intent, "intent", MAX_TEXT_CHARS),
        min_score=scope.min_score,
        since=since,
        until=until,
        since_instant=since_instant,
        until_instant=until_instant,
        graph_requested=depth != "fast" and request.graph is not False,
        rerank_requested=depth != "fast" and not request.no_rerank,
        limit=positive_int(request.limit, DEFAULT_LIMIT, "limit"),
        candidate_limit=positive_int(
            request.candidate_limit,
            DEFAULT_CANDIDATE_LIMIT * (2 if depth == "thorough" else 1),
            "candidateLimit",
        ),
        budget_tokens=budget_tokens,
        budget_bytes=budget_bytes,
        budget_bytes_given=request.budget_bytes is not None,
        safety_margin_tokens=request.safety_margin_tokens,
        safety_margin_bytes=request.safety_margin_bytes,
        depth_policy=depth,
    )
