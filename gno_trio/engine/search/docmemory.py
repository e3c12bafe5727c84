"""The document index of a small index, in memory: FTS5's document ranking without FTS5.

A lexical search ranks documents with ``bm25(documents_fts, <weights>)``:
FTS5 walks each query phrase's postings over the whole index twice (once to
count the rows holding it, once to match), reads each matching row's size
record and sorts. From Python that is most of what is left of a search once
the anchors come from memory (:mod:`.chunkmemory`).

:class:`DocumentMemory` holds, for one state of the document index, each
word's postings (``doc << 27 | column << 24 | offset``, FTS5's order), each
(word, document) pair's column-weighted count, each row's size and the
index's totals. :meth:`DocumentMemory.ranked` evaluates the MATCH
expressions the query grammar writes (quoted phrases, ``*`` prefixes, AND,
OR, NOT, parentheses) and scores each matching row with FTS5's own bm25
arithmetic in its order, so ranks agree to the last bit and the top rows
are FTS5's. It is built and kept beside the chunk memory
(:mod:`.chunkkeeper`).
"""

from __future__ import annotations

import array
import functools
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

from gno_trio.engine.search.chunkrank import idf, length_norm, saturation
from gno_trio.engine.search.keyruns import FloatArray, KeyArray, listed_keys, run_starts, shared
from gno_trio.engine.search.stems import Vocabulary, ascii_words, known_tokens
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS
from gno_trio.engine.store.fulltext_copy import FullTextCopyStore

COLUMN_BITS: Final = 24
DOC_SHIFT: Final = 27
"""A posting's key is ``doc << 27 | column << 24 | token offset`` (six columns, 3 bits)."""

DENSE_ROWS: Final = 1 << 15
"""Rows up to which each query phrase is counted in one array over every row: a few
whole-array operations then beat sorting and merging each phrase's rows (at
mcp-docs' 344 rows, a third of the ranking's time); above it a rare word would
pay for every row, so phrases are merged as sorted row lists instead."""
_TOKEN = re.compile(r'\s*(?:"((?:[^"]|"")*)"(\*?)|(AND|OR|NOT)\b|([()]))')

Tokenizer = Callable[[str], list[str]]
"""Tokenizes text as the index does (for a query phrase with a word the corpus lacks)."""
Node = tuple[Any, ...]
"""A parsed expression: ``("phrase", index)`` or ``(operator, left, right)``."""


class Unsupported(Exception):
    """The expression or one of its phrases is not worked out here (FTS5 ranks it)."""


@functools.lru_cache(maxsize=512)
def parse(expression: str) -> tuple[Node, list[tuple[str, bool]]]:
    """The expression's tree and its phrases (text, prefix) in FTS5's phrase order.

    FTS5's precedence: NOT binds tighter than AND, AND tighter than OR. The
    grammar's expressions (all terms, any term, either less the negated ones)
    are all of the shapes ranked here; others raise :class:`Unsupported`.
    """
    items: list[tuple[str, Any]] = []
    position = 0
    while position < len(expression):
        if not expression[position:].strip():
            break
        found = _TOKEN.match(expression, position)
        if found is None:
            raise Unsupported(expression)
        if found.group(1) is not None:
            items.append(("phrase", (found.group(1).replace('""', '"'), bool(found.group(2)))))
        elif found.group(3):
            items.append(("op", found.group(3)))
        else:
            items.append(("paren", found.group(4)))
        position = found.end()
    parser = _Parser(expression, items)
    tree = parser.either()
    if parser.place != len(items) or not _reports_presence(tree, under_or=False):
        raise Unsupported(expression)
    return tree, parser.phrases


