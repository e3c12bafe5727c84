"""Cutting passages out of chunks: the best whole-line window that fits a size.

A chunk is sized for indexing (about 800 tokens), which is most of a small
budget on its own, and its best part is often one section of it. A passage
is therefore the window of whole mirror lines inside a chunk that speaks to
the goal best within a size cap:

* windows are made of whole blocks (paragraphs, headings, fenced code kept
  whole) so they read as the document wrote them; they never end on a
  heading, and a heading alone is no passage;
* a window scores the facets it mentions, each weighted by how rare it is
  among the retrieved chunks and saturated so repetition adds less and less
  (the BM25 shape, without length normalisation, so a window grows to use
  its room when that loses nothing);
* when no whole block fits, a run of lines inside one does, and when not
  even one line fits, the smallest line is offered anyway, so the budget
  error can name the least budget that would hold it.

Sizes are the bytes a passage's text takes in the model-visible projection:
its JSON-escaped UTF-8 form, newlines counted as the two characters they are
written as.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gno_trio.engine.context.facets import FacetMatcher
from gno_trio.engine.ingest.chunker import CHARS_PER_TOKEN

# The longest passage, in tokens and in projection bytes: about a long
# paragraph with its example, so a budget buys several documents' best parts
# rather than one document's every line.
MAX_PASSAGE_TOKENS: Final = 320
MAX_PASSAGE_BYTES: Final = MAX_PASSAGE_TOKENS * CHARS_PER_TOKEN
# A heading names what its section is about, so a facet in a heading counts
# as this many mentions in body text.
HEADING_WEIGHT: Final = 2
# BM25's term-frequency saturation constant.
_K1: Final = 1.2
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING: Final = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


def escaped_size(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string: escaped, UTF-8, quotes excluded."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


@dataclass(frozen=True, slots=True)
class Line:
    """One mirror line as windows see it."""

    size: int
    counts: tuple[int, ...]
    blank: bool
    heading: bool


@dataclass(frozen=True, slots=True)
class Window:
    """A candidate passage: mirror lines ``start..end`` (1-based, inclusive)."""

    start: int
    end: int
    size: int
    counts: tuple[int, ...]
    score: float

    def overlaps(self, start: int, end: int) -> bool:
        return self.start <= end and start <= self.end


class Weights:
    """How much each facet is worth: rare among the retrieved chunks is worth more."""

    __slots__ = ("_idf",)

    def __init__(self, facet_counts: Sequence[Sequence[int]], width: int) -> None:
        total = len(facet_counts)
        idf = []
        for index in range(width):
            present = sum(1 for counts in facet_counts if counts[index])
            idf.append(math.log(1 + (total - present + 0.5) / (present + 0.5)) if present else 0.0)
        self._idf = tuple(idf)

    def contributions(self, counts: Sequence[int]) -> tuple[float, ...]:
        """Each facet's saturated, weighted share of a text's relevance."""
        return tuple(
            idf * count * (_K1 + 1) / (count + _K1) if count else 0.0
            for idf, count in zip(self._idf, counts, strict=True)
        )

    def score(self, counts: Sequence[int]) -> float:
        return sum(self.contributions(counts))


def describe_lines(
    lines: Sequence[str],
    matcher: FacetMatcher,
    spans: Sequence[tuple[int, int]],
    *,
    prose: bool = True,
) -> list[Line]:
    """Size, facet counts and shape of each line; counts only inside ``spans``.

    In prose, fenced code is body text (a ``#`` in it is no heading and its
    blank lines split nothing); in code nothing is a heading.
    """
    wanted = [False] * (len(lines) + 1)
    for start, end in spans:
        for number in range(start, end + 1):
            wanted[number] = True
    last = max((end for _, end in spans), default=0)
    outside = Line(size=0, counts=(0,) * matcher.width, blank=True, heading=False)
    described = []
    fence: str | None = None
    for number, text in enumerate(lines, 1):
        if number > last:
            described.append(outside)
            continue
        inside = False
        if prose and text.lstrip(" ")[:3] in ("```", "~~~"):
            opened = _FENCE.match(text)
            inside = fence is not None
            if fence is not None:
                if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                    fence = None
            elif opened:
                fence = opened.group(1)
                inside = True
        else:
            inside = fence is not None
        if not wanted[number]:
            described.append(outside)
            continue
        heading = prose and not inside and bool(_HEADING.match(text))
        counts = matcher.counts(text)
        if heading:
            counts = tuple(count * HEADING_WEIGHT for count in counts)
        described.append(
            Line(
                size=escaped_size(text),
                counts=counts,
                blank=not text.strip() and not inside,
                heading=heading,
            )
        )
    return described


def _blocks(lines: Sequence[Line], start: int, end: int) -> list[tuple[int, int]]:
    """Blocks inside ``start..end``: runs of non-blank lines, each heading on its own."""
    blocks: list[tuple[int, int]] = []
    open_at: int | None = None
    for number in range(start, end + 1):
        line = lines[number - 1]
        if line.blank or line.heading:
            if open_at is not None:
                blocks.append((open_at, number - 1))
                open_at = None
            if line.heading:
                blocks.append((number, number))
            continue
        if open_at is None:
            open_at = number
    if open_at is not None:
        blocks.append((open_at, end))
    return blocks


def _sum(lines: Sequence[Line], start: int, end: int) -> tuple[int, tuple[int, ...]]:
    size = sum(lines[n - 1].size for n in range(start, end + 1)) + 2 * (end - start)
    width = len(lines[start - 1].counts)
    counts = tuple(sum(lines[n - 1].counts[i] for n in range(start, end + 1)) for i in range(width))
    return size, counts


def _best(
    lines: Sequence[Line],
    units: Sequence[tuple[int, int]],
    cap: int,
    taken: Sequence[Window],
    weights: Weights,
) -> Window | None:
    """The best run of consecutive ``units`` within ``cap`` that overlaps nothing taken.

    Runs are grown one unit at a time from each starting unit, their size and
    counts carried along, so a chunk costs one pass per starting unit.
    """
    best: Window | None = None
    best_key: tuple[float, int, int] | None = None
    for first in range(len(units)):
        start = units[first][0]
        size = -2
        counts = [0] * (len(lines[start - 1].counts))
        reached = start - 1
        body = False
        score = 0.0
        stale = False
        for last in range(first, len(units)):
            end = units[last][1]
            if any(window.overlaps(start, end) for window in taken):
                break
            for number in range(reached + 1, end + 1):
                line = lines[number - 1]
                size += line.size + 2
                body = body or not (line.heading or line.blank)
                if any(line.counts):
                    stale = True
                    for index, count in enumerate(line.counts):
                        counts[index] += count
            reached = end
            if size > cap:
                break
            if lines[end - 1].heading or not body:
                continue
            if stale:  # most lines mention nothing: the score only moves when one does
                score, stale = weights.score(counts), False
            key = (score, size, -start)
            if best_key is None or key > best_key:
                best, best_key = Window(start, end, size, tuple(counts), score), key
    return best


def best_window(
    lines: Sequence[Line],
    span: tuple[int, int],
    cap: int,
    taken: Sequence[Window],
    weights: Weights,
) -> Window | None:
    """The best passage inside chunk lines ``span`` not overlapping ``taken``, or None.

    Whole blocks first; then runs of lines inside the blocks; then, when even
    one line is over ``cap``, the smallest line that speaks to the goal (which
    will not fit, and lets the caller name the least budget that holds one).
    """
    start, end = span
    blocks = _blocks(lines, start, end)
    singles = [(n, n) for first, last in blocks for n in range(first, last + 1)]
    free = [n for n, _ in singles if not any(w.overlaps(n, n) for w in taken)]
    # A window that fits but says nothing is worth less than one that speaks
    # to the goal and does not fit: that one makes the budget error honest.
    relevant = any(weights.score(lines[n - 1].counts) > 0 for n in free)
    for units in (blocks, singles):
        found = _best(lines, units, cap, taken, weights)
        if found is not None and (found.score > 0 or not relevant):
            return found
    if not free:
        return None
    number = min(
        free,
        key=lambda n: (
            lines[n - 1].heading,
            relevant and weights.score(lines[n - 1].counts) <= 0,
            lines[n - 1].size,
            n,
        ),
    )
    size, counts = _sum(lines, number, number)
    return Window(number, number, size, counts, weights.score(counts))
