"""The bundled model's tokenizer with a memo per word: same token ids, a fraction of the CPU.

The model package tokenizes in pure Python (a sentencepiece port: a
normalizer, then a unigram Viterbi over the whole normalized text). That is
~15 ms of an 800-token chunk, and it holds the interpreter lock, so two
embedding threads wait for each other there.

Two facts make a memo exact:

- the normalized text marks every word start with ``▁``, and no piece of the
  vocabulary has ``▁`` anywhere but first (checked when the memo is built:
  :func:`applies`), so every segmentation breaks before each ``▁``. The best
  segmentation of a text is therefore the best segmentation of each ``▁word``
  in turn, and the segmentation of a word is a pure function of the word;
- normalization is cheap (~2 ms a chunk) and stays whole-text, so whitespace
  and Unicode folding are exactly the package's.

Words are memoised in a bounded LRU (:data:`MEMO_WORDS` entries, about
350 bytes each: ~23 MB at most; 640 chunks of documentation fill 18,000),
so real text, whose words repeat, pays
the Viterbi once per distinct word, not once per occurrence. The memo lives
as long as the loaded model.
"""

from __future__ import annotations

import functools
from typing import Any, Final

# Distinct words remembered (an LRU: the least recently used word goes first).
MEMO_WORDS: Final = 65_536
_WORD_START: Final = "\u2581"


def applies(tokenizer: Any) -> bool:
    """Whether the word memo gives exactly the tokenizer's ids (see the module docstring)."""
    try:
        pieces: list[str] = tokenizer._pieces
        tokenizer._normalizer.normalize  # noqa: B018 - the attributes the memo calls
        tokenizer._viterbi  # noqa: B018
    except AttributeError:
        return False
    return not any(_WORD_START in piece[1:] for piece in pieces)


class WordMemoTokenizer:
    """``encode(text)`` = the package tokenizer's ``encode(text)`` (with BOS and EOS)."""

    def __init__(self, tokenizer: Any, size: int = MEMO_WORDS) -> None:
        self._normalize = tokenizer._normalizer.normalize
        viterbi = tokenizer._viterbi
        self._unk: int = tokenizer._unk_id
        self._bos: int = tokenizer._bos_id
        self._eos: int = tokenizer._eos_id

        @functools.lru_cache(maxsize=size)
        def word_ids(word: str) -> tuple[int, ...]:
            return tuple(viterbi(word))

        self._word_ids = word_ids

    def encode(self, text: str) -> list[int]:
        normalized: str = self._normalize(text)
        if not normalized:
            return [self._bos, self._unk, self._eos]
        ids = [self._bos]
        word_ids = self._word_ids
        head, *words = normalized.split(_WORD_START)
        if head:  # text before the first word start (none when the normalizer adds one)
            ids.extend(word_ids(head))
        for word in words:
            ids.extend(word_ids(_WORD_START + word))
        ids.append(self._eos)
        return ids

    def memo_size(self) -> int:
        """Words currently remembered."""
        return int(self._word_ids.cache_info().currsize)

    def forget(self) -> None:
        """Empty the memo (benchmarks start from it empty)."""
        self._word_ids.cache_clear()
