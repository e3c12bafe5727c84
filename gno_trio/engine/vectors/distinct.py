"""The float32 copy of a small index's vectors, each distinct vector held once.

Corpora repeat themselves: versioned documentation keeps the same section
in every version, notes copy boilerplate. A repeated passage has the same
vector, so it is held and scored once, and every row that has it reads
that one score (on the mcp-docs fixture a third of the 9,380 window
vectors repeat another). Rows of equal vectors get equal scores, bit for
bit, which is also what makes ties between them well defined.

The copy's row count is always a whole number of :data:`ROW_GROUP` rows
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


class DistinctRows:
    """Distinct float32 vectors (``vectors[:count]``) and, per stored row, which one it is.

    Each distinct vector's int8 codes and scale (``vectors[i] == codes[i] * scales[i]``
    in float32) and its length are held beside it: the codes are a quarter of
    the bytes, which is what a first pass over every vector reads (see
    :meth:`~gno_trio.engine.vectors.index.VectorMatrix.nearest`).
    """

    def __init__(self, dimension: int) -> None:
        self.vectors: npt.NDArray[np.float32] = np.zeros((0, dimension), np.float32)
        self.codes: npt.NDArray[np.int8] = np.zeros((0, dimension), np.int8)
        self.scales: npt.NDArray[np.float64] = np.zeros(0, np.float64)
        self.norms: npt.NDArray[np.float64] = np.zeros(0, np.float64)
        self.of: npt.NDArray[np.int32] = np.zeros(0, np.int32)
        self.count = 0
        self._by_hash: dict[int, int] = {}

    @property
    def nbytes(self) -> int:
        arrays = (self.vectors, self.codes, self.scales, self.norms, self.of)
        return sum(int(a.nbytes) for a in arrays) + 100 * len(self._by_hash)

    def add(
        self,
        codes: npt.NDArray[np.int8],
        scales: npt.NDArray[np.float32],
        first_row: int,
    ) -> None:
        """Rows ``first_row ..`` have these int8 codes and scales (earlier rows are added)."""
        vectors = codes.astype(np.float32)
        vectors *= scales[:, None]
        norms = _norms(vectors)
        stop = first_row + len(vectors)
        if len(self.of) < stop:
            of = np.zeros(max(stop, len(self.of) * 3 // 2 + 1024), np.int32)
            of[:first_row] = self.of[:first_row]
            self.of = of
        for offset, vector in enumerate(vectors):
            key = hash(vector.tobytes())
            found = self._by_hash.get(key)
            if found is None or not np.array_equal(self.vectors[found], vector):
                found = self._append(
                    vector, codes[offset], float(scales[offset]), float(norms[offset])
                )
                self._by_hash.setdefault(key, found)  # a hash collision stays a distinct row
            self.of[first_row + offset] = found

    def _append(
        self,
        vector: npt.NDArray[np.float32],
        codes: npt.NDArray[np.int8],
        scale: float,
        norm: float,
    ) -> int:
        if padded(self.count + 1) > len(self.vectors):
            capacity = padded(self.count * 3 // 2 + 1024)
            self.vectors = _grown(self.vectors, capacity, self.count)
            self.codes = _grown(self.codes, capacity, self.count)
            self.scales = _grown(self.scales, capacity, self.count)
            self.norms = _grown(self.norms, capacity, self.count)
        self.vectors[self.count] = vector
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
