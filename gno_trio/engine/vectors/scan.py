"""One scan of row blocks shared by the calling thread and one helper thread.

Scoring a query against every stored vector is a product of the whole
matrix with one vector: memory-bound, about 1 ms per 10,000 rows of 512
float32 on one core here, and no exact method reads less (the int8 codes
need a conversion that costs as much as the bytes it saves). Two cores
read it in about half the wall time, and BLAS is held to one thread (see
:mod:`.blas`), so the split is done here, block by block.

The caller never waits for the helper. Blocks are claimed one at a time,
the caller claiming too; when none is left, a block the helper is still
on (it lost its core on a busy machine, or it is finishing another
search's block) is scanned again by the caller, and the helper's late
result is dropped. So a shared scan takes at most one block longer than
scanning alone, and about half as long when a second core is free. A
block's result depends only on its own rows, so the answer is the same
whichever thread scans which block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import numpy as np
import numpy.typing as npt

# Below this many rows one thread is done before a helper could join in.
SHARED_ROWS: Final = 4096
_FREE, _HELPER, _HELPED, _CALLER = range(4)

_lock = threading.Lock()
_helper: ThreadPoolExecutor | None = None

Work = Callable[[int, int, npt.NDArray[Any]], None]


def _pool() -> ThreadPoolExecutor:
    global _helper
    with _lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gno-vscan")
        return _helper


def scan_blocks(out: npt.NDArray[Any], block: int, work: Work) -> None:
    """``work(start, stop, into)`` over the rows of ``out`` in blocks, on up to two threads.

    ``work`` writes the results of rows ``[start, stop)`` into ``into`` (a
    view of ``out``, or the helper's own buffer) and nothing else. The last
    block also takes the rows that do not fill one, so no block is a few
    rows long (BLAS takes another path for one or two rows, whose last bits
    differ). Below :data:`SHARED_ROWS` rows every block runs on this thread.
    """
    count = len(out)
    blocks = max(1, count // block)
    spans = [(i * block, count if i == blocks - 1 else (i + 1) * block) for i in range(blocks)]
    if count < SHARED_ROWS or blocks < 2:
        for start, stop in spans:
            work(start, stop, out[start:stop])
        return
    shared = _SharedScan(spans)
    _pool().submit(shared.help, work, out.dtype)
    while (index := shared.claim(_CALLER)) is not None:
        start, stop = spans[index]
        work(start, stop, out[start:stop])
    for index in shared.take_over():
        start, stop = spans[index]
        work(start, stop, out[start:stop])
    for index, values in shared.helped():
        start, stop = spans[index]
        out[start:stop] = values


class _SharedScan:
    """Who scans which block, and what the helper handed back."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = spans
        self._state = [_FREE] * len(spans)
        self._next = 0
        self._results: dict[int, npt.NDArray[Any]] = {}
        self._lock = threading.Lock()

    def claim(self, who: int) -> int | None:
        with self._lock:
            if self._next >= len(self._spans):
                return None
            index = self._next
            self._next += 1
            self._state[index] = who
            return index

    def help(self, work: Work, dtype: np.dtype[Any]) -> None:
        """The helper's side: claim and scan blocks into its own buffers."""
        while (index := self.claim(_HELPER)) is not None:
            start, stop = self._spans[index]
            values = np.empty(stop - start, dtype=dtype)
            work(start, stop, values)
            with self._lock:
                if self._state[index] != _HELPER:  # the caller scanned it meanwhile
                    return
                self._state[index] = _HELPED
                self._results[index] = values

    def take_over(self) -> list[int]:
        """Blocks the helper is still scanning: the caller scans them again (nothing is left)."""
        with self._lock:
            self._next = len(self._spans)
            late = [i for i, state in enumerate(self._state) if state == _HELPER]
            for index in late:
                self._state[index] = _CALLER
            return late

    def helped(self) -> list[tuple[int, npt.NDArray[Any]]]:
        with self._lock:
            return list(self._results.items())
