"""Blanking out code (fenced blocks and inline spans) so the body scanners never see it.

The text keeps its length and its newlines, so line and column positions
found in the masked text are those of the original; ``# comment`` in a
fence is then neither a heading nor a tag, and a link in backticks is no
link.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

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
