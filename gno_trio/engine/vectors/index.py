"""Nearest-neighbour search over an in-memory snapshot of one model's vectors.

A snapshot holds every window vector of the model as int8 rows (d bytes
each) with the factor that restores unit length, which chunk and window
each row is, and per chunk a 1-bit sign sketch of the sum of its windows
(d / 8 bytes). Rows of one chunk are contiguous. For 100,000 chunks of four
512-dimensional windows that is about 220 MB, nine tenths of it the int8
rows; see :mod:`gno_trio.engine.vectors.cache` for how it stays current.

Search is exact when at most :data:`EXACT_ROWS` rows are candidates: one
product per block of rows. Small indexes also hold each distinct vector once
as int8 codes (:mod:`.distinct`): every code row is scored first, and only
the vectors that provably could rank are rebuilt as float32 for the exact
product (:meth:`VectorMatrix._contenders`). Of rows tied at the cut, the first
are kept, so the answer is a function of the scores alone. Beyond
that, the query's sign sketch is compared with each chunk's (Hamming
distance over 64-bit words: a quarter of the rows' bytes, read once), the
closest chunks are shortlisted, and only their windows are scored exactly.

Where the time goes decides the layout: sketches are held word-major (one
contiguous array per 64-bit word, so each XOR and popcount streams one
array instead of striding over rows of eight), and int8 rows are converted
to float32 in blocks small enough to stay in the CPU cache (a block of
thousands of rows is a fresh multi-megabyte allocation per query, which
cost more than the products).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import simsimd

from gno_trio.engine.vectors.distinct import ROW_GROUP, float_rows, padded
from gno_trio.engine.vectors.embedder import EMBED_DIMENSION_MISMATCH
from gno_trio.errors import GnoError

EXACT_ROWS: Final = 32_768
# A bound on float32 rounding in a unit-length 512-term product (n * 2**-24, with room).
_ROUNDING: Final = 1e-4
# 2 MB of float32 per block: small enough to stay in the CPU cache (measured best).
_BLOCK_ROWS: Final = 1024
_MIN_SHORTLIST: Final = 1024


def shortlist_size(chunks: int, wanted: int, minimum: int = _MIN_SHORTLIST) -> int:
    """How many sketch-nearest chunks have their windows scored exactly."""
    return min(chunks, max(minimum, chunks // 32, wanted * 16))


def sketch(vectors: npt.NDArray[np.floating] | npt.NDArray[np.int8]) -> npt.NDArray[np.uint64]:
    """One sign bit per dimension, packed into 64-bit words (dimension padded to 64)."""
    bits = np.packbits(vectors > 0, axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    packed: npt.NDArray[np.uint64] = np.ascontiguousarray(bits).view(np.uint64)
    return packed


@dataclass(slots=True)
class VectorMatrix:
    """A consistent snapshot of one model's vectors (rows ``[0, size)``)."""

    model_id: int
    dimension: int
    size: int
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    mirror_of: npt.NDArray[np.int32]
    seqs: npt.NDArray[np.int32]
    parts: npt.NDArray[np.int16]
    chunk_of: npt.NDArray[np.int32]
    chunks: int
    chunk_start: npt.NDArray[np.int32]
    chunk_count: npt.NDArray[np.int32]
    chunk_sketch: npt.NDArray[np.uint64]  # word-major: (words, capacity)
    mirrors: list[str]
    mirror_index: dict[str, int]
    # The distinct vectors (small indexes; see :mod:`.distinct`) as int8 codes, their
    # scales and lengths, in whole row groups: row r's vector is distinct vector
    # dense_of[r], float_rows(dense_codes[i], dense_scales[i]) in float32.
    dense_of: npt.NDArray[np.int32] | None = None
    dense_rows: int = 0
    dense_codes: npt.NDArray[np.int8] | None = None
    dense_scales: npt.NDArray[np.float32] | None = None
    dense_norms: npt.NDArray[np.float64] | None = None

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (their capacity, not just the used rows)."""
        arrays = (
            self.codes,
            self.scales,
            self.mirror_of,
            self.seqs,
            self.parts,
            self.chunk_of,
            self.chunk_start,
            self.chunk_count,
            self.chunk_sketch,
        )
        total = sum(int(a.nbytes) for a in arrays)
        extras = (self.dense_of, self.dense_codes, self.dense_scales, self.dense_norms)
        for extra in extras:
            total += int(extra.nbytes) if extra is not None else 0
        return total

    def rows_of(self, mirror: str) -> npt.NDArray[np.intp]:
        index = self.mirror_index.get(mirror)
        if index is None:
            return np.zeros(0, dtype=np.intp)
        return np.flatnonzero(self.mirror_of[: self.size] == index)

    def rows_of_mirrors(self, mirrors: list[str]) -> npt.NDArray[np.intp]:
        wanted = np.zeros(len(self.mirrors) + 1, dtype=bool)
        for mirror in mirrors:
            index = self.mirror_index.get(mirror)
            if index is not None:
                wanted[index] = True
        return np.flatnonzero(wanted[self.mirror_of[: self.size]])

    def vectors(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Rows as float32 unit vectors (a repeated vector has the same bits in every row)."""
        return float_rows(self.codes[rows], self.scales[rows])

    def _distinct_vectors(
        self, which: slice | npt.NDArray[np.intp] | npt.NDArray[np.int32]
    ) -> npt.NDArray[np.float32]:
        """Distinct vectors ``which`` as float32, the very bits of their rows' vectors."""
        assert self.dense_codes is not None and self.dense_scales is not None
        if isinstance(which, slice):
            return float_rows(self.dense_codes[which], self.dense_scales[which])
        return float_rows(np.take(self.dense_codes, which, axis=0), self.dense_scales[which])

    def scores(
        self, query: npt.NDArray[np.float32], rows: npt.NDArray[np.intp] | None = None
    ) -> npt.NDArray[np.float32]:
        """Cosine of ``query`` with each of ``rows`` (None: every row, in order).

        Block by block; with the distinct vectors and every row, each distinct
        vector is scored once. Every row is read through a view of the arrays where it can be:
        gathering all rows first would copy the whole matrix per query,
        which costs several times the product itself.
        """
        picked: npt.NDArray[np.intp] | npt.NDArray[np.int32] | None = rows
        distinct_rows = self.dense_codes is not None and self.dense_of is not None
        if distinct_rows:
            assert self.dense_of is not None
            if rows is None:
                distinct = np.empty(padded(self.dense_rows), dtype=np.float32)

                for start, stop in _blocks(len(distinct)):
                    vectors = self._distinct_vectors(slice(start, stop))
                    np.matmul(vectors, query, out=distinct[start:stop])
                found: npt.NDArray[np.float32] = distinct[self.dense_of[: self.size]]
                return found
            picked = self.dense_of[rows]
        out = np.empty(self.size if picked is None else len(picked), dtype=np.float32)

        for start, stop in _blocks(len(out)):
            part: slice | npt.NDArray[np.intp] | npt.NDArray[np.int32]
            part = slice(start, stop) if picked is None else picked[start:stop]
            if distinct_rows:
                out[start:stop] = _product(self._distinct_vectors(part), query)
                continue
            codes = (
                self.codes[start:stop]
                if picked is None
                else np.take(self.codes, picked[start:stop], axis=0)  # faster than indexing
            )
            out[start:stop] = _product(codes, query)
            out[start:stop] *= self.scales[part]
        return out

    def nearest(
        self,
        query: npt.NDArray[np.float32],
        wanted: int,
        rows: npt.NDArray[np.intp] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``wanted`` rows most similar to ``query`` (within ``rows``), best first."""
        if query.shape != (self.dimension,):
            raise GnoError(
                EMBED_DIMENSION_MISMATCH,
                f"A {query.shape[-1]}-dimensional query for vectors of {self.dimension}",
            )
        count = self.size if rows is None else len(rows)
        if count == 0 or wanted <= 0:
            return []
        candidates = rows
        if count > EXACT_ROWS:
            candidates = self._shortlist(query, wanted, rows)
            count = len(candidates)
        ranked = (
            self._contenders(query, wanted, candidates)
            if self.dense_codes is not None and wanted < self.dense_rows
            else None
        )
        if ranked is not None:
            candidates, cosine = ranked
            count = len(candidates)
        else:
            cosine = self.scores(query, candidates)
        top = _top(cosine, min(wanted, count))
        found = top if candidates is None else candidates[top]
        order = np.lexsort((found, -cosine[top]))
        return list(zip(found[order].tolist(), cosine[top[order]].tolist(), strict=True))

    def _contenders(
        self,
        query: npt.NDArray[np.float32],
        wanted: int,
        rows: npt.NDArray[np.intp] | None = None,
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]] | None:
        """The rows (of ``rows``, in their order; None: every row) that could rank among
        the ``wanted`` best, with :meth:`scores`' own scores for them; every other row
        provably cannot. None when there is nothing to gain: the rows hold no more
        than ``wanted`` distinct vectors, or so few that their exact product is cheaper.

        The exact float32 product reads 2 KB per distinct 512-dimensional
        vector, and that read from memory, not the arithmetic, is most of a
        small index's search. So every vector is first scored from its int8
        codes (a quarter of the bytes) against the query rounded to int8 too:
        an integer dot product per vector, exact, whose only error is the
        query's rounding ``e``. A vector ``x`` held as ``codes * scale``
        scores ``scale * q_scale * dot + x . e`` up to float32 rounding, and
        ``|x . e| <= |x| |e|``, so each vector's exact score lies within a
        known distance of its estimate. Only the vectors whose upper bound
        reaches the ``wanted``-th best lower bound can rank (or tie at the
        cut); they (typically a few dozen) get the exact product.
        """
        assert self.dense_of is not None
        assert self.dense_codes is not None and self.dense_scales is not None
        assert self.dense_norms is not None
        distinct = self.dense_rows
        of_rows = self.dense_of[: self.size] if rows is None else self.dense_of[rows]
        present: npt.NDArray[np.bool_] | None = None
        count = distinct
        if rows is not None:
            present = np.zeros(distinct, dtype=bool)
            present[of_rows] = True
            count = int(np.count_nonzero(present))
            # A few vectors: their exact product reads less than the codes of all.
            if count * 4 < distinct:
                return None
        if count <= wanted:
            return None
        step = float(np.max(np.abs(query))) / 127.0 or 1.0
        codes = np.rint(query / step).astype(np.int8)
        error = float(np.linalg.norm(query.astype(np.float64) - codes.astype(np.float64) * step))
        estimate = np.asarray(
            simsimd.cdist(codes[None, :], self.dense_codes[:distinct], metric="dot"),
            dtype=np.float64,
        )[0]
        estimate *= self.dense_scales[:distinct]
        estimate *= step
        if present is not None:  # vectors outside the rows neither set the bar nor contend
            estimate[~present] = -np.inf
        # |x . e| plus float32 rounding of the exact product and of x itself.
        reach = self.dense_norms[:distinct] * (error + _ROUNDING)
        reach += _ROUNDING
        floor = np.partition(estimate - reach, distinct - wanted)[distinct - wanted]
        estimate += reach
        contending = estimate >= floor
        contenders = np.flatnonzero(contending)
        exact = np.empty(distinct, dtype=np.float32)
        exact[contenders] = _product(self._distinct_vectors(contenders), query)
        kept = np.flatnonzero(contending[of_rows])
        found = of_rows[kept]
        return (kept if rows is None else rows[kept]), exact[found]

    def _shortlist(
        self,
        query: npt.NDArray[np.float32],
        wanted: int,
        rows: npt.NDArray[np.intp] | None,
        *,
        minimum: int = _MIN_SHORTLIST,
    ) -> npt.NDArray[np.intp]:
        """Rows of the chunks whose sketches are nearest the query's (within ``rows``)."""
        if rows is None:
            slots = np.arange(self.chunks, dtype=np.intp)
        else:
            slots = np.unique(self.chunk_of[rows]).astype(np.intp)
        probe = sketch(query[None, :])[0]
        distance = np.zeros(len(slots), dtype=np.int32)
        for word, bits in enumerate(probe):
            column = self.chunk_sketch[word]
            column = column[: self.chunks] if rows is None else column[slots]
            distance += np.bitwise_count(np.bitwise_xor(column, bits))
        short = shortlist_size(len(slots), wanted, minimum)
        kept = np.sort(slots[np.argpartition(distance, short - 1)[:short]])
        starts = self.chunk_start[kept].astype(np.intp)
        counts = self.chunk_count[kept].astype(np.intp)
        offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
        found = offsets + np.arange(int(counts.sum()), dtype=np.intp)
        if rows is not None:
            found = found[np.isin(found, rows, assume_unique=True)]
        return found


def _top(values: npt.NDArray[np.float32], take: int) -> npt.NDArray[np.intp]:
    """Positions of the ``take`` largest ``values``; of equal values, the first ones.

    A partial sort alone would pick among values tied at the cut by its own
    whim; taking the first keeps the answer a function of the scores.
    """
    count = len(values)
    if take >= count:
        return np.arange(count)
    cut = np.partition(values, count - take)[count - take]  # the take-th largest value
    above = np.flatnonzero(values > cut)
    tied = np.flatnonzero(values == cut)[: take - len(above)]
    return np.concatenate((above, tied))


def _product(
    rows: npt.NDArray[np.floating] | npt.NDArray[np.int8], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``rows @ query`` in float32 over whole row groups (see :mod:`.distinct`), so a
    row's score has the same bits in any block."""
    count = len(rows)
    if count % ROW_GROUP == 0:
        whole: npt.NDArray[np.float32] = rows.astype(np.float32, copy=False) @ query
        return whole
    block = np.zeros((padded(count), rows.shape[1]), dtype=np.float32)
    block[:count] = rows
    product: npt.NDArray[np.float32] = (block @ query)[:count]
    return product


def _blocks(count: int) -> list[tuple[int, int]]:
    """``[start, stop)`` blocks of :data:`_BLOCK_ROWS` rows; the last also takes the rest.

    So no block is a few rows long: those would be one more product call,
    and (unless padded, see :func:`_product`) scored by another BLAS path.
    """
    blocks = max(1, count // _BLOCK_ROWS)
    return [
        (i * _BLOCK_ROWS, count if i == blocks - 1 else (i + 1) * _BLOCK_ROWS)
        for i in range(blocks)
    ]
