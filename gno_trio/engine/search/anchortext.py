"""What a search anchor is made of: the snippet's marks, its opening-text fallback, its line.

Shared by every way an anchor is worked out (on FTS5, in the in-memory
chunk index, from an embedding window), so they all cut and place alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

SNIPPET_TOKENS: Final = 32
FALLBACK_SNIPPET_CHARS: Final = 240
MARK_OPEN: Final = "<mark>"
MARK_CLOSE: Final = "</mark>"
ELLIPSIS: Final = "..."
SNIPPET_MARKS: Final = (MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS)
"""``snippet()``'s arguments after the column."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """A snippet, its chunk's line range and language, and the line of the first match."""

    snippet: str
    start_line: int
    end_line: int
    language: str | None
    line: int


def exact_first(match: str) -> tuple[str, ...]:
    """The match forms to try in order: exact (stemmed) terms, then prefix terms.

    Prefix expansion costs several times more than an exact term, and the
    stemmer already covers most word variants, so a chunk is looked for with
    exact terms first.
    """
    return tuple(dict.fromkeys((match.replace('"*', '"'), match)))


def excerpt(text: str) -> str:
    """The opening of a chunk as a one-line snippet (for a hit no term of which it shows)."""
    flat = " ".join(text[: FALLBACK_SNIPPET_CHARS * 2].split())
    if len(flat) > FALLBACK_SNIPPET_CHARS:
        flat = flat[:FALLBACK_SNIPPET_CHARS].rsplit(" ", 1)[0] + ELLIPSIS
    return flat


def first_hit_line(snippet: str, text: str, start_line: int) -> int:
    """The line of the first highlighted term of a chunk's snippet.

    A chunk spans up to ~80 lines; pointing at its first line would send an
    agent reading ``get(ref, fromLine=line, lineCount=10)`` past the match.
    A snippet is a verbatim slice of the chunk with markers added, so the
    text before the first marker locates it exactly.
    """
    opened = snippet.find(MARK_OPEN)
    closed = snippet.find(MARK_CLOSE, opened + 1)
    if opened < 0 or closed < 0:
        return start_line
    before = snippet[:opened].replace(MARK_CLOSE, "")
    if before.startswith(ELLIPSIS):
        before = before[len(ELLIPSIS) :]
    word = snippet[opened + len(MARK_OPEN) : closed]
    position = text.find(before + word)
    if position >= 0:
        position += len(before)
    else:
        position = text.find(word)
    if position < 0:
        return start_line
    return start_line + text.count("\n", 0, position)
