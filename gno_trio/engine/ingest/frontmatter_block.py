"""Finding the frontmatter block at the top of a text and parsing its YAML, within bounds.

The block is read on every indexed file and its YAML is untrusted: most
headers are plain ``key: value`` lines that a fast path parses without
PyYAML, and the rest are loaded with bounded size, node count and depth,
so a hostile header costs at most a bounded parse and is reported, never
raised.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any, Final

import yaml

from gno_trio.engine.ingest import plain_yaml

MAX_FRONTMATTER_CHARS: Final = 256 * 1024
"""Frontmatter blocks larger than this are not parsed (they are never real metadata)."""

_MAX_YAML_NODES: Final = 20_000
_MAX_YAML_DEPTH: Final = 64

_CLOSING_DELIMITER: Final = re.compile(r"^(?:---|\.\.\.)[ \t\r]*$", re.MULTILINE)
_YAML_KEY_LINE: Final = re.compile(r"[ \t]*[\w\"'-][^:\n]*:(?:[ \t]|\r?$)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class FrontmatterBlock:
    yaml_text: str | None  # None: no frontmatter block at all
    body: str
    body_start_line: int
    error: str | None


def find_block(text: str) -> FrontmatterBlock:
    """Locate a ``---`` ... ``---`` block that opens on the very first line."""
    first_newline = text.find("\n")
    first_line = text if first_newline == -1 else text[:first_newline]
    if first_line.rstrip() != "---":
        return FrontmatterBlock(None, text, 1, None)
    closing = None if first_newline == -1 else _CLOSING_DELIMITER.search(text, first_newline + 1)
    if closing is None:
        # A lone '---' is also a markdown horizontal rule; only complain when
        # the next line reads like the 'key: value' of an unfinished header.
        looks_like_yaml = _YAML_KEY_LINE.match(text, first_newline + 1) is not None
        return FrontmatterBlock(
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
    return FrontmatterBlock(
        text[first_newline + 1 : closing.start()], text[body_begin:], closing_line + 1, None
    )


class _TooComplex(Exception):
    """The YAML value graph is too deep or too large (e.g. an alias bomb)."""


def iso_date(value: dt.date) -> str:
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
        return iso_date(value)
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
        return iso_date(key)
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


def parse_yaml(yaml_text: str) -> tuple[dict[str, Any], str | None]:
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
