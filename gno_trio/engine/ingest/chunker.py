"""Split a document's text mirror into overlapping, line-addressed chunks.

Chunks are the unit of embedding and of snippet/line anchoring, so two things
matter: each chunk should end at a natural boundary (a reader sees whole
paragraphs, a model sees whole functions), and ``start_line``/``end_line``
must be exact because agents jump straight to them with ``gno_get``.

Sizes are in characters, estimated from a token budget (``max_tokens`` x
``chars_per_token``; 800 x 4 = 3,200 characters by default). The end of each
chunk is searched within +/-10 % of that target, preferring a paragraph break,
then a sentence end, then a newline, then a space. Consecutive prose chunks
overlap by ``overlap`` (15 %) so a sentence cut at a boundary is still whole in
one of them. Code breaks before a declaration (``def``, ``class``, ``fn`` ...)
when one is close enough, and then needs no overlap because the declaration
is a clean cut.

Everything is linear in the text length: newline offsets and declaration
starts are found once, and each break search only looks inside its window.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Final, NamedTuple


class Chunk(NamedTuple):
    """One slice of the text: ``text == full_text[pos:pos + len(text)]``.

    A tuple rather than a frozen dataclass: a large sync makes millions, and
    a tuple is built several times faster.
    """

    seq: int
    pos: int
    text: str
    start_line: int
    end_line: int
    token_count: int


def byte_ranges(text: str, chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
    """Each chunk's (offset, length) in ``text``'s UTF-8 bytes, in the chunks' order.

    Linear in the text: each offset is the last one plus the bytes of the
    characters between them (chunks come in text order and overlap).
    """
    if text.isascii():
        return [(chunk.pos, len(chunk.text)) for chunk in chunks]
    ranges = []
    at = byte_at = 0
    for chunk in chunks:
        if chunk.pos >= at:
            byte_at += len(text[at : chunk.pos].encode("utf-8"))
        else:
            byte_at -= len(text[chunk.pos : at].encode("utf-8"))
        at = chunk.pos
        ranges.append((byte_at, len(chunk.text.encode("utf-8"))))
    return ranges


_SENTENCE_END: Final = re.compile(r"[.!?][\"'\u201d\u2019)\]]*[ \t\n]|[\u3002\uff01\uff1f]")

_DECLARATION_START: Final = re.compile(
    r"^[ \t]*(?:"
    r"export\b"
    r"|(?:(?:pub(?:\([^)\n]*\))?|public|private|protected|internal|static|abstract|final"
    r"|async|unsafe|extern|override|open|sealed|default)[ \t]+)*"
    r"(?:def|class|function\*?|func|fn|impl|struct|enum|trait|interface|type|module"
    r"|namespace|object|protocol|extension|mod)"
    r"(?=[ \t]+[\w$<(*{]|[<(])"
    r")",
    re.MULTILINE,
)

# Lines that belong to the declaration below them (decorators, attributes,
# doc comments): a break is moved above them so they stay with their code.
_ATTACHED_LINE: Final = re.compile(r"[ \t]*(?:@|#|//|/\*|\*|--)")
_MAX_ATTACHED_LINES: Final = 50


CHARS_PER_TOKEN: Final = 4


def estimate_tokens(text: str, chars_per_token: int = CHARS_PER_TOKEN) -> int:
    """The engine's one token estimate: about four characters per token, rounded up.

    No tokenizer ships with the engine, so chunk sizes and every token budget
    (Context Capsules included) are counted with this one rule.
    """
    return -(-len(text) // chars_per_token)


def _prose_break(text: str, lo: int, hi: int, target: int, *, sentences: bool) -> int:
    """Best end offset in ``[lo, hi]``: paragraph > sentence > newline > space > target."""
    para = text.rfind("\n\n", max(0, lo - 2), hi)
    if para != -1:
        return para + 2
    if sentences:
        last_end = -1
        for match in _SENTENCE_END.finditer(text, lo - 1 if lo > 0 else 0, hi):
            if match.end() >= lo:
                last_end = match.end()
        if last_end != -1:
            return last_end
    for sep in ("\n", " "):
        found = text.rfind(sep, lo - 1 if lo > 0 else 0, hi)
        if found != -1 and found + 1 >= lo:
            return found + 1
    return target


def _lift_over_attached_lines(text: str, start: int, floor: int) -> int:
    """Move a declaration start up over decorator/comment lines directly above it."""
    for _ in range(_MAX_ATTACHED_LINES):
        if start <= 0:
            break
        prev_start = text.rfind("\n", 0, start - 1) + 1
        if prev_start <= floor or not _ATTACHED_LINE.match(text, prev_start, start - 1):
            break
        start = prev_start
    return start


def _declaration_break(
    text: str, declarations: list[int], pos: int, lo: int, hi: int
) -> int | None:
    """Latest declaration start in ``[lo, hi]`` (lifted over its decorators), if any."""
    index = bisect.bisect_right(declarations, hi) - 1
    if index < 0 or declarations[index] < lo:
        return None
    return _lift_over_attached_lines(text, declarations[index], pos)


def _overlap_start(text: str, end: int, overlap_chars: int) -> int:
    """Where the next chunk starts: ``overlap_chars`` back, nudged to a line or word start."""
    raw = end - overlap_chars
    limit = raw + overlap_chars // 2
    for sep in ("\n", " "):
        found = text.find(sep, raw, limit)
        if found != -1:
            return found + 1
    return raw


def chunk_text(
    text: str,
    *,
    code: bool = False,
    max_tokens: int = 800,
    overlap: float = 0.15,
    chars_per_token: int = CHARS_PER_TOKEN,
) -> list[Chunk]:
    """Split ``text`` into chunks covering every character; ``[]`` for empty text.

    ``overlap`` is a fraction of the chunk size in ``[0, 0.5]``; larger values
    would make progress through the text too slow to be useful.
    """
    if max_tokens < 1 or chars_per_token < 1:
        raise ValueError("max_tokens and chars_per_token must be positive")
    if not 0.0 <= overlap <= 0.5:
        raise ValueError("overlap must be between 0 and 0.5")
    length = len(text)
    if length == 0:
        return []

    max_chars = max_tokens * chars_per_token
    window = max_chars // 10
    overlap_chars = int(max_chars * overlap)
    newlines = [match.start() for match in re.finditer("\n", text)]
    declarations = [match.start() for match in _DECLARATION_START.finditer(text)] if code else []

    chunks: list[Chunk] = []
    pos = 0
    while True:
        target = pos + max_chars
        at_declaration = False
        if target + window >= length:
            end = length
        else:
            lo = max(pos + 1, target - window)
            hi = target + window
            declaration = (
                _declaration_break(text, declarations, pos, pos + max(1, max_chars // 2), hi)
                if code
                else None
            )
            if declaration is not None:
                end, at_declaration = declaration, True
            else:
                end = _prose_break(text, lo, hi, target, sentences=not code)

        piece = text[pos:end]
        chunks.append(
            Chunk(
                seq=len(chunks),
                pos=pos,
                text=piece,
                start_line=bisect.bisect_left(newlines, pos) + 1,
                end_line=bisect.bisect_left(newlines, end - 1) + 1,
                token_count=estimate_tokens(piece, chars_per_token),
            )
        )
        if end >= length:
            return chunks
        if at_declaration or overlap_chars == 0:
            next_pos = end
        else:
            next_pos = _overlap_start(text, end, overlap_chars)
        pos = max(pos + 1, next_pos)
