"""A fast reader for the front matter most notes have: flat ``key: value`` lines.

Parsing a three-line block with libyaml still costs about 0.3 ms, mostly in
building Python objects, which made YAML a sixth of the time of indexing a
folder of small notes. Almost every real block is flat: keys with a word,
a sentence, a date, a quoted string, or a list of words (``[a, b]`` or
``- a`` lines). :func:`load` reads exactly that subset and returns the same
values a YAML safe loader returns for it; for anything else (numbers,
booleans, nulls spelt out, nesting, comments after a value, escapes,
anchors, multi-line scalars, tabs) it returns ``None`` and the caller parses
the block with the real YAML loader, so a block means the same either way.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

_KEY_LINE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_ITEM_LINE: Final = re.compile(r"( *)- +(.*)")
_DATE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# Words a YAML 1.1 loader reads as booleans or null in some spelling (checked
# case-insensitively, more than YAML does: a block using one is left to it).
_RESOLVED_WORDS: Final = frozenset({"yes", "no", "y", "n", "true", "false", "on", "off", "null"})
_INNER_PUNCTUATION: Final = frozenset(" _.'()/+-?!&")
"""Besides letters and digits, what a plain value may hold after its first letter."""

Value = str | dt.date | list[str] | None


class _NotPlain(Exception):
    """The block needs the real YAML loader."""


def _plain_scalar(text: str, *, flow: bool) -> str:
    """A plain (unquoted) scalar that a YAML loader reads as this very string."""
    if not text or not text[0].isalpha() or text.lower() in _RESOLVED_WORDS:
        raise _NotPlain
    for char in text:
        if not (char.isalnum() or char in _INNER_PUNCTUATION or (char == "," and not flow)):
            raise _NotPlain
    if "  " in text:  # kept by YAML, but rare enough to leave to it
        raise _NotPlain
    return text


def _quoted(text: str) -> str | None:
    """The inside of a one-line quoted scalar without escapes, or None if not quoted."""
    quote = text[0]
    if quote not in "\"'":
        return None
    inner = text[1:-1]
    if len(text) < 2 or text[-1] != quote or quote in inner or "\\" in inner:
        raise _NotPlain
    if not inner.isprintable():
        raise _NotPlain
    return inner


def _scalar(text: str, *, flow: bool = False) -> str | dt.date:
    quoted = _quoted(text)
    if quoted is not None:
        return quoted
    date = _DATE.fullmatch(text)
    if date is not None:
        try:
            return dt.date(int(date[1]), int(date[2]), int(date[3]))
        except ValueError:
            raise _NotPlain from None
    return _plain_scalar(text, flow=flow)


def _flow_list(text: str) -> list[str]:
    inner = text[1:-1].strip(" ")
    if not inner:
        return []
    items: list[str] = []
    for part in inner.split(","):
        item = _scalar(part.strip(" "), flow=True)
        if not isinstance(item, str) or not item:
            raise _NotPlain
        items.append(item)
    return items


def _value(text: str) -> Value:
    if text.startswith("["):
        if not text.endswith("]"):
            raise _NotPlain
        return _flow_list(text)
    return _scalar(text)


def load(yaml_text: str) -> dict[str, Value] | None:
    """The block's mapping, or None when it is not the flat kind this reader knows."""
    if "\t" in yaml_text or "\r" in yaml_text:
        return None
    mapping: dict[str, Value] = {}
    key: str | None = None  # the last key, while its value may still be a block list
    items: list[str] | None = None
    indent = -1
    try:
        for line in yaml_text.split("\n"):
            stripped = line.strip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            item = _ITEM_LINE.fullmatch(line.rstrip(" "))
            if item is not None:
                if key is None or (items is not None and len(item[1]) != indent):
                    raise _NotPlain
                if items is None:
                    items, indent = [], len(item[1])
                    mapping[key] = items
                element = _scalar(item[2])
                if not isinstance(element, str):
                    raise _NotPlain
                items.append(element)
                continue
            found = _KEY_LINE.fullmatch(line.rstrip(" "))
            if found is None or found[1].lower() in _RESOLVED_WORDS:
                raise _NotPlain
            key, items, indent = found[1], None, -1
            text = (found[2] or "").strip(" ")
            if text:
                mapping[key] = _value(text)
                key = None  # a value given on the key's line: no list may follow
            else:
                mapping[found[1]] = None
    except _NotPlain:
        return None
    return mapping or None


__all__ = ["load"]
