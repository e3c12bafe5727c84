"""FTS5's ``snippet()`` of one column, worked out from where the phrases occur in it.

Given a column's text, where each of its tokens begins and ends, and the
phrase instances FTS5 would report for the row (token offset, phrase
number, phrase length), :func:`cut` returns the text ``snippet()`` returns:

* every instance proposes a window of ``width`` tokens around the
  instances that fall in ``width`` tokens from it; a window scores 1000 per
  distinct phrase it holds and 1 per repeat;
* the sentence holding an instance (a token that follows ``.`` or ``:`` and
  white space, or the first token) proposes a window starting there, with a
  bonus of 100 (120 at the very start of the text);
* the first best-scoring window wins; coalesced instances inside it are
  wrapped in the marks, an ellipsis stands for text cut at either end.

The in-memory chunk index (:mod:`.chunkmemory`) uses it so a search needs no
FTS5 statement per hit; its build checks the result against SQLite's own
``snippet()`` (:func:`agrees_with_sqlite`), and anchors fall back to FTS5 on
a SQLite whose ``snippet()`` cuts otherwise.
"""

from __future__ import annotations

import array
import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.store.scratch_fulltext import reference_snippets

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IntArray = npt.NDArray[np.int64]
else:  # numpy is imported only for a chunk with many instances
    IntArray = Any


@dataclass(frozen=True, slots=True)
class Marks:
    """``snippet()``'s arguments after the column: marks, ellipsis, window width."""

    open: str
    close: str
    ellipsis: str
    width: int


Instance = tuple[int, int]
"""(token offset, phrase number), in FTS5's order: by offset, then phrase number."""


