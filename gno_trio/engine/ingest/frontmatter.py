"""Document metadata from a text mirror: frontmatter, title, tags, headings, links.

This runs on every file during indexing, so it is built from a handful of
whole-text regular expressions (no per-line Python loops, no nested
quantifiers that can backtrack) plus one YAML parse of the frontmatter block.
It never raises on bad input: a broken frontmatter block is reported in
``frontmatter_error`` and the document is indexed anyway, because losing a
note over a typo in its header is worse than indexing it without metadata.

Code is invisible to the scanners: fenced blocks and inline code spans are
blanked out (same length, newlines kept) before headings, hashtags and links
are looked for, so ``# comment`` in a Python fence is neither a heading nor a
tag, and line/column positions stay those of the original text.
"""

from __future__ import annotations

import base64
import bisect
import datetime as dt
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import unquote

import yaml

from gno_trio.engine.ingest import plain_yaml

# ---------------------------------------------------------------------------
# Public types
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Link:
    """One outgoing link in the body, positioned in the full text (1-based)."""

    kind: str
    target: str
    collection: str | None
    heading: str | None
    display: str | None
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """Everything the index stores about a document besides its text and chunks."""

    frontmatter: Mapping[str, Any]
    frontmatter_error: str | None
    body: str
    body_start_line: int
    title: str
    tags: tuple[str, ...]
    author: str | None
    categories: tuple[str, ...]
    content_type: str | None
    date: str | None
    relations: tuple[tuple[str, str], ...]
    headings: tuple[str, ...]
    links: tuple[Link, ...]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with its frontmatter as a dict (text is prepared in worker processes)."""
        values = [getattr(self, name) for name in self.__slots__]
        values[0] = dict(self.frontmatter)
        return _unpickle_meta, tuple(values)


def _unpickle_meta(frontmatter: dict[str, Any], *rest: Any) -> DocumentMeta:
    return DocumentMeta(MappingProxyType(frontmatter), *rest)


# ---------------------------------------------------------------------------
# Tags
# ---------------------------------------------------------------------------

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


def _split_tag_list(value: str) -> list[str]:
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


def _frontmatter_tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return _split_tag_list(value)
    tags: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                tag = normalize_tag(str(item))
                if tag is not None:
                    tags.append(tag)
    return tags


# ---------------------------------------------------------------------------
# Frontmatter block
# ---------------------------------------------------------------------------

MAX_FRONTMATTER_CHARS: Final = 256 * 1024
"""Frontmatter blocks larger than this are not parsed (they are never real metadata)."""

_MAX_YAML_NODES: Final = 20_000
_MAX_YAML_DEPTH: Final = 64

_CLOSING_DELIMITER: Final = re.compile(r"^(?:---|\.\.\.)[ \t\r]*$", re.MULTILINE)
_YAML_KEY_LINE: Final = re.compile(r"[ \t]*[\w\"'-][^:\n]*:(?:[ \t]|\r?$)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Block:
    yaml_text: str | None  # None: no frontmatter block at all
    body: str
    body_start_line: int
    error: str | None


def _find_block(text: str) -> _Block:
    """Locate a ``---`` ... ``---`` block that opens on the very first line."""
    first_newline = text.find("\n")
    first_line = text if first_newline == -1 else text[:first_newline]
    if first_line.rstrip() != "---":
        return _Block(None, text, 1, None)
    closing = None if first_newline == -1 else _CLOSING_DELIMITER.search(text, first_newline + 1)
    if closing is None:
        # A lone '---' is also a markdown horizontal rule; only complain when
        # the next line reads like the 'key: value' of an unfinished header.
        looks_like_yaml = _YAML_KEY_LINE.match(text, first_newline + 1) is not None
        return _Block(
            None,
            text,
            1,
            "frontmatter opened with '---' on line 1 is never closed "
            "(add a closing '---' line); indexed without frontmatter"
            if looks_like_yaml
            else None,
        )
    closing_line = text.count("\n", 0, closing.start()) + 1
    body_begin = min(closing.end() + 1, len(text))
    return _Block(
        text[first_newline + 1 : closing.start()], text[body_begin:], closing_line + 1, None
    )


class _TooComplex(Exception):
    """The YAML value graph is too deep or too large (e.g. an alias bomb)."""


def _iso_date(value: dt.date) -> str:
    """ISO-8601 text for a date or datetime; aware datetimes are expressed in UTC."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            utc = value.astimezone(dt.UTC).replace(tzinfo=None)
            return utc.isoformat() + "Z"
        return value.isoformat()
    return value.isoformat()


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    """Copy a YAML value into JSON-compatible data (str keys, no dates/bytes/sets).

    Anchors and aliases share objects, so a small document can describe an
    exponentially large (or cyclic) tree; the node budget and depth limit stop
    that from hanging indexing.
    """
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_YAML_DEPTH:
        raise _TooComplex
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date):
        return _iso_date(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {_plain_key(k): _plain(v, depth + 1, budget) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item, depth + 1, budget) for item in value]
    if isinstance(value, set | frozenset):
        return [_plain(item, depth + 1, budget) for item in sorted(value, key=str)]
    return str(value)


