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

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any, Final

from gno_trio.engine.docmeta import DocumentMeta, Link
from gno_trio.engine.ingest.code_mask import mask_code
from gno_trio.engine.ingest.convert import extension_of
from gno_trio.engine.ingest.frontmatter_block import FrontmatterBlock, find_block, parse_yaml
from gno_trio.engine.ingest.markdown_links import (
    MARKDOWN_LINK,
    WIKI_LINK,
    LinePositions,
    first_matches,
    markdown_link,
    wiki_link,
)
from gno_trio.engine.ingest.meta_fields import (
    author_field,
    categories_field,
    date_field,
    first_field,
    frontmatter_tags,
    normalize_tag,
    relations_field,
    scalar_text,
    source_author,
    split_tag_list,
)
from gno_trio.engine.ingest.rest_title import REST_EXTENSIONS, rest_title

# Applied to "\n" + text, so every line (the first included) starts after a
# literal newline, which lets the regex engine jump between candidates quickly.
_HEADING: Final = re.compile(r"\n {0,3}(#{1,6})(?=[ \t\n]|\Z)([^\n]*)")
_CLOSING_HASHES: Final = re.compile(r"(?:^|[ \t]+)#+$")

# A hashtag starts after whitespace, "(", ",", ";" or "*" (or at the start),
# never right after "](" (a markdown link to an anchor).
_HASHTAG: Final = re.compile(r"#(?<![^\s(,;*]#)(?<!\]\(#)([^\W_][\w\-/.]*)")
_LOGSEQ_TAGS: Final = re.compile(r"^[ \t]*tags::[ \t]*([^\n]*)$", re.MULTILINE | re.IGNORECASE)


def _heading_text(raw: str) -> str:
    text = raw.strip()
    return _CLOSING_HASHES.sub("", text).strip() if text.endswith("#") else text


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
        tags.extend(split_tag_list(match.group(1)))
    for match in first_matches(_HASHTAG, masked):
        candidate = match.group(1).rstrip("./-")
        if any(ch.isalpha() for ch in candidate):  # "#42" is an issue number, not a tag
            tag = normalize_tag(candidate)
            if tag is not None:
                tags.append(tag)

    links: list[Link] = []
    if "[" in masked:
        positions = LinePositions(body, first_line)
        for match in first_matches(WIKI_LINK, masked):
            line, col = positions.at(match.start())
            link = wiki_link(body[match.start(1) : match.end(1)], line, col)
            if link is not None:
                links.append(link)
        positions = LinePositions(body, first_line)
        for match in first_matches(MARKDOWN_LINK, masked):
            line, col = positions.at(match.start())
            link = markdown_link(
                body[match.start(1) : match.end(1)], body[match.start(2) : match.end(2)], line, col
            )
            if link is not None:
                links.append(link)
        links.sort(key=lambda link: (link.line, link.col))
    return _BodyScan(tuple(headings), title, tags, tuple(links))


def _stem(rel_path: str) -> str:
    path = PurePosixPath(rel_path.replace("\\", "/"))
    return path.stem or path.name or rel_path


def _adorned_title(body: str, rel_path: str) -> str:
    """A reST document's over/underlined title, else the file name's stem."""
    if extension_of(rel_path) in REST_EXTENSIONS:
        title = rest_title(body)
        if title:
            return title
    return _stem(rel_path)


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
    block = find_block(text) if frontmatter else FrontmatterBlock(None, text, 1, None)
    parsed: dict[str, Any] = {}
    error = block.error
    body, body_start_line = block.body, block.body_start_line
    if block.yaml_text is not None:
        parsed, error = parse_yaml(block.yaml_text)
        if error is not None:
            body, body_start_line = text, 1

    fields: dict[str, Any] = {}
    for key, value in parsed.items():
        fields.setdefault(key.lower(), value)

    scan = _scan_body(body, body_start_line)
    title = scalar_text(fields.get("title")) or scan.title or _adorned_title(body, rel_path)
    tags = frontmatter_tags(first_field(fields, "tags", "tag")) + scan.tags
    content_type = scalar_text(
        first_field(fields, "type", "contenttype", "content_type", "content-type")
    )
    return DocumentMeta(
        frontmatter=MappingProxyType(parsed),
        frontmatter_error=error,
        body=body,
        body_start_line=body_start_line,
        title=title,
        tags=tuple(sorted(set(tags))),
        author=author_field(fields.get("author")) or source_author(fields.get("source")),
        categories=categories_field(first_field(fields, "categories", "category")),
        content_type=content_type,
        date=date_field(fields),
        relations=relations_field(fields.get("relations")),
        headings=scan.headings,
        links=tuple(scan.links),
    )