class _Parser:
    """Recursive descent over an expression's items, one level per precedence.

    Methods rather than nested functions: nested functions that call each
    other form reference cycles, and a search that leaves cycles behind makes
    the cycle collector pause serving to find them.
    """

    __slots__ = ("expression", "items", "phrases", "place")

    def __init__(self, expression: str, items: list[tuple[str, Any]]) -> None:
        self.expression = expression
        self.items = items
        self.phrases: list[tuple[str, bool]] = []
        self.place = 0

    def primary(self) -> Node:
        if self.place >= len(self.items):
            raise Unsupported(self.expression)
        kind, value = self.items[self.place]
        self.place += 1
        if kind == "phrase":
            self.phrases.append(value)
            return ("phrase", len(self.phrases) - 1)
        if kind == "paren" and value == "(":
            node = self.either()
            if self.place >= len(self.items) or self.items[self.place] != ("paren", ")"):
                raise Unsupported(self.expression)
            self.place += 1
            return node
        raise Unsupported(self.expression)

    def _binary(self, operator: str, operand: Callable[[], Node]) -> Node:
        node = operand()
        while self.place < len(self.items) and self.items[self.place] == ("op", operator):
            self.place += 1
            node = (operator, node, operand())
        return node

    def negated(self) -> Node:
        return self._binary("NOT", self.primary)

    def both(self) -> Node:
        return self._binary("AND", self.negated)

    def either(self) -> Node:
        return self._binary("OR", self.both)


def _reports_presence(node: Node, *, under_or: bool) -> bool:
    """Whether FTS5 reports, in every row the expression matches, exactly the
    instances of the phrases the row holds (what :meth:`DocumentMemory.ranked` scores).

    Below an OR, an AND or NOT that fails in a row may leave the instances of
    its phrases unreported there though the row holds them; the right side of
    a NOT holds nothing in a matching row only when it is phrases ORed.
    """
    if node[0] == "phrase":
        return True
    if node[0] == "OR":
        return all(_reports_presence(child, under_or=True) for child in node[1:])
    if under_or:
        return False
    if node[0] == "NOT":
        return _reports_presence(node[1], under_or=False) and _reports_presence(
            node[2], under_or=True
        )
    return all(_reports_presence(child, under_or=False) for child in node[1:])


