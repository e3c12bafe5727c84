"""What a caller asks of the Capsule compiler, and its one canonical form.

Two requests that mean the same thing must compile to the same Capsule, so
every value is normalised before anything is read (Unicode NFC, trimmed,
filter lists de-duplicated and sorted, defaults filled in) and every problem
is refused here, with its Context error code, before retrieval starts: an
unknown collection, a malformed date or a budget that cannot hold anything
never costs a database round trip.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal

from gno_trio.config import Config
from gno_trio.engine.context import codes
from gno_trio.engine.context.facets import retrieval_line
from gno_trio.engine.ingest.chunker import CHARS_PER_TOKEN
from gno_trio.engine.search.hybrid import QUERY_MODES
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.engine.search.timefilter import parse_time_bound
from gno_trio.errors import GnoError

DepthPolicy = Literal["fast", "balanced", "thorough"]

# JSON numbers beyond 2**53 - 1 lose precision in JavaScript clients and
# overflow SQLite's 64-bit integers; GNO caps open-ended integers here too.
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991
MAX_TEXT_CHARS: Final = 16_384
MAX_VARIANT_CHARS: Final = 4_096
MAX_FILTER_VALUES: Final = 128
MAX_FILTER_CHARS: Final = 256
DEFAULT_LIMIT: Final = 20
DEFAULT_CANDIDATE_LIMIT: Final = 40
# budgetBytes defaults to budgetTokens times this: the same 4 characters per
# token the shared estimate counts, so neither limit is tighter for ASCII text.
BYTES_PER_TOKEN_REQUEST: Final = CHARS_PER_TOKEN
# Passages taken from each retrieved document: the depth policy's only lever
# besides the default candidate limit, since no model runs at any depth.
PASSAGES_PER_DOCUMENT: Final[dict[str, int]] = {"fast": 1, "balanced": 2, "thorough": 3}

_COLLECTION_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_LANGUAGE_TAG: Final = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*", re.ASCII)
# A canonical gno:// prefix: collection, then percent-encoded path characters
# (upper-case hex, never an encoded slash), then an optional index selector.
URI_PREFIX_PATTERN: Final = re.compile(
    r"gno://(?P<collection>[a-z0-9][a-z0-9_-]{0,63})/"
    r"(?P<path>(?:[A-Za-z0-9_.!~*'()/\-]|%[0-9A-F]{2})*)"
    r"(?:\?index=(?P<index>(?:[A-Za-z0-9_.!~*'()\-]|%[0-9A-F]{2})+))?"
)


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """The inputs of one compile, as a caller writes them (MCP argument names in snake case)."""

    goal: str
    budget_tokens: int
    query: str | None = None
    collections: Sequence[str] = ()
    uri_prefix: str | None = None
    query_modes: Sequence[tuple[str, str]] = ()
    tags_all: Sequence[str] = ()
    tags_any: Sequence[str] = ()
    categories: Sequence[str] = ()
    exclude: Sequence[str] = ()
    author: str | None = None
    lang: str | None = None
    intent: str | None = None
    min_score: float | None = None
    since: str | None = None
    until: str | None = None
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

    @property
    def semantic_requested(self) -> bool:
        """Balanced and thorough ask for the vector leg; fast never does."""
        return self.depth_policy != "fast"


def _fail(code: str, message: str) -> GnoError:
    return GnoError(code, message)


def canonical_text(value: str) -> str:
    """NFC, one line-ending convention, trimmed."""
    text = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _goal_text(value: str, label: str) -> str:
    text = canonical_text(value)
    if not text:
        raise _fail(codes.INVALID_GOAL, f"The {label} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise _fail(
            codes.INVALID_GOAL,
            f"The {label} has {len(text)} characters; at most {MAX_TEXT_CHARS} are allowed",
        )
    return text


def _search_text(query: str) -> str:
    """The line actually searched: whitespace collapsed, cut at a word to 4,096 characters.

    An unmatched double quote is dropped rather than refused: a goal is prose,
    and a stray quote in it should not fail the whole compile.
    """
    line = _collapse(query)
    if len(line) > MAX_VARIANT_CHARS:
        line = line[:MAX_VARIANT_CHARS].rsplit(" ", 1)[0] or line[:MAX_VARIANT_CHARS]
    for candidate in (line, line.replace('"', " ")):
        try:
            parse_query(candidate)
        except GnoError:
            continue
        return _collapse(candidate)
    raise _fail(codes.INVALID_GOAL, "The query has no searchable words (letters or digits)")


def _filter_values(values: Iterable[str], label: str) -> tuple[str, ...]:
    cleaned = {unicodedata.normalize("NFC", value).strip() for value in values}
    if len(cleaned) > MAX_FILTER_VALUES:
        raise _fail(codes.INVALID_FILTER, f"{label} takes at most {MAX_FILTER_VALUES} values")
    for value in cleaned:
        if not value or len(value) > MAX_FILTER_CHARS or _has_control(value):
            raise _fail(
                codes.INVALID_FILTER,
                f"{label} values must be 1-{MAX_FILTER_CHARS} characters without control "
                f"characters (got {value[:40]!r})",
            )
    return tuple(sorted(cleaned))


def _tags(values: Iterable[str], label: str) -> tuple[str, ...]:
    cleaned = {unicodedata.normalize("NFC", value).strip().lstrip("#").lower() for value in values}
    if len(cleaned) > MAX_FILTER_VALUES:
        raise _fail(codes.INVALID_FILTER, f"{label} takes at most {MAX_FILTER_VALUES} tags")
    for tag in cleaned:
        if (
            not tag
            or len(tag) > MAX_FILTER_CHARS
            or _has_control(tag)
            or any(c.isspace() for c in tag)
        ):
            raise _fail(
                codes.INVALID_FILTER,
                f"{label} contains an invalid tag {tag[:40]!r}: tags are 1-{MAX_FILTER_CHARS} "
                "characters without spaces",
            )
    return tuple(sorted(cleaned))


def _has_control(text: str) -> bool:
    return any(unicodedata.category(c) == "Cc" for c in text)


def _collections(values: Iterable[str], config: Config) -> tuple[str, ...]:
    names = {value.strip().lower() for value in values}
    if len(names) > MAX_FILTER_VALUES:
        raise _fail(codes.INVALID_FILTER, f"collections takes at most {MAX_FILTER_VALUES} names")
    for name in sorted(names):
        if not _COLLECTION_NAME.fullmatch(name) or config.collection(name) is None:
            raise _fail(codes.INVALID_FILTER, f"Collection not found: {name}")
    return tuple(sorted(names))


def _uri_prefix(
    value: str | None, config: Config, collections: Sequence[str], index_name: str
) -> tuple[str | None, str | None]:
    """The recorded prefix and the plain prefix matched against stored URIs."""
    if value is None:
        return None, None
    prefix = value.strip()
    match = URI_PREFIX_PATTERN.fullmatch(prefix)
    if match is None or "%2F" in match["path"]:
        raise _fail(
            codes.INVALID_URI,
            f"uriPrefix must be a canonical gno://<collection>/<path> prefix (got {prefix[:80]!r})",
        )
    collection = match["collection"]
    if config.collection(collection) is None:
        raise _fail(codes.INVALID_FILTER, f"Collection not found: {collection}")
    if collections and collection not in collections:
        raise _fail(
            codes.INVALID_URI,
            f"uriPrefix names collection {collection}, which is outside the requested collections",
        )
    if match["index"] is not None and match["index"] != index_name:
        raise _fail(
            codes.INVALID_URI,
            f"uriPrefix selects index {match['index']}; this server serves {index_name}",
        )
    return prefix, prefix.split("?", 1)[0]


def _query_modes(
    modes: Sequence[tuple[str, str]],
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    if len(modes) > MAX_FILTER_VALUES:
        raise _fail(codes.INVALID_FILTER, f"queryModes takes at most {MAX_FILTER_VALUES} entries")
    cleaned: list[tuple[str, str]] = []
    for mode, raw in modes:
        if mode not in QUERY_MODES:
            raise _fail(codes.INVALID_FILTER, f"Unknown query mode: {mode}")
        text = canonical_text(raw)
        if not text or len(text) > MAX_VARIANT_CHARS:
            raise _fail(
                codes.INVALID_FILTER,
                f"queryModes '{mode}' text must be 1-{MAX_VARIANT_CHARS} characters",
            )
        cleaned.append((mode, text))
    if sum(1 for mode, _ in cleaned if mode == "hyde") > 1:
        raise _fail(codes.INVALID_FILTER, "At most one hyde entry is allowed in queryModes")
    terms: dict[str, None] = {}
    for mode, text in cleaned:
        if mode == "term":
            line = _collapse(text)
            try:
                parse_query(line)
            except GnoError as error:
                raise _fail(codes.INVALID_FILTER, f"queryModes term: {error.message}") from None
            terms.setdefault(line, None)
    return tuple(cleaned), tuple(terms)


def _budget(request: ContextRequest) -> tuple[int, int]:
    tokens = request.budget_tokens
    if not 1 <= tokens <= MAX_SAFE_INTEGER:
        raise _fail(codes.INVALID_BUDGET, "budgetTokens must be a positive safe integer")
    if request.budget_bytes is None:
        size = min(MAX_SAFE_INTEGER, tokens * BYTES_PER_TOKEN_REQUEST)
    else:
        size = request.budget_bytes
        if not 1 <= size <= MAX_SAFE_INTEGER:
            raise _fail(codes.INVALID_BUDGET, "budgetBytes must be a positive safe integer")
    margin_tokens, margin_bytes = request.safety_margin_tokens, request.safety_margin_bytes
    if not 0 <= margin_tokens < tokens:
        raise _fail(
            codes.INVALID_BUDGET,
            f"safetyMarginTokens ({margin_tokens}) must be at least 0 and below "
            f"budgetTokens ({tokens})",
        )
    if not 0 <= margin_bytes < size:
        raise _fail(
            codes.INVALID_BUDGET,
            f"safetyMarginBytes ({margin_bytes}) must be at least 0 and below the byte "
            f"budget ({size})",
        )
    return tokens, size


def iso_instant(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _time_bounds(
    since: str | None, until: str | None, now: datetime
) -> tuple[str | None, str | None, str | None, str | None]:
    """Original bounds (for retrieval) and their resolved UTC instants (for the Capsule)."""
    resolved: list[datetime | None] = []
    originals: list[str | None] = []
    for value, end in ((since, False), (until, True)):
        if value is None:
            resolved.append(None)
            originals.append(None)
            continue
        text = value.strip()
        try:
            resolved.append(parse_time_bound(text, now=now, end_of_range=end))
        except GnoError as error:
            raise _fail(codes.INVALID_FILTER, error.message) from None
        originals.append(text)
    low, high = resolved
    if low is not None and high is not None and low > high:
        raise _fail(codes.INVALID_FILTER, "since is later than until")
    return (
        originals[0],
        originals[1],
        iso_instant(low) if low else None,
        iso_instant(high) if high else None,
    )


def _optional_text(value: str | None, label: str, limit: int) -> str | None:
    if value is None:
        return None
    text = canonical_text(value)
    if not text or len(text) > limit:
        raise _fail(codes.INVALID_FILTER, f"{label} must be 1-{limit} characters")
    return text


def _depth(value: str) -> DepthPolicy:
    if value == "fast":
        return "fast"
    if value == "balanced":
        return "balanced"
    if value == "thorough":
        return "thorough"
    raise _fail(codes.INVALID_FILTER, f"depthPolicy must be fast, balanced or thorough: {value}")


def _positive(value: int | None, default: int, label: str) -> int:
    if value is None:
        return default
    if not 1 <= value <= MAX_SAFE_INTEGER:
        raise _fail(codes.INVALID_FILTER, f"{label} must be a positive safe integer")
    return value


def normalize_request(
    request: ContextRequest, config: Config, index_name: str, now: datetime
) -> NormalizedRequest:
    """Validate ``request`` against ``config`` and fill in every default.

    Checks run in the order a caller would fix them: goal, collections and
    URI scope, budget, then the remaining filters.
    """
    goal = _goal_text(request.goal, "goal")
    query = goal if request.query is None else _goal_text(request.query, "query")
    search_query = _search_text(query)
    collections = _collections(request.collections, config)
    uri_prefix, uri_filter = _uri_prefix(request.uri_prefix, config, collections, index_name)
    budget_tokens, budget_bytes = _budget(request)
    since, until, since_instant, until_instant = _time_bounds(request.since, request.until, now)
    depth = _depth(request.depth_policy)
    modes, terms = _query_modes(request.query_modes)
    if request.min_score is not None and not 0 <= request.min_score <= 1:
        raise _fail(codes.INVALID_FILTER, "minScore must be between 0 and 1")
    lang = _optional_text(request.lang, "lang", 64)
    if lang is not None and not _LANGUAGE_TAG.fullmatch(lang):
        raise _fail(codes.INVALID_FILTER, f"lang must be a BCP-47 language tag (got {lang!r})")
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
        tags_all=_tags(request.tags_all, "tagsAll"),
        tags_any=_tags(request.tags_any, "tagsAny"),
        categories=_filter_values(request.categories, "categories"),
        exclude=_filter_values(request.exclude, "exclude"),
        author=_optional_text(request.author, "author", MAX_FILTER_CHARS),
        lang=lang,
        intent=_optional_text(request.intent, "intent", MAX_TEXT_CHARS),
        min_score=request.min_score,
        since=since,
        until=until,
        since_instant=since_instant,
        until_instant=until_instant,
        graph_requested=depth != "fast" and request.graph is not False,
        rerank_requested=depth != "fast" and not request.no_rerank,
        limit=_positive(request.limit, DEFAULT_LIMIT, "limit"),
        candidate_limit=_positive(
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
