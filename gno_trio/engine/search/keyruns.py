"""Runs of equal values in sorted numpy arrays: where each posting list, chunk or row
begins in the in-memory indexes' key arrays."""

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


def run_starts(values: KeyArray, also: Sequence[int] = ()) -> KeyArray:
    """Where each run of equal values begins in sorted ``values`` (and at ``also``):
    ``numpy.unique`` would sort again, several times slower."""
    import numpy as np

    opens = np.ones(values.size, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=opens[1:])
    opens[list(also)] = True
    return np.flatnonzero(opens)


__all__ = ["FloatArray", "KeyArray", "run_starts"]
