"""The extractive answer: the evidence sentences that answer the question, or none.

Without a generation model, an answer is quoted from the Capsule. Picking
the sentences that merely share a word with the question gave answers made
of table headers and unrelated lines, each "verified" because a quote is
always contained in its source. Here a passage is read as Markdown first:

* headings, table headers and separators, link-only lines and frontmatter
  are never claims;
* paragraphs and list items are joined across their wrapped lines and cut
  into sentences (a full stop inside a number, a version or a code span
  does not end one);
* a fenced code block is one unit, the command or code itself, read with the
  heading and the sentence it stands under, since that is where it says what
  it does; a table row is one unit, read with its header.

Each unit is scored by the share of the question's content words (question
words and stop words left out, weighted by how rare each is among the
units, matched by a shared five-letter stem) it or its context holds. Units
covering at least :data:`MIN_COVERAGE` are the answer, the best
:data:`MAX_SENTENCES` of them in evidence order, each with its passage
number; when none does, nothing answers and the draft says so (``ask``
then abstains instead of quoting filler).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.engine.ask.claims import split_claims

MIN_COVERAGE: Final = 0.4
MAX_SENTENCES: Final = 3
MAX_CODE_LINES: Final = 4
NOTHING_ANSWERS: Final = "Nothing in the evidence in scope answers this question."
_WORD: Final = re.compile(r"[^\W_]+", re.UNICODE)
_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_HEADING: Final = re.compile(r"^\s{0,3}#{1,6}\s")
_TABLE_SEPARATOR: Final = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINK: Final = re.compile(r"!?\[[^\]]*\]\([^)]*\)|<https?://[^>]+>|https?://\S+")
_BULLET: Final = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[`*_]*[A-Z0-9À-Ý])")
_CODE_SPAN: Final = re.compile(r"`[^`\n]*`")
_MARKDOWN_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_IGNORED_WORDS: Final = (
    "a an and are as at be been but by can could did do does for from had has have how i if "
    "in into is it its may me might must my of on or our shall should so than that the "
    "their them then there these they this those to use used using was we were what when "
    "where which while who whom whose why will with would you your about any each there "
    "der die das den dem des ein eine einen und oder ist sind wie was wer wo welche welcher "
    "welches für mit von zu im auf bei nach le la les un une des et ou est sont comment "
    "quel quelle quels quelles pour avec dans sur il elle faut qui que quoi di il lo gli "
    "e o per con su come quale quali si el los las y en por cómo qué cuál"
)
"""Question and function words (English, German, French, Italian, Spanish): never what a
question is about."""
_IGNORED: Final = frozenset(_IGNORED_WORDS.split())


@dataclass(frozen=True, slots=True)
class Unit:
    """One thing a passage says: a sentence, a table row or a code block."""

    number: int
    """The passage's position in the Capsule (1-based): its citation marker."""
    order: int
    text: str
    kind: str
    """``prose``, ``item`` (of a list), ``row`` or ``code``."""
    context: str
    """What the unit is read with for matching (its heading, its table header ...)."""


def _stem(word: str) -> str:
    return word[:5]


def _words(text: str) -> list[str]:
    return [w for w in (m.casefold() for m in _WORD.findall(text)) if w not in _IGNORED]


def _link_only(line: str) -> bool:
    rest = _LINK.sub("", _BULLET.sub("", line))
    return rest != line.strip() and not _WORD.search(rest)


def sentences(paragraph: str) -> list[str]:
    """A paragraph's sentences; code spans are kept whole."""
    spans: list[str] = []

    def hide(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _CODE_SPAN.sub(hide, " ".join(paragraph.split()))
    pieces = _SENTENCE_END.split(hidden)
    return [
        re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], piece).strip()
        for piece in pieces
        if piece.strip()
    ]


