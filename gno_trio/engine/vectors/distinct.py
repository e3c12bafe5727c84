"""A small index's distinct vectors, each held once, and which stored row is which.

Corpora repeat themselves: versioned documentation keeps the same section
in every version, notes copy boilerplate. A repeated passage has the same
vector, so it is held and scored once, and every row that has it reads
that one score (on the mcp-docs fixture a third of the 9,380 window
vectors repeat another). Rows of equal vectors get equal scores, bit for
bit, which is also what makes ties between them well defined.

Each distinct vector is held as its int8 codes and scale only: its float32
vector is ``codes * scale`` rounded to float32, rebuilt bit for bit where a
product needs it (:func:`float_rows`). A float32 copy beside the codes would
be four times their bytes, resident for the process's life (12 MiB on the
mcp-docs fixture), to save a conversion that the few exactly scored vectors
of a search barely notice.

The arrays' row count is always a whole number of :data:`ROW_GROUP` rows
(zeros past the last vector): BLAS scores rows in groups and the few rows
left over at the end of a product by another path, whose last bits differ,
so a product over whole groups gives every row the same bits wherever it
lies. Appends only write past the rows a snapshot reads.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

ROW_GROUP: Final = 16


def padded(rows: int) -> int:
    """``rows`` rounded up to a whole number of :data:`ROW_GROUP` rows."""
    return -(-rows // ROW_GROUP) * ROW_GROUP


def float_rows(
    codes: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """The float32 vectors ``codes * scales`` (one scale per row), as stored rows were built."""
    vectors = codes.astype(np.float32)
    vectors *= scales[:, None]
    return vectors


class DistinctRows:
    """Distinct vectors (``codes[:count]``, ``scales[:count]``) and, per stored row, which
    one it is.

    Distinct vector ``i`` is ``float_rows(codes[i], scales[i])``; its length is
    held beside it. The codes are what a first pass over every vector reads
    (see :meth:`~gno_trio.engine.vectors.index.VectorMatrix.nearest`).
    """

    def __init__(self, dimension: int) -> None:
        self.codes: npt.NDArray[np.int8] = np.zeros((0, dimension), np.int8)
        self.scales: npt.NDArray[np.float32] = np.zeros(0, np.float32)
        self.norms: npt.NDArray[np.float64] = np.zeros(0, np.float64)
        self.of: npt.NDArray[np.int32] = np.zeros(0, np.int32)
        self.count = 0
        self._by_hash: dict[int, int] = {}

    @property
    def nbytes(self) -> int:
        arrays = (self.codes, self.scales, self.norms, self.of)
        return sum(int(a.nbytes) for a in arrays) + 100 * len(self._by_hash)

    def add(
        self,
        codes: npt.NDArray[np.int8],
        scales: npt.NDArray[np.float32],
        first_row: int,
    ) -> None:
        """Rows ``first_row ..`` have these int8 codes and scales (earlier rows are added)."""
        vectors = float_rows(codes, scales)
        norms = _norms(vectors)
        stop = first_row + len(vectors)
        if len(self.of) < stop:
            of = np.zeros(max(stop, len(self.of) * 3 // 2 + 1024), np.int32)
            of[:first_row] = self.of[:first_row]
            self.of = of
        for offset, vector in enumerate(vectors):
            key = hash(vector.tobytes())
            found = self._by_hash.get(key)
            if found is None or not np.array_equal(
                float_rows(self.codes[found : found + 1], self.scales[found : found + 1])[0],
                vector,
            ):
                found = self._append(codes[offset], scales[offset], float(norms[offset]))
                self._by_hash.setdefault(key, found)  # a hash collision stays a distinct row
            self.of[first_row + offset] = found

    def _append(self, codes: npt.NDArray[np.int8], scale: np.float32, norm: float) -> int:
        if padded(self.count + 1) > len(self.codes):
            capacity = padded(self.count * 3 // 2 + 1024)
            self.codes = _grown(self.codes, capacity, self.count)
            self.scales = _grown(self.scales, capacity, self.count)
            self.norms = _grown(self.norms, capacity, self.count)
        self.codes[self.count] = codes
        self.scales[self.count] = scale
        self.norms[self.count] = norm
        self.count += 1
        return self.count - 1


_NORM_ROWS: Final = 1024


def _norms(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """Each row's length, taken in float64 a block of rows at a time.

    The same numbers as one ``norm`` over a float64 copy of every row, without
    that copy (8 KB a row): a process reading a whole index in would
    otherwise fault in tens of MB for a moment.
    """
    norms = np.empty(len(vectors), np.float64)
    for start in range(0, len(vectors), _NORM_ROWS):
        block = vectors[start : start + _NORM_ROWS].astype(np.float64)
        norms[start : start + _NORM_ROWS] = np.linalg.norm(block, axis=1)
    return norms


def _grown(array: npt.NDArray[Any], capacity: int, used: int) -> npt.NDArray[Any]:
    """``array`` with room for ``capacity`` rows (zeros past the ``used`` ones kept)."""
    bigger = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    bigger[:used] = array[:used]
    return bigger
