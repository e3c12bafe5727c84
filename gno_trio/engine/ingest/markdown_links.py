"""Wiki and Markdown links in a body: what the index stores, and where a refactor rewrites them.

Indexing needs each link's target and position; a rename or move needs the
exact characters of its destination. Both read links with the same
patterns and the same rules (assets and external URLs are no links), so a
refactor rewrites exactly the links the index knows.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from gno_trio.engine.docmeta import Link
from gno_trio.engine.ingest.code_mask import mask_code
from gno_trio.engine.ingest.frontmatter_block import find_block, parse_yaml

WIKI_LINK: Final = re.compile(r"\[\[([^\[\]\n]+)\]\]")
MARKDOWN_LINK: Final = re.compile(
    r"\[(?<!\\\[)((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\([ \t]*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
)
MATCHES_READ: Final = 20_000
"""Matches of each scanner (wiki links, Markdown links, hashtags) read from one document.

The rest are not indexed. With this bound, and the mirror's own
(``ConversionLimits.max_chars``), the in-process scan of a text file costs
at most a pass over its characters and this many matches, whatever it holds.
"""
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


def _is_asset(target: str) -> bool:
    name = target.rpartition("/")[2]
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in _ASSET_EXTENSIONS


class LinePositions:
    """Offset -> (line, column) in the full text, for a body starting at ``first_line``.

    Offsets must be asked for in increasing order; each call only looks at
    the characters since the previous one (the newlines to count, and where
    the current line starts), so a whole scan costs one pass however long a
    line is: looking back for the line's start from every link made a note
    of one 7 MB line take minutes.
    """

    def __init__(self, body: str, first_line: int) -> None:
        self._body = body
        self._offset = 0
        self._line = first_line
        self._line_start = 0

    def at(self, offset: int) -> tuple[int, int]:
        body, since = self._body, self._offset
        newline = body.rfind("\n", since, offset)
        if newline != -1:
            self._line += body.count("\n", since, offset)
            self._line_start = newline + 1
        self._offset = offset
        return self._line, offset - self._line_start + 1


def first_matches(pattern: re.Pattern[str], masked: str) -> Iterator[re.Match[str]]:
    """The first :data:`MATCHES_READ` matches of a scanner in a (code-masked) body."""
    return itertools.islice(pattern.finditer(masked), MATCHES_READ)


def wiki_link(inner: str, line: int, col: int) -> Link | None:
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


def markdown_link(text: str, destination: str, line: int, col: int) -> Link | None:
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
    block = find_block(text[offset:])
    body = block.body
    if block.yaml_text is not None:
        _, error = parse_yaml(block.yaml_text)
        if error is not None:
            body = text[offset:]
    base = len(text) - len(body)
    masked = mask_code(body)
    sites: list[LinkSite] = []
    if "[" not in masked:
        return sites
    first_line = text[:base].count("\n") + 1
    positions = LinePositions(body, first_line)
    for match in first_matches(WIKI_LINK, masked):
        line, col = positions.at(match.start())
        inner = body[match.start(1) : match.end(1)]
        link = wiki_link(inner, line, col)
        if link is None:
            continue
        written = inner.partition("|")[0].rstrip("\\").partition("#")[0]
        lead = len(written) - len(written.lstrip())
        start = base + match.start(1) + lead
        sites.append(LinkSite(link, start, start + len(written.strip())))
    positions = LinePositions(body, first_line)
    for match in first_matches(MARKDOWN_LINK, masked):
        line, col = positions.at(match.start())
        destination = body[match.start(2) : match.end(2)]
        link = markdown_link(body[match.start(1) : match.end(1)], destination, line, col)
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
