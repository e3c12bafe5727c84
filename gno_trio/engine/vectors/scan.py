"""A search's scan of the stored vectors, shared by the calling thread and one helper thread.

Scoring a query against every stored vector is a product of the whole
matrix with one vector: memory-bound, about 0.1 ms per 1,000 rows of 512
float32 on one core here, and no exact method reads less (the int8 codes
need a conversion that costs as much as the bytes it saves). BLAS is held
to one thread (see :mod:`.blas`), so the scan is cut into blocks here and a
second core, when one is free, takes some of them.

The caller never waits for the helper. Blocks are claimed one at a time,
the caller claiming too; when none is left, a block the helper is still
on (it lost its core on a busy machine, or it is finishing another
search's block) is scanned again by the caller, and the helper's late
result is dropped. A block's result depends only on its own rows, never on
which thread scanned it, so the answer is the same bits either way.

Whether sharing pays is measured, not assumed: a shared scan pays off when
it took less wall time than the caller's own CPU time per block says the
scan would have taken alone. While it does not (every core busy, or the
threads contending for the interpreter lock), scans run alone (see
:class:`_Pacing`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import numpy as np
import numpy.typing as npt

# Below this many rows one thread is done before a helper could join in.
SHARED_ROWS: Final = 4096
# A shared scan pays off when it took less than this share of the time alone.
_PAYOFF: Final = 0.85
_FREE, _HELPER, _HELPED, _CALLER = range(4)

_lock = threading.Lock()
_helper: ThreadPoolExecutor | None = None

Work = Callable[[int, npt.NDArray[Any]], None]


def _pool() -> ThreadPoolExecutor:
    global _helper
    with _lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gno-vscan")
        return _helper


def share(targets: Sequence[npt.NDArray[Any]], work: Work) -> None:
    """``work(i, into)`` for each part ``i``, on this thread and the helper.

    ``work`` writes part ``i``'s result into ``into``, and nothing else:
    ``targets[i]`` itself when this thread does it, a buffer of its shape
    when the helper does (copied into ``targets[i]`` here). Parts should
    cost about the same (the pay-off estimate assumes so).
    """
    if len(targets) < 2 or not _pacing.allows():
        for index, target in enumerate(targets):
            work(index, target)
        return
    started = time.perf_counter()
    parts = _Parts(len(targets))
    _pool().submit(parts.help, work, [(t.shape, t.dtype) for t in targets])
    own, own_cpu = 0, 0.0
    while (claimed := parts.claim(_CALLER)) is not None:
        cpu = time.thread_time()
        work(claimed, targets[claimed])
        own, own_cpu = own + 1, own_cpu + time.thread_time() - cpu
    late = parts.take_over()
    for index in late:
        work(index, targets[index])
    helped = parts.helped()
    for index, values in helped:
        targets[index][...] = values
    alone = own_cpu / max(1, own) * len(targets)  # what this thread alone would have taken
    wall = time.perf_counter() - started
    _pacing.record(paid_off=bool(helped) and not late and wall < _PAYOFF * alone)


def scan_blocks(
    out: npt.NDArray[Any], block: int, work: Callable[[int, int, npt.NDArray[Any]], None]
) -> None:
    """``work(start, stop, into)`` over the rows of ``out`` in blocks (see :func:`share`).

    The last block also takes the rows that do not fill one, so no block is
    a few rows long (BLAS takes another path for one or two rows, whose last
    bits differ). Below :data:`SHARED_ROWS` rows every block runs here.
    """
    count = len(out)
    blocks = max(1, count // block)
    spans = [(i * block, count if i == blocks - 1 else (i + 1) * block) for i in range(blocks)]
    if count < SHARED_ROWS:
        for start, stop in spans:
            work(start, stop, out[start:stop])
        return
    share([out[start:stop] for start, stop in spans], lambda i, into: work(*spans[i], into))


class _Pacing:
    """Whether to ask the helper at all: not while asking has not paid off.

    On a machine whose cores are all busy the helper starts late, competes
    with the caller for a core, or its part is done twice; sharing then
    only costs. After each call that did not pay off the next 1, 2, 4 ... 64
    calls work alone; one that paid off resets that. So a busy machine pays
    for one try in 64 calls, and a quiet one shares every call.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._skip = 0
        self._penalty = 0

    def allows(self) -> bool:
        with self._lock:
            if self._skip > 0:
                self._skip -= 1
                return False
            return True

    def record(self, *, paid_off: bool) -> None:
        with self._lock:
            if paid_off:
                self._penalty = 0
            else:
                self._penalty = min(_MAX_PENALTY, max(1, self._penalty * 2))
                self._skip = self._penalty


_MAX_PENALTY: Final = 64
_pacing = _Pacing()


class _Parts:
    """Who does which part, and what the helper handed back."""

    def __init__(self, count: int) -> None:
        self._state = [_FREE] * count
        self._next = 0
        self._results: dict[int, npt.NDArray[Any]] = {}
        self._lock = threading.Lock()

    def claim(self, who: int) -> int | None:
        with self._lock:
            if self._next >= len(self._state):
                return None
            index = self._next
            self._next += 1
            self._state[index] = who
            return index

    def help(self, work: Work, shapes: list[tuple[tuple[int, ...], np.dtype[Any]]]) -> None:
        """The helper's side: claim parts and compute them into its own buffers."""
        while (index := self.claim(_HELPER)) is not None:
            values = np.empty(*shapes[index])
            work(index, values)
            with self._lock:
                if self._state[index] != _HELPER:  # the caller did it meanwhile
                    return
                self._state[index] = _HELPED
                self._results[index] = values

    def take_over(self) -> list[int]:
        """Parts the helper is still on: the caller does them again (none is left to claim)."""
        with self._lock:
            self._next = len(self._state)
            late = [i for i, state in enumerate(self._state) if state == _HELPER]
            for index in late:
                self._state[index] = _CALLER
            return late

    def helped(self) -> list[tuple[int, npt.NDArray[Any]]]:
        with self._lock:
            return list(self._results.items())