def _half_toward_zero(value: int) -> int:
    """``value / 2`` truncated toward zero, as C integer division does."""
    return -((-value) // 2) if value < 0 else value // 2


_AFTER_SENTENCE = re.compile(r"[.:][ \t\n\r]+")


def sentence_starts(text: str, spans: Sequence[int]) -> array.array[int]:
    """Offsets of the tokens that begin a sentence: the first token, and every token
    right after white space that follows ``.`` or ``:``.

    ``spans`` holds each token's start and end character, flattened.
    """
    starts = array.array("i", [0] if spans else [])
    token_starts = spans[0::2]
    for found in _AFTER_SENTENCE.finditer(text):
        offset = bisect.bisect_left(token_starts, found.end())
        if 0 < offset < len(token_starts) and token_starts[offset] == found.end():
            starts.append(offset)
    return starts


def best_start(
    tokens: int,
    sentences: Sequence[int],
    instances: Sequence[Instance],
    sizes: Sequence[int],
    width: int,
) -> int:
    """The first token of the window ``snippet()`` picks, in a column of ``tokens``
    tokens whose sentences begin at ``sentences``.

    FTS5 scores the window at each instance by walking every instance; here
    two windows slide (instances come sorted): the instance's own, and the
    window of the sentence holding it, which is scored once however many
    instances it holds. A chunk with many instances is scored with numpy
    (:func:`_best_start_arrays`).
    """
    if len(instances) > MANY_INSTANCES:
        return _best_start_arrays(tokens, sentences, instances, sizes, width)
    offsets = [offset for offset, _ in instances]
    phrases = [phrase for _, phrase in instances]
    count = len(offsets)
    held = [0] * len(sizes)
    distinct = low = high = 0
    # The sentence window: its instances' phrases and where it lies among them.
    in_sentence = [0] * len(sizes)
    sentence_distinct = sentence_low = sentence_high = 0
    best_score = best = 0
    previous = tried = -1
    sentence_at = 0
    last_sentence = len(sentences) - 1
    use_sentences = tokens > width and last_sentence >= 0
    for offset in offsets:
        if offset == previous:  # the same window, the same sentence
            continue
        previous = offset
        while offsets[low] < offset:  # drop what the window has slid past
            held[phrases[low]] -= 1
            distinct -= held[phrases[low]] == 0
            low += 1
        while high < count and offsets[high] < offset + width:
            distinct += held[phrases[high]] == 0
            held[phrases[high]] += 1
            high += 1
        score = distinct * 1000 + (high - low - distinct)
        if score > best_score:  # only a winner's start needs working out
            last = offsets[high - 1] + sizes[phrases[high - 1]]
            adjusted = offset - _half_toward_zero(width - (last - offset))
            if adjusted + width > tokens:
                adjusted = tokens - width
            best_score, best = score, max(adjusted, 0)
        if use_sentences:
            while sentence_at < last_sentence and sentences[sentence_at + 1] <= offset:
                sentence_at += 1
            sentence = sentences[sentence_at]
            # A sentence scores the same for each of its instances: only its first
            # evaluation can beat the best so far. Sentences tried only move on.
            if sentence < offset and sentence != tried:
                tried = sentence
                while sentence_high < count and offsets[sentence_high] < sentence + width:
                    sentence_distinct += in_sentence[phrases[sentence_high]] == 0
                    in_sentence[phrases[sentence_high]] += 1
                    sentence_high += 1
                while offsets[sentence_low] < sentence:  # all added: they lie before its end
                    in_sentence[phrases[sentence_low]] -= 1
                    sentence_distinct -= in_sentence[phrases[sentence_low]] == 0
                    sentence_low += 1
                score = sentence_distinct * 1000 + (
                    sentence_high - sentence_low - sentence_distinct
                )
                score += 120 if sentence == 0 else 100
                if score > best_score:
                    best_score, best = score, sentence
    return best


MANY_INSTANCES: Final = 160
"""Instances in a chunk above which its window is chosen with numpy."""


def _best_start_arrays(
    tokens: int,
    sentences: Sequence[int],
    instances: Sequence[Instance],
    sizes: Sequence[int],
    width: int,
) -> int:
    """:func:`best_start`, every window scored at once: the candidates come in FTS5's
    order (each instance's window, then its sentence's), and the first of the
    highest scores wins, as FTS5's strict comparison makes it."""
    import numpy as np

    pairs = np.array(instances, dtype=np.int64)
    offsets, phrases = pairs[:, 0], pairs[:, 1]
    # held[k, i]: instances of phrase k among the first i
    held = np.zeros((len(sizes), offsets.size + 1), dtype=np.int64)
    for phrase in range(len(sizes)):
        np.cumsum(phrases == phrase, out=held[phrase, 1:])

    def scores(starts: IntArray) -> IntArray:
        low = np.searchsorted(offsets, starts)
        high = np.searchsorted(offsets, starts + width)
        distinct = ((held[:, high] - held[:, low]) > 0).sum(axis=0)
        return distinct * 1000 + (high - low - distinct)  # type: ignore[no-any-return]

    high = np.searchsorted(offsets, offsets + width)
    last = offsets[high - 1] + np.asarray(sizes, dtype=np.int64)[phrases[high - 1]]
    spare = width - (last - offsets)
    adjusted = offsets - np.where(spare < 0, -((-spare) // 2), spare // 2)
    adjusted = np.where(adjusted + width > tokens, tokens - width, adjusted)
    adjusted = np.maximum(adjusted, 0)
    candidates = scores(offsets)
    starts = adjusted
    if tokens > width and len(sentences):
        begins = np.asarray(sentences, dtype=np.int64)
        sentence = begins[np.maximum(np.searchsorted(begins, offsets, side="right") - 1, 0)]
        bonus = np.where(sentence == 0, 120, 100)
        sentence_scores = np.where(sentence < offsets, scores(sentence) + bonus, -1)
        candidates = np.stack((candidates, sentence_scores), axis=1).ravel()
        starts = np.stack((adjusted, sentence), axis=1).ravel()
    best = int(np.argmax(candidates))
    return int(starts[best]) if candidates[best] > 0 else 0


def _coalesced(
    instances: Sequence[Instance], sizes: Sequence[int], through: int
) -> list[tuple[int, int]]:
    """Instances merged where they overlap: (first token, last token) of each run that
    begins by token ``through``."""
    runs: list[tuple[int, int]] = []
    for offset, phrase in instances:
        if offset > through:
            break
        end = offset + sizes[phrase] - 1
        if runs and offset <= runs[-1][1]:
            if end > runs[-1][1]:
                runs[-1] = (runs[-1][0], end)
        else:
            runs.append((offset, end))
    return runs


def cut(
    text: str,
    spans: Sequence[int],
    sentences: Sequence[int],
    instances: Sequence[Instance],
    sizes: Sequence[int],
    marks: Marks,
) -> str:
    """``snippet()`` of a column: ``spans`` its token boundaries, ``sentences`` its
    :func:`sentence_starts`, ``instances`` its phrase instances (sorted),
    ``sizes`` each phrase's length in tokens."""
    tokens = len(spans) // 2
    start = best_start(tokens, sentences, instances, sizes, marks.width)
    end = start + marks.width - 1
    # A one-token window at the very start ends at token 0, which FTS5 reads as
    # no window at all: it marks every run, then adds the ellipsis.
    whole = end <= 0
    last_token = tokens - 1 if whole else min(end, tokens - 1)
    out: list[str] = [marks.ellipsis] if start > 0 else []
    copied = spans[2 * start] if start and start < tokens else 0
    cut_short = False
    for run_start, run_end in _coalesced(instances, sizes, last_token):
        if run_start < start:  # begun before the window: FTS5 skips it whole
            continue
        if run_start > last_token:
            break
        out += (text[copied : spans[2 * run_start]], marks.open)
        copied = spans[2 * run_start]
        closing = run_end if whole else min(run_end, end)  # a run past the end closes there
        out += (text[copied : spans[2 * closing + 1]], marks.close)
        copied = spans[2 * closing + 1]
        if run_end > end and not whole:
            cut_short = True
            break
    if not whole and end <= tokens - 1 and not cut_short:  # the window's last token
        out.append(text[copied : spans[2 * end + 1]])
        copied = spans[2 * end + 1]
    out.append(text[copied:] if end >= tokens - 1 else marks.ellipsis)
    return "".join(out)


def agrees_with_sqlite(tokenize: str) -> bool:
    """Whether :func:`cut` gives this SQLite's ``snippet()`` on texts that exercise
    its rules (sentence bonus, clamping at the end, overlapping phrases, a
    phrase cut by the window's end, repeated phrases)."""
    references = reference_snippets(tokenize, _SELF_CHECKS)
    if references is None:
        return False
    for (text, _, width), (expected, terms, wanted) in zip(_SELF_CHECKS, references, strict=True):
        instances = [
            (offset, number)
            for offset in range(len(terms))
            for number, tokens in enumerate(wanted)
            if terms[offset : offset + len(tokens)] == tokens
        ]
        spans = [edge for found in _WORDS.finditer(text) for edge in found.span()]
        sizes = [len(tokens) for tokens in wanted]
        sentences = sentence_starts(text, spans)
        if cut(text, spans, sentences, instances, sizes, Marks("[", "]", "...", width)) != expected:
            return False
    return True


_WORDS = re.compile(r"[^\W_]+")
_SELF_CHECKS = (
    ("alpha beta. Gamma delta epsilon: zeta eta theta iota kappa", ("delta",), 4),
    ("one two three four five six seven eight nine ten", ("nine",), 3),
    ("red blue red blue green. Red blue", ("red blue", "blue"), 3),
    ("a b c d e f g h i j k l m n o p", ("f g h",), 2),
    ("start here   : and then more words follow here", ("more", "here"), 5),
    ("x y z. w v u t s r q p o n m l", ("w v u t s r",), 4),
    ("same word twice, same word again and again", ("word", "word", "again"), 3),
    (
        "Tools list tools. " * 12 + "Then a tool: call tools and list them. " * 8,
        ("tool", "list", "call tool"),
        16,
    ),
    (" ".join(f"w{n % 7} x{n % 5}." for n in range(90)), ("w3 x4", "x1", "w6"), 10),
)