class DocumentMemory:
    """The document index's postings, pair weights, row sizes and totals, for one state."""

    def __init__(
        self,
        terms: list[str],
        counts: Sequence[int],
        keys: array.array[int],
        sizes: dict[int, int],
        totals: tuple[int, int],
        stems: dict[str, str],
    ) -> None:
        import numpy as np

        self.totals = totals
        self._vocabulary = Vocabulary(terms)
        self._stems = stems
        self._bounds = [0, *itertools.accumulate(counts)]
        self._keys = np.frombuffer(keys, dtype=np.int64) if len(keys) else np.zeros(0, np.int64)
        self._field_weights: FloatArray = np.array(FIELD_WEIGHTS, dtype=np.float64)
        docs = self._keys >> DOC_SHIFT
        starts = run_starts(docs, self._bounds[:-1][: len(terms)])  # a word opens a run
        self._pair_docs: KeyArray = docs[starts]
        self._pair_weights: FloatArray = (
            np.add.reduceat(self._weights_of(self._keys), starts) if starts.size else np.zeros(0)
        )
        self._pair_bounds: list[int] = np.searchsorted(starts, self._bounds).tolist()
        ordered = sorted(sizes)
        self._size_ids: KeyArray = np.array(ordered, dtype=np.int64)
        self._sizes: FloatArray = np.array([sizes[d] for d in ordered], dtype=np.float64)
        self._dense = len(ordered) <= DENSE_ROWS
        # Each (word, row) pair's row as its place among the rows, and each row's
        # bm25 length term (the same arithmetic, row by row, as the sorted path's).
        self._pair_places: KeyArray = np.searchsorted(self._size_ids, self._pair_docs)
        self._scale: FloatArray = length_norm(self._sizes, totals[1] / totals[0])

    def _weights_of(self, keys: KeyArray) -> FloatArray:
        """Each posting's field weight (bm25 adds it per instance)."""
        weights: FloatArray = self._field_weights[(keys >> COLUMN_BITS) & 7]
        return weights

    def _tokens(self, text: str, tokenizer: Tokenizer) -> list[str]:
        """The tokens FTS5 makes of a query phrase: looked up for words of the corpus,
        else asked of ``tokenizer`` (the index's own)."""
        known = known_tokens(self._stems, text)
        tokens = known if known else tokenizer(text)
        if not tokens:
            raise Unsupported(text)
        return tokens

    def _words(self, text: str, prefix: bool, tokenizer: Tokenizer) -> list[range]:
        """Each token's word numbers (a prefix's last: every word it begins)."""
        tokens = self._tokens(text, tokenizer)
        last = len(tokens) - 1
        return [self._vocabulary.numbers(t, prefix and i == last) for i, t in enumerate(tokens)]

    def _pairs(self, numbers: range) -> slice:
        """Where these consecutive words' (word, row) pairs lie."""
        return slice(self._pair_bounds[numbers.start], self._pair_bounds[numbers.stop])

    def _phrase_keys(self, words: list[range]) -> KeyArray:
        """The keys where a phrase of several tokens begins (ascending)."""
        keys = self._key_union(words[0])
        for step, numbers in enumerate(words[1:], start=1):
            if not keys.size:
                break
            keys = shared(keys, self._key_union(numbers) - step)
        return keys

    def _phrase(self, text: str, prefix: bool, tokenizer: Tokenizer) -> tuple[KeyArray, FloatArray]:
        """The rows holding the phrase (ascending) and its weighted instance count in each."""
        words = self._words(text, prefix, tokenizer)
        if len(words) == 1:
            pairs = self._pairs(words[0])
            docs, weights = self._pair_docs[pairs], self._pair_weights[pairs]
            return (docs, weights) if len(words[0]) <= 1 else _summed(docs, weights)
        keys = self._phrase_keys(words)
        return _summed(keys >> DOC_SHIFT, self._weights_of(keys))

    def _counted(self, text: str, prefix: bool, tokenizer: Tokenizer) -> FloatArray:
        """The phrase's weighted instance count in every row, by place (0: not held)."""
        import numpy as np

        words = self._words(text, prefix, tokenizer)
        if len(words) == 1:
            pairs = self._pairs(words[0])
            places, weights = self._pair_places[pairs], self._pair_weights[pairs]
        else:
            keys = self._phrase_keys(words)
            places = np.searchsorted(self._size_ids, keys >> DOC_SHIFT)
            weights = self._weights_of(keys)
        # Weighted, so float64; summed in input order, as the sorted path sums.
        counts = np.bincount(places, weights, minlength=self._size_ids.size)
        return counts.astype(np.float64, copy=False)

    def _ranked_dense(
        self,
        tree: Node,
        phrases: list[tuple[str, bool]],
        limit: int,
        tokenizer: Tokenizer,
        among: KeyArray | None,
    ) -> list[tuple[int, float]]:
        """:meth:`ranked` with each phrase counted over every row (see :data:`DENSE_ROWS`).

        Counts are summed in the order the sorted path sums them (word after
        word, key after key) and scored with its arithmetic, so ranks are equal
        to the bit.
        """
        import numpy as np

        counted = [self._counted(text, prefix, tokenizer) for text, prefix in phrases]
        matches = _evaluate_masks(tree, counted)
        if among is not None:
            matches &= self._rows_in(among)
        matching = np.flatnonzero(matches)
        terms = [(int(np.count_nonzero(counts)), counts[matching]) for counts in counted]
        # Places ascend as row ids do, so the ids keep the order ties fall in.
        return self._top(self._size_ids[matching], self._scale[matching], terms, limit)

    def _top(
        self,
        rows: KeyArray,
        scale: FloatArray,
        terms: list[tuple[int, FloatArray]],
        limit: int,
    ) -> list[tuple[int, float]]:
        """The ``limit`` best of these matching rows (ascending ids, their length terms)
        by bm25, ties in row id order; ``terms`` gives each phrase's count of rows
        holding it and its frequency in each matching row."""
        import numpy as np

        if not rows.size:
            return []
        score = np.zeros(rows.size)
        for holding, frequency in terms:
            score = score + idf(self.totals[0], holding) * saturation(frequency, scale)
        rank = -1.0 * score
        order = np.lexsort((rows, rank))[:limit]
        return list(zip(rows[order].tolist(), rank[order].tolist(), strict=True))

    def _key_union(self, numbers: Sequence[int]) -> KeyArray:
        import numpy as np

        parts = [self._keys[self._bounds[n] : self._bounds[n + 1]] for n in numbers]
        if len(parts) == 1:
            return parts[0]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def _rows_in(self, among: KeyArray) -> Any:
        """A boolean array by place: which rows are among these row ids (ascending)."""
        import numpy as np

        rows = np.zeros(self._size_ids.size, dtype=bool)
        places = np.searchsorted(self._size_ids, among)
        inside = places < self._size_ids.size
        places = places[inside]
        rows[places[self._size_ids[places] == among[inside]]] = True
        return rows

    def ranked(
        self,
        expression: str,
        limit: int,
        tokenizer: Tokenizer,
        among: KeyArray | None = None,
    ) -> list[tuple[int, float]]:
        """The ``limit`` best rows matching ``expression`` and their bm25 ranks (FTS5's
        order: rank, then row id); raises :class:`Unsupported` for what FTS5 must rank.
        ``tokenizer`` tokenizes a phrase with a word the corpus lacks.

        ``among`` (row ids, ascending) keeps only those rows, as a filter joined to
        FTS5's statement does: the statistics stay the whole index's.
        """
        import numpy as np

        tree, phrases = parse(expression)
        if limit <= 0:
            return []
        if self._dense:
            return self._ranked_dense(tree, phrases, limit, tokenizer, among)
        found = [self._phrase(text, prefix, tokenizer) for text, prefix in phrases]
        matching = _evaluate(tree, found)
        if among is not None:
            matching = shared(matching, among)
        terms = []
        for docs, weights in found:  # each phrase's frequency in the matching rows
            frequency = np.zeros(matching.size)
            place = np.searchsorted(docs, matching)
            inside = place < docs.size
            hit = np.zeros(matching.size, dtype=bool)
            hit[inside] = docs[place[inside]] == matching[inside]
            frequency[hit] = weights[place[hit]]
            terms.append((int(docs.size), frequency))
        scale = self._scale[np.searchsorted(self._size_ids, matching)]
        return self._top(matching, scale, terms, limit)


