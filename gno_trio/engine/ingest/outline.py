"""The heading outline of a Markdown mirror: every ATX heading outside frontmatter and code.

Each heading knows its line, level and title, its path of ancestor titles,
its occurrence among headings with the same path, its GitHub-style anchor
(lower case, punctuation dropped, spaces to ``-``, a repeated anchor
numbered ``-1``, ``-2`` ...) and the last line of its section (the last
non-blank line before the next heading of the same or a higher level).
It sits with the other Markdown parsers (frontmatter, chunker) so that both
section reads and Capsule candidates take it from below.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

MAX_TITLE_CHARS: Final = 512
MAX_PATH_DEPTH: Final = 6
_ATX: Final = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)[ \t]*(?:[ \t]#+[ \t]*)?$")
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
_ANCHOR_DROP: Final = re.compile(r"[^\w\- ]", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Heading:
    line: int
    level: int
    title: str
    path: tuple[str, ...]
    occurrence: int
    anchor: str
    end_line: int


def anchor_of(title: str) -> str:
    """The GitHub-style anchor of a heading title (before repeats are numbered)."""
    lowered = unicodedata.normalize("NFC", title).strip().lower()
    return _ANCHOR_DROP.sub("", lowered).replace(" ", "-")


def _body_start(lines: Sequence[str]) -> int:
    """Index of the first line after a YAML frontmatter block (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                return index + 1
    return 0


def outline(lines: Sequence[str]) -> list[Heading]:
    """Every heading of ``lines`` in document order."""
    raw: list[tuple[int, int, str]] = []
    fence: str | None = None
    for index in range(_body_start(lines), len(lines)):
        text = lines[index]
        opened = _FENCE.match(text)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        match = _ATX.match(text)
        if match is not None:
            title = unicodedata.normalize("NFC", match.group(2).strip())[:MAX_TITLE_CHARS]
            if title:
                raw.append((index + 1, len(match.group(1)), title))
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    seen_paths: Counter[tuple[str, ...]] = Counter()
    seen_anchors: Counter[str] = Counter()
    for position, (line, level, title) in enumerate(raw):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        path = tuple(text for _, text in stack)[-MAX_PATH_DEPTH:]
        seen_paths[path] += 1
        base = anchor_of(title) or "section"
        anchor = base if seen_anchors[base] == 0 else f"{base}-{seen_anchors[base]}"
        seen_anchors[base] += 1
        end = len(lines)
        for later_line, later_level, _ in raw[position + 1 :]:
            if later_level <= level:
                end = later_line - 1
                break
        while end > line and not lines[end - 1].strip():
            end -= 1
        headings.append(
            Heading(line, level, title, path, seen_paths[path], anchor[:MAX_TITLE_CHARS], end)
        )
    return headings


__all__ = ["Heading", "anchor_of", "outline"]
