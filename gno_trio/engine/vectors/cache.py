"""The per-process copy of each model's vectors, kept in step with the database.

Each process holds, per index file and model, the arrays behind
:class:`~gno_trio.engine.vectors.index.VectorMatrix` snapshots. Before each
search one statement tells whether rows were added (ids only grow, so
only the new ones are read) or deleted (the model's ``generation`` moved:
everything is read again). A snapshot is a set of views on arrays that later
appends only extend past its ``size``, and that a reload replaces, so a
search never sees a half-updated copy and never blocks the next refresh.

All windows of one chunk are written in one transaction and so have
consecutive ids: they land on consecutive rows, which the chunk table
(first row, row count, sketch of the windows' sum) relies on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, read_snapshot
from gno_trio.engine.store.vectors import ModelRow, VectorStore
from gno_trio.engine.vectors.blas import single_threaded
from gno_trio.engine.vectors.distinct import DistinctRows
from gno_trio.engine.vectors.index import VectorMatrix, sketch

# Up to this many rows the distinct vectors are kept once more, as int8 codes
# (:mod:`.distinct`): at most 0.5 KB per 512-dimension row (8 MB at most),
# beside the int8 rows' 0.5 KB. A search then scans the distinct codes and
# takes the exact float32 product of the few vectors that can rank
# (VectorMatrix.nearest); past it (a
# 100,000-chunk index holds ~400,000 rows) only the int8 rows are kept and the
# sketch shortlist bounds the rows scored.
DENSE_ROWS: Final = 16_384
_LOAD_PAGE: Final = 1_024
"""Rows read and appended at a time. Each page's rows, float32 copies and sketch sums
are freed before the next: at 20,000 rows those were tens of MB a page, and the heap
they left behind stayed resident (a server with the mcp-docs vectors rested 22 MiB
larger); loading takes the same CPU in pages of 1,024."""

Row = tuple[int, str, int, int, bytes, float]  # id, mirror_hash, seq, part, codes, scale


def _empty(shape: tuple[int, ...], dtype: type[np.generic]) -> npt.NDArray[Any]:
    return np.zeros(shape, dtype=dtype)


@dataclass(slots=True)
class _Entry:
    """The growing arrays of one (index file, model)."""

    model: ModelRow
    generation: int = -1
    last_id: int = 0
    size: int = 0
    chunks: int = 0
    arrays: dict[str, npt.NDArray[Any]] = field(default_factory=dict)
    dense: DistinctRows | None = None
    mirrors: list[str] = field(default_factory=list)
    mirror_index: dict[str, int] = field(default_factory=dict)
    last_chunk: tuple[int, int] = (-1, -1)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, generation: int) -> None:
        dim = self.model.dimension
        words = (dim + 63) // 64
        self.generation = generation
        self.last_id = self.size = self.chunks = 0
        self.arrays = {
            "codes": _empty((0, dim), np.int8),
            "scales": _empty((0,), np.float32),
            "mirror_of": _empty((0,), np.int32),
            "seqs": _empty((0,), np.int32),
            "parts": _empty((0,), np.int16),
            "chunk_of": _empty((0,), np.int32),
            "chunk_start": _empty((0,), np.int32),
            "chunk_count": _empty((0,), np.int32),
            "chunk_sketch": _empty((words, 0), np.uint64),  # word-major
        }
        self.dense = DistinctRows(dim)
        self.mirrors = []
        self.mirror_index = {}
        self.last_chunk = (-1, -1)

    def _grow(self, names: tuple[str, ...], used: int, need: int) -> int:
        have = len(self.arrays[names[0]])
        if need <= have:
            return have
        capacity = max(need, int(have * 1.5) + 1024)
        for name in names:
            old = self.arrays[name]
            bigger = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            bigger[:used] = old[:used]
            self.arrays[name] = bigger
        return capacity

    def _grow_sketches(self, used: int, capacity: int) -> None:
        old = self.arrays["chunk_sketch"]
        if old.shape[1] >= capacity:
            return
        bigger = np.zeros((old.shape[0], capacity), dtype=old.dtype)
        bigger[:, :used] = old[:, :used]
        self.arrays["chunk_sketch"] = bigger

    def append(self, rows: list[Row]) -> None:
        dim = self.model.dimension
        if rows:
            self.last_id = max(self.last_id, max(r[0] for r in rows))
        kept = [r for r in rows if len(r[4]) == dim]  # empty codes: a blank chunk
        if not kept:
            return
        start, stop = self.size, self.size + len(kept)
        capacity = self._grow(
            ("codes", "scales", "mirror_of", "seqs", "parts", "chunk_of"), start, stop
        )
        if capacity > DENSE_ROWS:
            self.dense = None
        a = self.arrays
        codes = np.frombuffer(b"".join(r[4] for r in kept), dtype=np.int8).reshape(-1, dim)
        a["codes"][start:stop] = codes
        a["scales"][start:stop] = np.fromiter((r[5] for r in kept), np.float32, len(kept))
        a["parts"][start:stop] = np.fromiter((r[3] for r in kept), np.int16, len(kept))
        if self.dense is not None:
            self.dense.add(codes, a["scales"][start:stop], start)
        first_touched = self._assign_chunks(kept, start)
        self.size = stop
        self._sketch_chunks(first_touched)

    def _assign_chunks(self, kept: list[Row], start: int) -> int:
        """Mirror, seq and chunk slot of each new row; returns the first slot touched."""
        first_touched = max(0, self.chunks - 1)
        capacity = self._grow(("chunk_start", "chunk_count"), self.chunks, self.chunks + len(kept))
        self._grow_sketches(self.chunks, capacity)
        a = self.arrays
        for offset, (_, mirror, seq, _, _, _) in enumerate(kept):
            index = self.mirror_index.get(mirror)
            if index is None:
                index = len(self.mirrors)
                self.mirrors.append(mirror)
                self.mirror_index[mirror] = index
            row = start + offset
            a["mirror_of"][row] = index
            a["seqs"][row] = seq
            if (index, seq) != self.last_chunk:
                a["chunk_start"][self.chunks] = row
                a["chunk_count"][self.chunks] = 0
                self.chunks += 1
                self.last_chunk = (index, seq)
            a["chunk_of"][row] = self.chunks - 1
            a["chunk_count"][self.chunks - 1] += 1
        return first_touched

    def _sketch_chunks(self, first: int) -> None:
        """Recompute the sketches of chunk slots ``first..`` from their rows."""
        a = self.arrays
        if first >= self.chunks:
            return
        low = int(a["chunk_start"][first])
        weighted = a["codes"][low : self.size].astype(np.float32)
        weighted *= a["scales"][low : self.size, None]
        starts = a["chunk_start"][first : self.chunks].astype(np.intp) - low
        sums = np.add.reduceat(weighted, starts, axis=0)
        a["chunk_sketch"][:, first : self.chunks] = sketch(sums).T

    def snapshot(self) -> VectorMatrix:
        a = self.arrays
        return VectorMatrix(
            model_id=self.model.id,
            dimension=self.model.dimension,
            size=self.size,
            codes=a["codes"],
            scales=a["scales"],
            mirror_of=a["mirror_of"],
            seqs=a["seqs"],
            parts=a["parts"],
            chunk_of=a["chunk_of"],
            chunks=self.chunks,
            chunk_start=a["chunk_start"],
            chunk_count=a["chunk_count"],
            chunk_sketch=a["chunk_sketch"],
            mirrors=self.mirrors,
            mirror_index=self.mirror_index,
            dense_of=self.dense.of if self.dense is not None else None,
            dense_rows=self.dense.count if self.dense is not None else 0,
            dense_codes=self.dense.codes if self.dense is not None else None,
            dense_scales=self.dense.scales if self.dense is not None else None,
            dense_norms=self.dense.norms if self.dense is not None else None,
        )


_entries: dict[tuple[str, int, str], _Entry] = {}
_entries_lock = threading.Lock()


def _load(vectors: VectorStore, entry: _Entry) -> None:
    """Bring ``entry`` up to date with the database (the caller holds the entry lock)."""
    generation = vectors.generation(entry.model.id)
    generation = -1 if generation is None else generation
    if generation != entry.generation:
        entry.reset(generation)
    while True:
        page = vectors.rows_after(entry.model.id, entry.last_id, _LOAD_PAGE)
        entry.append(page)
        if len(page) < _LOAD_PAGE:
            return


def _unchanged(vectors: VectorStore, entry: _Entry) -> bool:
    """Whether ``entry`` holds every row of the model: no row deleted, none added.

    One read (so one consistent read, needing no transaction of its own):
    searches of an index nobody is writing to do nothing else.
    """
    stamp = vectors.stamp(entry.model.id)
    return stamp is not None and stamp[0] == entry.generation and stamp[1] <= entry.last_id


def matrix_for(conn: Connection, model: ModelRow) -> VectorMatrix:
    """A current snapshot of ``model``'s vectors in this index.

    Read inside one read transaction (when the caller has none open), so a
    deletion between the generation check and the rows cannot be missed.
    """
    single_threaded()
    vectors = SQLITE_STORES.vectors(conn)
    key = (vectors.database_file(), model.id, model.key)
    with _entries_lock:
        entry = _entries.get(key)
        if entry is None or entry.model.dimension != model.dimension:
            entry = _Entry(model)
            _entries[key] = entry
    with entry.lock:
        if _unchanged(vectors, entry):
            return entry.snapshot()
        with read_snapshot(conn):
            _load(vectors, entry)
        return entry.snapshot()
