"""The metadata fields read out of parsed frontmatter: tags, author, categories, date, relations.

Users spell these many ways (a tag list or a comma string, ``category`` or
``categories``, a date in one of a dozen formats); each field is brought
to one normal form here so the index, filters and the typed graph see the
same value whatever the spelling.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from gno_trio.engine.ingest.frontmatter_block import iso_date

_TAG_SEPARATORS: Final = re.compile(r"[\s_]+")
_TAG_INVALID: Final = re.compile(r"[^\w\-./]")
_TAG_DASH_RUNS: Final = re.compile(r"-{2,}")


def normalize_tag(raw: str) -> str | None:
    """Bring a tag into the index grammar, or ``None`` if nothing valid remains.

    Grammar: ``/``-separated segments of lower-case letters (any script),
    digits, ``-`` and ``.``; each segment starts and ends with a letter or
    digit. Input is NFC-normalised and lower-cased, a leading ``#`` is
    dropped, spaces and underscores become ``-`` (``Machine Learning`` ->
    ``machine-learning``) and any other character is removed.
    """
    text = unicodedata.normalize("NFC", raw.strip().lstrip("#")).lower()
    text = _TAG_SEPARATORS.sub("-", text)
    text = _TAG_INVALID.sub("", text)
    text = _TAG_DASH_RUNS.sub("-", text)
    segments = (segment.strip("-.") for segment in text.split("/"))
    return "/".join(segment for segment in segments if segment) or None


_TAG_LIST_TOKEN: Final = re.compile(r"\[\[([^\[\]\n]+)\]\]|[^\s,]+")


def split_tag_list(value: str) -> list[str]:
    """Split a tag string: on commas when there are any, else on whitespace.

    ``[[multi word]]`` (Logseq page reference) stays one tag in both cases.
    """
    if "," in value:
        pieces = value.split(",")
    else:
        pieces = [m.group(1) or m.group(0) for m in _TAG_LIST_TOKEN.finditer(value)]
    tags = []
    for piece in pieces:
        stripped = piece.strip()
        if stripped.startswith("[[") and stripped.endswith("]]"):
            stripped = stripped[2:-2]
        tag = normalize_tag(stripped)
        if tag is not None:
            tags.append(tag)
    return tags


def frontmatter_tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return split_tag_list(value)
    tags: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                tag = normalize_tag(str(item))
                if tag is not None:
                    tags.append(tag)
    return tags


def first_field(fields: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        value = fields.get(name)
        if value is not None and value != "" and value != []:
            return value
    return None


def scalar_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        text = " ".join(str(value).split())
        return text or None
    return None


def author_field(value: Any) -> str | None:
    if isinstance(value, dict):
        return scalar_text(value.get("name"))
    if isinstance(value, list):
        names = [name for name in (author_field(item) for item in value) if name]
        return ", ".join(names) or None
    return scalar_text(value)


def source_author(source: Any) -> str | None:
    """The author a captured note's provenance names (``source: {author: ...}``).

    A captured note records who wrote the text it holds under ``source``;
    with no top-level ``author`` that is the note's author for filtering and
    search.
    """
    if not isinstance(source, dict):
        return None
    for key, value in source.items():
        if isinstance(key, str) and key.lower() == "author":
            return author_field(value)
    return None


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def categories_field(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return _unique(part.strip() for part in value.split(","))
    if isinstance(value, list):
        return _unique(text for text in (scalar_text(item) for item in value) if text)
    text = scalar_text(value)
    return (text,) if text else ()


_DATE_FORMATS: Final = (
    "%Y/%m/%d",
    "%Y.%m.%d",
    "%d.%m.%Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d %H:%M:%S",
)


def normalize_date(value: Any) -> str | None:
    """ISO-8601 text for a frontmatter date value, or ``None`` when it is not a date.

    Date-only values stay ``YYYY-MM-DD``; times with an offset are converted to
    UTC (``...Z``) so that stored dates sort correctly as strings.
    """
    if isinstance(value, dt.date):
        return iso_date(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text).isoformat()
        return iso_date(dt.datetime.fromisoformat(text))
    except ValueError:
        pass
    for fmt in _DATE_FORMATS:
        try:
            parsed = dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
        if "%H" in fmt:
            return parsed.isoformat()
        return parsed.date().isoformat()
    return None


def date_field(fields: Mapping[str, Any]) -> str | None:
    for name in ("date", "created", "updated"):
        normalized = normalize_date(fields.get(name))
        if normalized is not None:
            return normalized
    return None


_CAMEL_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_IDENTIFIER: Final = re.compile(r"[^A-Za-z0-9]+")


def snake_case(name: str) -> str:
    """``relatedTo`` / ``Related To`` / ``related-to`` -> ``related_to``."""
    return _NON_IDENTIFIER.sub("_", _CAMEL_BOUNDARY.sub("_", name)).strip("_").lower()


def _relation_target(value: Any) -> str | None:
    text = scalar_text(value)
    if text is None:
        return None
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].strip()
    return text or None


def _relation_pairs(value: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and "type" in item and "target" in item:
                yield item["type"], item["target"]


def relations_field(value: Any) -> tuple[tuple[str, str], ...]:
    """Typed edges from ``relations: {supersedes: [a, b], related_to: c}``.

    The list form ``relations: [{type: supersedes, target: a}]`` is accepted too.
    """
    pairs: dict[tuple[str, str], None] = {}
    for raw_type, raw_targets in _relation_pairs(value):
        edge_type = snake_case(str(raw_type))
        if not edge_type:
            continue
        targets = raw_targets if isinstance(raw_targets, list) else [raw_targets]
        for raw_target in targets:
            target = _relation_target(raw_target)
            if target is not None:
                pairs[(edge_type, target)] = None
    return tuple(pairs)
