"""The rules for each field of a Capsule request: its limits, its canonical form and its error.

Every field is brought to one canonical form (Unicode NFC, trimmed,
de-duplicated and sorted where order carries no meaning) or refused with
its Context error code; :func:`~gno_trio.engine.context.request.normalize_request`
applies them in order, so two requests that mean the same thing compile
to the same Capsule.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Final, Literal

from gno_trio.config import Config
from gno_trio.engine.context import codes
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

_COLLECTION_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
LANGUAGE_TAG: Final = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*", re.ASCII)
# A canonical gno:// prefix: collection, then percent-encoded path characters
# (upper-case hex, never an encoded slash), then an optional index selector.
URI_PREFIX_PATTERN: Final = re.compile(
    r"gno://(?P<collection>[a-z0-9][a-z0-9_-]{0,63})/"
    r"(?P<path>(?:[A-Za-z0-9_.!~*'()/\-]|%[0-9A-F]{2})*)"
    r"(?:\?index=(?P<index>(?:[A-Za-z0-9_.!~*'()\-]|%[0-9A-F]{2})+))?"
)


def refuse(code: str, message: str) -> GnoError:
    return GnoError(code, message)


def canonical_text(value: str) -> str:
    """NFC, one line-ending convention, trimmed."""
    text = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def _collapse(text: str) -> str:
    return " ".join(text.split())


def goal_text(value: str, label: str) -> str:
    text = canonical_text(value)
    if not text:
        raise refuse(codes.INVALID_GOAL, f"The {label} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise refuse(
            codes.INVALID_GOAL,
            f"The {label} has {len(text)} characters; at most {MAX_TEXT_CHARS} are allowed",
        )
    return text


def search_text(query: str) -> str:
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
    raise refuse(codes.INVALID_GOAL, "The query has no searchable words (letters or digits)")


def filter_values(values: Iterable[str], label: str) -> tuple[str, ...]:
    cleaned = {unicodedata.normalize("NFC", value).strip() for value in values}
    if len(cleaned) > MAX_FILTER_VALUES:
        raise refuse(codes.INVALID_FILTER, f"{label} takes at most {MAX_FILTER_VALUES} values")
    for value in cleaned:
        if not value or len(value) > MAX_FILTER_CHARS or _has_control(value):
            raise refuse(
                codes.INVALID_FILTER,
                f"{label} values must be 1-{MAX_FILTER_CHARS} characters without control "
                f"characters (got {value[:40]!r})",
            )
    return tuple(sorted(cleaned))


def checked_tags(values: Iterable[str], label: str) -> tuple[str, ...]:
    cleaned = {unicodedata.normalize("NFC", value).strip().lstrip("#").lower() for value in values}
    if len(cleaned) > MAX_FILTER_VALUES:
        raise refuse(codes.INVALID_FILTER, f"{label} takes at most {MAX_FILTER_VALUES} tags")
    for tag in cleaned:
        if (
            not tag
            or len(tag) > MAX_FILTER_CHARS
            or _has_control(tag)
            or any(c.isspace() for c in tag)
        ):
            raise refuse(
                codes.INVALID_FILTER,
                f"{label} contains an invalid tag {tag[:40]!r}: tags are 1-{MAX_FILTER_CHARS} "
                "characters without spaces",
            )
    return tuple(sorted(cleaned))


def _has_control(text: str) -> bool:
    return any(unicodedata.category(c) == "Cc" for c in text)


def checked_collections(values: Iterable[str], config: Config) -> tuple[str, ...]:
    names = {value.strip().lower() for value in values}
    if len(names) > MAX_FILTER_VALUES:
        raise refuse(codes.INVALID_FILTER, f"collections takes at most {MAX_FILTER_VALUES} names")
    for name in sorted(names):
        if not _COLLECTION_NAME.fullmatch(name) or config.collection(name) is None:
            raise refuse(codes.INVALID_FILTER, f"Collection not found: {name}")
    return tuple(sorted(names))


def checked_uri_prefix(
    value: str | None, config: Config, collections: Sequence[str], index_name: str
) -> tuple[str | None, str | None]:
    """The recorded prefix and the plain prefix matched against stored URIs."""
    if value is None:
        return None, None
    prefix = value.strip()
    match = URI_PREFIX_PATTERN.fullmatch(prefix)
    if match is None or "%2F" in match["path"]:
        raise refuse(
            codes.INVALID_URI,
            f"uriPrefix must be a canonical gno://<collection>/<path> prefix (got {prefix[:80]!r})",
        )
    collection = match["collection"]
    if config.collection(collection) is None:
        raise refuse(codes.INVALID_FILTER, f"Collection not found: {collection}")
    if collections and collection not in collections:
        raise refuse(
            codes.INVALID_URI,
            f"uriPrefix names collection {collection}, which is outside the requested collections",
        )
    if match["index"] is not None and match["index"] != index_name:
        raise refuse(
            codes.INVALID_URI,
            f"uriPrefix selects index {match['index']}; this server serves {index_name}",
        )
    return prefix, prefix.split("?", 1)[0]


def checked_query_modes(
    modes: Sequence[tuple[str, str]],
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    if len(modes) > MAX_FILTER_VALUES:
        raise refuse(codes.INVALID_FILTER, f"queryModes takes at most {MAX_FILTER_VALUES} entries")
    cleaned: list[tuple[str, str]] = []
    for mode, raw in modes:
        if mode not in QUERY_MODES:
            raise refuse(codes.INVALID_FILTER, f"Unknown query mode: {mode}")
        text = canonical_text(raw)
        if not text or len(text) > MAX_VARIANT_CHARS:
            raise refuse(
                codes.INVALID_FILTER,
                f"queryModes '{mode}' text must be 1-{MAX_VARIANT_CHARS} characters",
            )
        cleaned.append((mode, text))
    if sum(1 for mode, _ in cleaned if mode == "hyde") > 1:
        raise refuse(codes.INVALID_FILTER, "At most one hyde entry is allowed in queryModes")
    terms: dict[str, None] = {}
    for mode, text in cleaned:
        if mode == "term":
            line = _collapse(text)
            try:
                parse_query(line)
            except GnoError as error:
                raise refuse(codes.INVALID_FILTER, f"queryModes term: {error.message}") from None
            terms.setdefault(line, None)
    return tuple(cleaned), tuple(terms)


def iso_instant(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def time_bounds(
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
            raise refuse(codes.INVALID_FILTER, error.message) from None
        originals.append(text)
    low, high = resolved
    if low is not None and high is not None and low > high:
        raise refuse(codes.INVALID_FILTER, "since is later than until")
    return (
        originals[0],
        originals[1],
        iso_instant(low) if low else None,
        iso_instant(high) if high else None,
    )


def optional_text(value: str | None, label: str, limit: int) -> str | None:
    if value is None:
        return None
    text = canonical_text(value)
    if not text or len(text) > limit:
        raise refuse(codes.INVALID_FILTER, f"{label} must be 1-{limit} characters")
    return text


def checked_depth(value: str) -> DepthPolicy:
    if value == "fast":
        return "fast"
    if value == "balanced":
        return "balanced"
    if value == "thorough":
        return "thorough"
    raise refuse(codes.INVALID_FILTER, f"depthPolicy must be fast, balanced or thorough: {value}")


def positive_int(value: int | None, default: int, label: str) -> int:
    if value is None:
        return default
    if not 1 <= value <= MAX_SAFE_INTEGER:
        raise refuse(codes.INVALID_FILTER, f"{label} must be a positive safe integer")
    return value
