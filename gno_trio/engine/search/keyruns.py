"""Runs of equal values in sorted numpy arrays: where each posting list, chunk or row
begins in the in-memory indexes' key arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    KeyArray = npt.NDArray[np.int64]
else:  # numpy is imported by the callers' builds and long pages only
    KeyArray = Any


def run_starts(values: KeyArray, also: Sequence[int] = ()) -> KeyArray:
    """Where each run of equal values begins in sorted ``values`` (and at ``also``):
    ``numpy.unique`` would sort again, several times slower."""
    import numpy as np

    opens = np.ones(values.size, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=opens[1:])
    opens[list(also)] = True
    return np.flatnonzero(opens)


__all__ = ["run_starts"]