def units(number: int, text: str) -> list[Unit]:
    """What one passage says, in order, as units that can be quoted."""
    found: list[Unit] = []
    lines = text.split("\n")
    heading = ""
    lead = ""  # the last sentence before a code block or table: what it is about
    block: list[str] = []
    header: str | None = None
    index = 0

    def add(kind: str, body: str, context: str) -> None:
        found.append(Unit(number, len(found), body, kind, context))

    item = False  # whether the block being read is a list item

    def flush() -> None:
        nonlocal lead
        if block:
            before = lead  # the sentence that introduces a list or a paragraph
            for sentence in sentences(" ".join(block)):
                add("item" if item else "prose", sentence, f"{heading} {before}")
                if not item:
                    lead = sentence
            block.clear()

    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if _FENCE.match(line):
            flush()
            fence = stripped[:3]
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(fence):
                body.append(lines[index].rstrip())
                index += 1
            code = [b.strip() for b in body if b.strip()][:MAX_CODE_LINES]
            if code:
                add("code", " ; ".join(code), f"{heading} {lead}")
        elif not stripped or stripped == "---":
            flush()
            header = None
        elif _HEADING.match(line):
            flush()
            heading = stripped.lstrip("#").strip()
            lead = ""
        elif stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if _TABLE_SEPARATOR.match(stripped):
                pass
            elif header is None:
                header = " ".join(cells)  # a table's header is never a claim
            else:
                add("row", " | ".join(cells), f"{heading} {lead} {header}")
        elif _link_only(line):
            flush()
        elif _BULLET.match(line):
            flush()
            item = True
            block.append(_BULLET.sub("", line))
        else:
            if not block:
                item = False
            block.append(stripped)
        index += 1
    flush()
    return found


def _weights(question: list[str], every: Sequence[Unit]) -> dict[str, float]:
    """Each question stem's weight: rarer among the evidence units, heavier."""
    stems = {_stem(w) for w in question}
    holding = {s: 0 for s in stems}
    for unit in every:
        present = {_stem(w) for w in _words(f"{unit.text} {unit.context}")}
        for s in stems & present:
            holding[s] += 1
    total = max(1, len(every))
    return {s: math.log(1 + total / (1 + holding[s])) for s in stems}


def coverage(unit: Unit, weights: Mapping[str, float], question: Sequence[str] = ()) -> float:
    """Share of the question's weighted stems the unit (with its context) holds.

    A unit must hold at least one of them itself: its context alone (the
    heading a sentence stands under) does not make it an answer. Two
    question words written as one (``roll back``, ``rollback``) count as held.
    """
    if not weights:
        return 0.0
    words = _words(unit.text)
    own = {_stem(w) for w in words}
    joined = set(words)
    for first, second in itertools.pairwise(question):
        if first + second in joined:
            own |= {_stem(first), _stem(second)}
    if not own & weights.keys():
        return 0.0
    held = own | {_stem(w) for w in _words(unit.context)}
    return sum(w for s, w in weights.items() if s in held) / sum(weights.values())


def answer_units(question: str, passages: Sequence[Mapping[str, Any]]) -> list[Unit]:
    """The units that answer ``question``, best first cut to :data:`MAX_SENTENCES`, then put
    back in evidence order; empty when nothing answers."""
    every = [u for n, p in enumerate(passages, 1) for u in units(n, str(p["text"]))]
    asked = _words(question)
    weights = _weights(asked, every)
    scored = [(coverage(u, weights, asked), u) for u in every]
    chosen: list[Unit] = []
    seen: set[str] = set()
    for score, unit in sorted(scored, key=lambda p: (-p[0], p[1].number, p[1].order)):
        if score < MIN_COVERAGE or len(chosen) >= MAX_SENTENCES:
            break
        key = " ".join(unit.text.casefold().split())
        if key not in seen:
            seen.add(key)
            chosen.append(unit)
    return sorted(_with_lists(chosen, every), key=lambda u: (u.number, u.order))


def _with_lists(chosen: list[Unit], every: Sequence[Unit]) -> list[Unit]:
    """A chosen sentence that introduces a list (``... two modes:``) brings the list's
    first items: they are what it announces."""
    place = {(u.number, u.order): i for i, u in enumerate(every)}
    found = list(chosen)
    for unit in chosen:
        if not unit.text.endswith(":"):
            continue
        index = place[(unit.number, unit.order)] + 1
        while index < len(every) and every[index].kind == "item" and len(found) < 2 * MAX_SENTENCES:
            if every[index].number != unit.number:
                break
            if every[index] not in found:
                found.append(every[index])
            index += 1
            if index - place[(unit.number, unit.order)] > MAX_SENTENCES:
                break
    return found


def render(unit: Unit) -> str:
    """A unit as one line of the answer, its marker after it.

    A Markdown link keeps its text, and other square brackets become round
    ones: in an answer, ``[...]`` is a citation marker and nothing else.
    """
    text = _MARKDOWN_LINK.sub(r"\1", unit.text).replace("[", "(").replace("]", ")")
    if unit.kind == "code":
        return f"`{text.replace('`', chr(39))}` [{unit.number}]"
    text = text if text[-1:] in ".!?:" else text + "."
    # Every sentence the verifier will cut out of the line carries the marker.
    return " ".join(f"{claim.text} [{unit.number}]" for claim in split_claims(text))


__all__ = ["NOTHING_ANSWERS", "Unit", "answer_units", "coverage", "render", "sentences", "units"]
