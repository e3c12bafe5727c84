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

from typing import Final

import numpy as np
import numpy.typing as npt

ROW_GROUP: Final = 16


def padded(rows: int) -> int:
    """``rows`` rounded up to a whole number of :data:`ROW_GROUP` rows."""
    return -(-rows // ROW_GROUP) * ROW_GROUP


class DistinctRows:
    """Distinct float32 vectors (``vectors[:count]``) and, per stored row, which one it is."""

    def __init__(self, dimension: int) -> None:
        self.vectors: npt.NDArray[np.float32] = np.zeros((0, dimension), np.float32)
        self.of: npt.NDArray[np.int32] = np.zeros(0, np.int32)
        self.count = 0
        self._by_hash: dict[int, int] = {}

    @property
    def nbytes(self) -> int:
        return int(self.vectors.nbytes + self.of.nbytes) + 100 * len(self._by_hash)

    def add(self, vectors: npt.NDArray[np.float32], first_row: int) -> None:
        """Rows ``first_row ..`` have ``vectors`` (rows before them are already added)."""
        stop = first_row + len(vectors)
        if len(self.of) < stop:
            of = np.zeros(max(stop, len(self.of) * 3 // 2 + 1024), np.int32)
            of[:first_row] = self.of[:first_row]
            self.of = of
        for offset, vector in enumerate(vectors):
            key = hash(vector.tobytes())
            found = self._by_hash.get(key)
            if found is None or not np.array_equal(self.vectors[found], vector):
                found = self._append(vector)
                self._by_hash.setdefault(key, found)  # a hash collision stays a distinct row
            self.of[first_row + offset] = found

    def _append(self, vector: npt.NDArray[np.float32]) -> int:
        if padded(self.count + 1) > len(self.vectors):
            grown = np.zeros(
                (padded(self.count * 3 // 2 + 1024), self.vectors.shape[1]), np.float32
            )
            grown[: self.count] = self.vectors[: self.count]
            self.vectors = grown
        self.vectors[self.count] = vector
        self.count += 1
        return self.count - 1
