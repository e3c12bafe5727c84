"""Sorted numpy key arrays of the in-memory indexes: where each run of equal values
(a posting list, chunk or row) begins, and what two of them share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    KeyArray = npt.NDArray[np.int64]
    FloatArray = npt.NDArray[np.float64]
else:  # numpy is imported by the builds, the rankings and long pages only
    KeyArray = FloatArray = Any
"""The in-memory indexes' array types (numpy's, for the type checker only)."""


def listed_keys(listed: str | None) -> KeyArray:
    """The integers of a ``group_concat`` of them (commas between), parsed by numpy
    without a Python object per value; empty for no rows."""
    import numpy as np

    if not listed:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(listed, dtype=np.int64, sep=",")


def run_starts(values: KeyArray, also: Sequence[int] = ()) -> KeyArray:
    """Where each run of equal values begins in sorted ``values`` (and at ``also``):
    ``numpy.unique`` would sort again, several times slower."""
    import numpy as np

    opens = np.ones(values.size, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=opens[1:])
    opens[list(also)] = True
    return np.flatnonzero(opens)


def shared(first: KeyArray, second: KeyArray) -> KeyArray:
    """The values two sorted arrays of distinct values share, ascending: each value of
    the shorter one looked up in the longer (a binary search costs the one's length
    times the log of the other's; ``numpy.isin`` and ``intersect1d`` sort both)."""
    import numpy as np

    small, large = (first, second) if first.size <= second.size else (second, first)
    if not small.size or not large.size:
        return small[:0]
    place = np.minimum(np.searchsorted(large, small), large.size - 1)
    found: KeyArray = small[large[place] == small]
    return found


__all__ = ["FloatArray", "KeyArray", "run_starts", "shared"]
