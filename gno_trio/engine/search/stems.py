"""What the index's tokenizer makes of ASCII words, asked of FTS5 once per build.

The in-memory indexes (:mod:`.chunkmemory`, :mod:`.docmemory`) turn a query
phrase into index tokens without a round trip to FTS5 when every word of it
occurs in the indexed text: each such word's token (its Porter stem, say)
was read from FTS5 itself when the memory was built.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

WORDS: Final = re.compile(r"[^\W_]+")
"""unicode61's tokens, for the characters the in-memory indexes let through."""


def ascii_words(texts: Iterable[object]) -> set[str]:
    """The lower-cased ASCII words of these texts (None and empty ones skipped)."""
    return {
        word.lower()
        for text in texts
        if text
        for word in WORDS.findall(str(text))
        if word.isascii()
    }


def known_tokens(stems: Mapping[str, str], text: str) -> list[str] | None:
    """The tokens FTS5 makes of ``text`` (a query phrase), when every word of it is
    in ``stems``; None otherwise (tokenize it on FTS5 then)."""
    if not text.isascii():
        return None
    tokens = [stems.get(word.lower()) for word in WORDS.findall(text)]
    if None in tokens:
        return None
    return [token for token in tokens if token is not None]


class Vocabulary:
    """An index's words in FTS5's order (code point order), numbered by place."""

    def __init__(self, terms: Sequence[str]) -> None:
        self._terms = terms
        self._numbers = {term: number for number, term in enumerate(terms)}

    def numbers(self, token: str, prefix: bool) -> range:
        """The word numbers ``token`` stands for: itself, or every word it begins (a
        run of consecutive numbers, as the words beginning with it sort together)."""
        if not prefix:
            number = self._numbers.get(token)
            return range(0) if number is None else range(number, number + 1)
        low = bisect.bisect_left(self._terms, token)
        # From ``low`` on, the words beginning with ``token`` come first, then none do.
        high = bisect.bisect_left(self._terms, True, lo=low, key=_not_beginning(token))
        return range(low, high)


def _not_beginning(token: str) -> Callable[[str], bool]:
    return lambda term: not term.startswith(token)


__all__ = ["WORDS", "Vocabulary", "ascii_words", "known_tokens"]
