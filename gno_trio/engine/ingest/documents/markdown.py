"""Writing the Markdown mirror: blocks, headings, lists, tables, and the size bound.

Every document converter emits through :class:`MarkdownWriter`, so the mirror
has one shape whatever the source: blocks separated by one blank line, ATX
headings (``#``) so the title rule and heading anchors see them, pipe tables
with a header row, ``-``/``1.`` lists indented by two spaces per level, and
no trailing whitespace. The writer also enforces the output limit: once the
mirror reaches ``max_chars`` it raises :class:`OutputFull`, which the
converter's caller turns into a ``TRUNCATED`` warning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from gno_trio.engine.ingest.documents.limits import current

_SPACE_RUN: Final = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Line starts that would make body text a heading (the title rule reads ATX
# headings), a setext underline, a thematic break or a frontmatter fence.
# List markers are left alone: a "- item" line in a PDF is a list.
_LINE_START_SYNTAX: Final = re.compile(r"^( {0,3})(#|(?:[-=*_] *){3,}$)")


_ATX: Final = re.compile(r"#{1,6} ")


class OutputFull(Exception):
    """The mirror reached the output limit; what was written so far is kept."""


def clean_inline(text: str) -> str:
    """One line of text: control characters dropped, whitespace runs collapsed."""
    text = _CONTROL.sub("", text.replace("\r", " ").replace("\n", " "))
    return _SPACE_RUN.sub(" ", text).strip()


def escape_line_start(line: str) -> str:
    """Keep a line of body text from being read as a heading, rule or frontmatter fence."""
    return _LINE_START_SYNTAX.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1)


def table_cell(text: str) -> str:
    """Cell text for a pipe table: one line, pipes escaped."""
    return clean_inline(text).replace("|", "\\|")


def pipe_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown pipe table whose first row is the header.

    Ragged rows are padded so every row has as many cells as the widest one;
    fully empty trailing columns are dropped.
    """
    cells = [[table_cell(c) for c in row] for row in rows]
    width = max((len(r) for r in cells), default=0)
    while width and all(len(r) < width or not r[width - 1] for r in cells):
        width -= 1
    if width == 0:
        return ""
    padded = [r[:width] + [""] * (width - len(r[:width])) for r in cells]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in padded[1:]]
    return "\n".join(lines)


class MarkdownWriter:
    """Accumulates blocks of Markdown up to the output limit."""

    def __init__(self, max_chars: int | None = None) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._limit = current().limits.max_chars if max_chars is None else max_chars
        self.truncated = False

    @property
    def size(self) -> int:
        return self._size

    def block(self, text: str) -> None:
        """Add a block (paragraph, list, table...) separated from the previous by a blank line."""
        text = "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))
        if not text.strip():
            return
        piece = ("\n\n" if self._parts else "") + text
        room = self._limit - self._size
        if len(piece) > room:
            if room > 0:
                cut = piece[:room]
                self._parts.append(cut[: cut.rfind("\n")] if "\n" in cut else cut)
                self._size = self._limit
            self.truncated = True
            raise OutputFull
        self._parts.append(piece)
        self._size += len(piece)

    def heading(self, level: int, text: str) -> None:
        text = clean_inline(text)
        if text:
            self.block("#" * max(1, min(6, level)) + " " + text)

    def paragraph(self, text: str) -> None:
        lines = [escape_line_start(_SPACE_RUN.sub(" ", ln).strip()) for ln in text.split("\n")]
        self.block("\n".join(ln for ln in lines if ln))

    def list_items(self, items: Sequence[tuple[int, bool, str]]) -> None:
        """``(level, ordered, text)`` items as one list block (level 0 is the outermost)."""
        lines: list[str] = []
        counters: dict[int, tuple[bool, int]] = {}  # level -> (ordered, items so far)
        for level, ordered, text in items:
            for deeper in [k for k in counters if k > level]:
                del counters[deeper]
            kind, count = counters.get(level, (ordered, 0))
            count = count + 1 if kind == ordered else 1  # a change of kind starts a new list
            counters[level] = (ordered, count)
            marker = f"{count}." if ordered else "-"
            lines.append("  " * level + marker + " " + clean_inline(text))
        self.block("\n".join(lines))

    def fields(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Labelled values (a mail's From/To/Date, an event's start) as a ``- **Label:** value``
        list; empty values are left out."""
        items = [(0, False, f"**{label}:** {value}") for label, value in pairs if value.strip()]
        if items:
            self.list_items(items)

    def demoted(self, markdown: str, levels: int) -> None:
        """Add another converter's Markdown as blocks, its ATX headings ``levels`` deeper
        (an attachment's ``# Title`` under its mail's heading); fenced code is left alone."""
        lines: list[str] = []
        fenced = False
        for line in markdown.split("\n"):
            if line.startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and _ATX.match(line):
                hashes = len(line) - len(line.lstrip("#"))
                line = "#" * min(6, hashes + levels) + line[hashes:]
            lines.append(line)
        for block in "\n".join(lines).split("\n\n"):
            self.block(block)

    def table(self, rows: Sequence[Sequence[str]]) -> None:
        self.block(pipe_table(rows))

    def comment(self, text: str) -> None:
        """An HTML comment line (page and slide markers): invisible when rendered."""
        self.block(f"<!-- {clean_inline(text).replace('--', '- -')} -->")

    def text(self) -> str:
        out = "".join(self._parts)
        return out + "\n" if out else ""