def _summed(docs: KeyArray, weights: FloatArray) -> tuple[KeyArray, FloatArray]:
    """Per distinct row (ascending), the sum of its weights."""
    import numpy as np

    if not docs.size:
        return docs, weights
    order = np.argsort(docs, kind="stable")
    docs, weights = docs[order], weights[order]
    starts = run_starts(docs)
    return docs[starts], np.add.reduceat(weights, starts)


def _evaluate(node: Node, found: list[tuple[KeyArray, FloatArray]]) -> KeyArray:
    import numpy as np

    if node[0] == "phrase":
        return found[node[1]][0]
    left = _evaluate(node[1], found)
    right = _evaluate(node[2], found)
    if node[0] == "AND":
        return np.intersect1d(left, right, assume_unique=True)
    if node[0] == "OR":
        return np.union1d(left, right)
    return np.setdiff1d(left, right, assume_unique=True)


def _evaluate_masks(node: Node, counted: list[FloatArray]) -> Any:
    """The rows (a boolean array by place) the expression matches."""
    if node[0] == "phrase":
        return counted[node[1]] > 0
    left = _evaluate_masks(node[1], counted)
    right = _evaluate_masks(node[2], counted)
    if node[0] == "AND":
        return left & right
    if node[0] == "OR":
        return left | right
    return left & ~right


def build(
    copy: FullTextCopyStore,
    stems: dict[str, str],
    stem: Callable[[set[str]], dict[str, str]],
    most_tokens: int,
) -> DocumentMemory | None:
    """A copy of the document index, read inside the caller's snapshot of ``copy``;
    None when it is empty or larger than ``most_tokens``.

    ``stems`` maps words of the indexed text to their tokens (the chunk
    memory's); ``stem`` adds the words of the metadata fields.
    """
    totals = copy.document_totals()
    if totals is None or totals[0] <= 0 or totals[1] > most_tokens:
        return None
    listed, joined = copy.document_postings(DOC_SHIFT, COLUMN_BITS)
    sizes = copy.document_lengths()
    metadata = copy.document_metadata()
    keys = array.array("q", listed_keys(joined).tobytes())
    del joined
    if len(keys) != sum(int(row[1]) for row in listed):
        return None
    words = ascii_words(field for row in metadata for field in row) - stems.keys()
    return DocumentMemory(
        [str(row[0]) for row in listed],
        [int(row[1]) for row in listed],
        keys,
        sizes,
        totals,
        {**stems, **stem(words)} if words else stems,
    )


__all__ = ["DocumentMemory", "Unsupported", "build", "parse"]