def _plain_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, dt.date):
        return _iso_date(key)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _yaml_kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dt.date):
        return "a date"
    return f"a {type(value).__name__}"


# libyaml's safe loader builds the same values as PyYAML's pure-Python one
# about ten times faster (a 3-line block: 0.14 ms instead of 1.3 ms, most of
# the indexing time of a small note). Its error messages are worded
# differently, so a block it refuses is parsed again by the pure-Python
# loader, whose message (and position) is the one reported.
_FAST_LOADER: Final = getattr(yaml, "CSafeLoader", None)


def _load_yaml(yaml_text: str) -> Any:
    flat = plain_yaml.load(yaml_text)  # flat blocks, the usual kind, without a YAML parser
    if flat is not None:
        return flat
    if _FAST_LOADER is not None:
        try:
            return yaml.load(yaml_text, Loader=_FAST_LOADER)  # a safe loader (libyaml)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(yaml_text)


def _parse_yaml(yaml_text: str) -> tuple[dict[str, Any], str | None]:
    """Parse the block with ``yaml.safe_load``; ``({}, message)`` on any problem."""
    if len(yaml_text) > MAX_FRONTMATTER_CHARS:
        return {}, (
            f"frontmatter block is larger than {MAX_FRONTMATTER_CHARS // 1024} KiB; not parsed"
        )
    try:
        loaded = _load_yaml(yaml_text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        if mark is None:
            return {}, f"invalid YAML frontmatter: {problem}"
        # The YAML text starts on line 2 of the document (after the opening '---').
        return {}, (
            f"invalid YAML frontmatter at line {mark.line + 2}, column {mark.column + 1}: {problem}"
        )
    except Exception as exc:  # any loader failure (bad timestamp, recursion, ...)
        return {}, f"invalid YAML frontmatter: {type(exc).__name__}: {exc}"
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, (
            f"frontmatter must be a YAML mapping of 'key: value' lines, "
            f"but it is {_yaml_kind(loaded)}; indexed without frontmatter"
        )
    try:
        plain = _plain(loaded, 0, [_MAX_YAML_NODES])
    except _TooComplex:
        return {}, (
            "frontmatter is too deeply nested or too large after expanding YAML aliases; not parsed"
        )
    return plain, None


# ---------------------------------------------------------------------------
# Frontmatter fields
# ---------------------------------------------------------------------------


def _first_field(fields: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        value = fields.get(name)
        if value is not None and value != "" and value != []:
            return value
    return None


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        text = " ".join(str(value).split())
        return text or None
    return None


def _author(value: Any) -> str | None:
    if isinstance(value, dict):
        return _scalar_text(value.get("name"))
    if isinstance(value, list):
        names = [name for name in (_author(item) for item in value) if name]
        return ", ".join(names) or None
    return _scalar_text(value)


def _source_author(source: Any) -> str | None:
    """The author a captured note's provenance names (``source: {author: ...}``).

    A captured note records who wrote the text it holds under ``source``;
    with no top-level ``author`` that is the note's author for filtering and
    search.
    """
    if not isinstance(source, dict):
        return None
    for key, value in source.items():
        if isinstance(key, str) and key.lower() == "author":
            return _author(value)
    return None


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def _categories(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return _unique(part.strip() for part in value.split(","))
    if isinstance(value, list):
        return _unique(text for text in (_scalar_text(item) for item in value) if text)
    text = _scalar_text(value)
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
        return _iso_date(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text).isoformat()
        return _iso_date(dt.datetime.fromisoformat(text))
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


def _date(fields: Mapping[str, Any]) -> str | None:
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
    text = _scalar_text(value)
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


def _relations(value: Any) -> tuple[tuple[str, str], ...]:
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


# ---------------------------------------------------------------------------
# Body scanning
# ---------------------------------------------------------------------------

_FENCE_MARKERS: Final = (re.compile(r"```+"), re.compile(r"~~~+"))
_BACKTICK_RUN: Final = re.compile(r"``*")  # same as `+, but lets re search for a literal
_BLANK_LINE: Final = re.compile(r"\n[ \t]*\n")


def _fence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of fenced code blocks (an unclosed fence runs to the end).

    Markers are found by literal search (fast), then kept only when nothing
    but indentation precedes them on their line.
    """
    candidates: list[tuple[int, str, int, str, int]] = []
    for pattern in _FENCE_MARKERS:
        for match in pattern.finditer(text):
            line_start = text.rfind("\n", 0, match.start()) + 1
            if text[line_start : match.start()].strip(" \t"):
                continue
            line_end = text.find("\n", match.end())
            if line_end == -1:
                line_end = len(text)
            marker = match.group()
            rest = text[match.end() : line_end]
            candidates.append((line_start, marker[0], len(marker), rest, line_end))
    candidates.sort()

    spans: list[tuple[int, int]] = []
    open_char, open_len, open_start = "", 0, 0
    for line_start, char, length, rest, line_end in candidates:
        if not open_char:
            if char == "`" and "`" in rest:
                continue  # not a fence: backtick info strings cannot contain backticks
            open_char, open_len, open_start = char, length, line_start
        elif char == open_char and length >= open_len and not rest.strip():
            spans.append((open_start, line_end))
            open_char = ""
    if open_char:
        spans.append((open_start, len(text)))
    return spans


def _inline_code_spans(text: str) -> list[tuple[int, int]]:
    """Spans of inline code: a backtick run closed by the next run of equal length.

    ``text`` must already have its fenced blocks blanked. Spans never cross a
    blank line. Pairing uses a precomputed "next run of the same length"
    table, so this stays linear however unbalanced the backticks are.
    """
    runs = [(m.start(), m.end()) for m in _BACKTICK_RUN.finditer(text)]
    if len(runs) < 2:
        return []
    next_same = [-1] * len(runs)
    last_by_length: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        next_same[i] = last_by_length.get(length, -1)
        last_by_length[length] = i
    barriers = [m.start() for m in _BLANK_LINE.finditer(text)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        j = next_same[i]
        if j != -1:
            opener, closer = runs[i], runs[j]
            if bisect.bisect_left(barriers, opener[0]) == bisect.bisect_left(barriers, closer[0]):
                spans.append((opener[0], closer[1]))
                i = j + 1
                continue
        i += 1
    return spans


def _blank(segment: str) -> str:
    if "\n" not in segment:
        return " " * len(segment)
    return "\n".join(" " * len(line) for line in segment.split("\n"))


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each (sorted, non-overlapping) span blanked out."""
    if not spans:
        return text
    parts: list[str] = []
    cursor = 0
    for start, end in spans:
        parts.append(text[cursor:start])
        parts.append(_blank(text[start:end]))
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


def mask_code(text: str) -> str:
    """``text`` with fenced blocks and inline code replaced by spaces (newlines kept)."""
    if "`" not in text and "~~~" not in text:
        return text
    without_fences = _blank_spans(text, _fence_spans(text))
    if "`" not in without_fences:
        return without_fences
    return _blank_spans(without_fences, _inline_code_spans(without_fences))


# Applied to "\n" + text, so every line (the first included) starts after a
# literal newline, which lets the regex engine jump between candidates quickly.
_HEADING: Final = re.compile(r"\n {0,3}(#{1,6})(?=[ \t\n]|\Z)([^\n]*)")
_CLOSING_HASHES: Final = re.compile(r"(?:^|[ \t]+)#+$")

# A hashtag starts after whitespace, "(", ",", ";" or "*" (or at the start),
# never right after "](" (a markdown link to an anchor).
_HASHTAG: Final = re.compile(r"#(?<![^\s(,;*]#)(?<!\]\(#)([^\W_][\w\-/.]*)")
_LOGSEQ_TAGS: Final = re.compile(r"^[ \t]*tags::[ \t]*([^\n]*)$", re.MULTILINE | re.IGNORECASE)

_WIKI_LINK: Final = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_MARKDOWN_LINK: Final = re.compile(
    r"\[(?<!\\\[)((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\([ \t]*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
)
_URI_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_COLLECTION_PREFIX: Final = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]{0,63}):(?=\S)(?!//)")
_ASSET_EXTENSIONS: Final = frozenset(
    [
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".svg",
        ".webp",
        ".bmp",
        ".ico",
        ".avif",
        ".heic",
        ".tif",
        ".tiff",
        ".mp3",
        ".m4a",
        ".wav",
        ".ogg",
        ".flac",
        ".mp4",
        ".mov",
        ".webm",
        ".mkv",
        ".avi",
    ]
)


def _heading_text(raw: str) -> str:
    text = raw.strip()
    return _CLOSING_HASHES.sub("", text).strip() if text.endswith("#") else text


def _is_asset(target: str) -> bool:
    name = target.rpartition("/")[2]
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in _ASSET_EXTENSIONS


class _Positions:
    """Offset -> (line, column) in the full text, for a body starting at ``first_line``.

    Offsets must be asked for in increasing order; each call only counts the
    newlines since the previous one, so a whole scan costs one pass.
    """

    def __init__(self, body: str, first_line: int) -> None:
        self._body = body
        self._offset = 0
        self._line = first_line

    def at(self, offset: int) -> tuple[int, int]:
        self._line += self._body.count("\n", self._offset, offset)
        self._offset = offset
        return self._line, offset - self._body.rfind("\n", 0, offset)


def _wiki_link(inner: str, line: int, col: int) -> Link | None:
    target, _, display = inner.partition("|")
    target = target.rstrip("\\")  # "\|" escapes the pipe inside tables
    target, _, heading = target.partition("#")
    collection: str | None = None
    prefix = _COLLECTION_PREFIX.match(target.strip())
    if prefix is not None:
        collection = prefix.group(1).lower()
        target = target.strip()[prefix.end() :]
    target = target.strip()
    if not target or _is_asset(target):
        return None
    return Link(
        kind="wiki",
        target=target,
        collection=collection,
        heading=heading.strip() or None,
        display=display.strip() or None,
        line=line,
        col=col,
    )


def _markdown_link(text: str, destination: str, line: int, col: int) -> Link | None:
    if destination.startswith("<"):
        destination = destination[1:-1].strip()
    if not destination or destination.startswith(("#", "//")):
        return None
    scheme = _URI_SCHEME.match(destination)
    if scheme is not None and scheme.group(0).lower() != "gno:":
        return None
    path, _, fragment = destination.partition("#")
    target = unquote(path)
    if not target or _is_asset(target):
        return None
    return Link(
        kind="markdown",
        target=target,
        collection=None,
        heading=unquote(fragment) or None,
        display=" ".join(text.split()) or None,
        line=line,
        col=col,
    )


@dataclass(frozen=True, slots=True)
class _BodyScan:
    headings: tuple[str, ...]
    title: str | None
    tags: list[str]
    links: tuple[Link, ...]


def _scan_body(body: str, first_line: int) -> _BodyScan:
    masked = mask_code(body)

    headings: list[str] = []
    title: str | None = None
    for match in _HEADING.finditer("\n" + masked) if "#" in masked else ():
        text = _heading_text(match.group(2))
        if not text:
            continue
        headings.append(text)
        if title is None and len(match.group(1)) <= 2 and text.casefold() != "notes":
            title = text

    tags: list[str] = []
    for match in _LOGSEQ_TAGS.finditer(masked) if "::" in masked else ():
        tags.extend(_split_tag_list(match.group(1)))
    for match in _HASHTAG.finditer(masked):
        candidate = match.group(1).rstrip("./-")
        if any(ch.isalpha() for ch in candidate):  # "#42" is an issue number, not a tag
            tag = normalize_tag(candidate)
            if tag is not None:
                tags.append(tag)

    links: list[Link] = []
    if "[" in masked:
        positions = _Positions(body, first_line)
        for match in _WIKI_LINK.finditer(masked):
            line, col = positions.at(match.start())
            link = _wiki_link(body[match.start(1) : match.end(1)], line, col)
            if link is not None:
                links.append(link)
        positions = _Positions(body, first_line)
        for match in _MARKDOWN_LINK.finditer(masked):
            line, col = positions.at(match.start())
            link = _markdown_link(
                body[match.start(1) : match.end(1)], body[match.start(2) : match.end(2)], line, col
            )
            if link is not None:
                links.append(link)
        links.sort(key=lambda link: (link.line, link.col))
    return _BodyScan(tuple(headings), title, tags, tuple(links))


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


def _stem(rel_path: str) -> str:
    path = PurePosixPath(rel_path.replace("\\", "/"))
    return path.stem or path.name or rel_path


def extract_meta(text: str, rel_path: str, *, frontmatter: bool = True) -> DocumentMeta:
    """Parse frontmatter and scan the body of one document's text mirror.

    A malformed or non-mapping frontmatter block is reported in
    ``frontmatter_error`` and the whole text is treated as body, so nothing
    the user wrote disappears from search. Frontmatter is a Markdown
    convention: for other text (``frontmatter=False``, such as a YAML file
    whose first line is its ``---`` document marker) all of it is body.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    block = _find_block(text) if frontmatter else _Block(None, text, 1, None)
    parsed: dict[str, Any] = {}
    error = block.error
    body, body_start_line = block.body, block.body_start_line
    if block.yaml_text is not None:
        parsed, error = _parse_yaml(block.yaml_text)
        if error is not None:
            body, body_start_line = text, 1

    fields: dict[str, Any] = {}
    for key, value in parsed.items():
        fields.setdefault(key.lower(), value)

    scan = _scan_body(body, body_start_line)
    title = _scalar_text(fields.get("title")) or scan.title or _stem(rel_path)
    tags = _frontmatter_tags(_first_field(fields, "tags", "tag")) + scan.tags
    content_type = _scalar_text(
        _first_field(fields, "type", "contenttype", "content_type", "content-type")
    )
    return DocumentMeta(
        frontmatter=MappingProxyType(parsed),
        frontmatter_error=error,
        body=body,
        body_start_line=body_start_line,
        title=title,
        tags=tuple(sorted(set(tags))),
        author=_author(fields.get("author")) or _source_author(fields.get("source")),
        categories=_categories(_first_field(fields, "categories", "category")),
        content_type=content_type,
        date=_date(fields),
        relations=_relations(fields.get("relations")),
        headings=scan.headings,
        links=tuple(scan.links),
    )


@dataclass(frozen=True, slots=True)
class LinkSite:
    """Where one body link's destination sits in the full text (character offsets).

    For a wiki link the destination is its target with any ``collection:``
    prefix (before ``#heading`` and ``|alias``); for a Markdown link it is the
    path (before ``#fragment``, inside ``<...>`` when angle-bracketed). These
    are the characters a refactor rewrites; everything else stays put.
    """

    link: Link
    start: int
    end: int
    angle_brackets: bool = False


def link_sites(text: str) -> list[LinkSite]:
    """The links :func:`extract_meta` indexes, each with its destination's exact span."""
    offset = 0
    if text.startswith("\ufeff"):
        offset = 1
    block = _find_block(text[offset:])
    body = block.body
    if block.yaml_text is not None:
        _, error = _parse_yaml(block.yaml_text)
        if error is not None:
            body = text[offset:]
    base = len(text) - len(body)
    masked = mask_code(body)
    sites: list[LinkSite] = []
    if "[" not in masked:
        return sites
    first_line = text[:base].count("\n") + 1
    positions = _Positions(body, first_line)
    for match in _WIKI_LINK.finditer(masked):
        line, col = positions.at(match.start())
        inner = body[match.start(1) : match.end(1)]
        link = _wiki_link(inner, line, col)
        if link is None:
            continue
        written = inner.partition("|")[0].rstrip("\\").partition("#")[0]
        lead = len(written) - len(written.lstrip())
        start = base + match.start(1) + lead
        sites.append(LinkSite(link, start, start + len(written.strip())))
    positions = _Positions(body, first_line)
    for match in _MARKDOWN_LINK.finditer(masked):
        line, col = positions.at(match.start())
        destination = body[match.start(2) : match.end(2)]
        link = _markdown_link(body[match.start(1) : match.end(1)], destination, line, col)
        if link is None:
            continue
        start = base + match.start(2)
        angle = destination.startswith("<")
        inner = destination[1:-1] if angle else destination
        if angle:
            lead = len(inner) - len(inner.lstrip())
            start += 1 + lead
            inner = inner.strip()
        path = inner.partition("#")[0]
        sites.append(LinkSite(link, start, start + len(path), angle))
    sites.sort(key=lambda site: site.start)
    return sites
