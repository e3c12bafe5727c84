"""The in-memory copy of one model's vectors, and nearest-neighbour search over it.

Each process keeps, per index file and model, the int8 vectors as one
matrix (n x d bytes), their unit-length factors, a 1-bit sign sketch of each
(d / 8 bytes) and which chunk each row is. For 100,000 chunks of 512
dimensions that is about 59 MB. The copy follows the database cheaply:
before each search two indexed lookups tell whether rows were added (their
ids only grow; only the new ones are read) or deleted (the model's
``generation`` moved; everything is re-read).

Search is exact up to :data:`EXACT_ROWS` candidate rows: one int8 x float32
product per block of rows. Beyond that, the sign sketches are compared first
(Hamming distance over 64-bit words, a few milliseconds for 100,000 rows)
and only the closest :func:`shortlist_size` rows are scored exactly, which
keeps a search at 100,000 chunks within a few tens of milliseconds.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.vectors.blas import single_threaded
from gno_trio.engine.vectors.embedder import EMBED_DIMENSION_MISMATCH
from gno_trio.engine.vectors.storage import ModelRow
from gno_trio.errors import GnoError

EXACT_ROWS: Final = 32_768
# Up to this many rows a float32 copy (32 MB at most) is kept as well: the
# product then needs no int8 conversion, a few times faster on small indexes.
DENSE_ROWS: Final = 16_384
_BLOCK_ROWS: Final = 8192
_MIN_SHORTLIST: Final = 4096


def shortlist_size(rows: int, wanted: int) -> int:
    """How many sketch-nearest rows are scored exactly when the corpus is large."""
    return min(rows, max(_MIN_SHORTLIST, rows // 64, wanted * 64))


@dataclass(slots=True)
class VectorMatrix:
    """A consistent snapshot of one model's vectors (rows ``[0, size)``)."""

    dimension: int
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    sketch: npt.NDArray[np.uint64]
    mirror_of: npt.NDArray[np.int32]
    seqs: npt.NDArray[np.int32]
    parts: npt.NDArray[np.int16]
    mirrors: list[str]
    mirror_index: dict[str, int]
    size: int
    dense: npt.NDArray[np.float32] | None = None

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (the capacity, not just the used rows)."""
        return int(
            self.codes.nbytes
            + self.scales.nbytes
            + self.sketch.nbytes
            + self.mirror_of.nbytes
            + self.seqs.nbytes
            + self.parts.nbytes
            + (self.dense.nbytes if self.dense is not None else 0)
        )

    def rows_of(self, mirror: str) -> npt.NDArray[np.intp]:
        index = self.mirror_index.get(mirror)
        if index is None:
            return np.zeros(0, dtype=np.intp)
        return np.flatnonzero(self.mirror_of[: self.size] == index)

    def rows_of_mirrors(self, mirrors: Sequence[str]) -> npt.NDArray[np.intp]:
        wanted = np.zeros(len(self.mirrors) + 1, dtype=bool)
        for mirror in mirrors:
            index = self.mirror_index.get(mirror)
            if index is not None:
                wanted[index] = True
        return np.flatnonzero(wanted[self.mirror_of[: self.size]])

    def vectors(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Rows as float32 unit vectors."""
        if self.dense is not None:
            return self.dense[rows]
        block: npt.NDArray[np.float32] = self.codes[rows].astype(np.float32)
        block *= self.scales[rows, None]
        return block

    def scores(
        self, query: npt.NDArray[np.float32], rows: npt.NDArray[np.intp] | None
    ) -> npt.NDArray[np.float32]:
        """Cosine of ``query`` with each row (all rows when ``rows`` is None)."""
        if self.dense is not None:
            dense = self.dense[: self.size] if rows is None else self.dense[rows]
            result: npt.NDArray[np.float32] = dense @ query
            return result
        count = self.size if rows is None else len(rows)
        out = np.empty(count, dtype=np.float32)
        for start in range(0, count, _BLOCK_ROWS):
            stop = min(count, start + _BLOCK_ROWS)
            if rows is None:
                block = self.codes[start:stop].astype(np.float32)
                out[start:stop] = (block @ query) * self.scales[start:stop]
            else:
                part = rows[start:stop]
                out[start:stop] = (self.codes[part].astype(np.float32) @ query) * self.scales[part]
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
        candidates = np.arange(self.size, dtype=np.intp) if rows is None else rows
        if len(candidates) == 0 or wanted <= 0:
            return []
        if len(candidates) > EXACT_ROWS:
            short = shortlist_size(len(candidates), wanted)
            distance = self._hamming(query, candidates)
            keep = np.argpartition(distance, short - 1)[:short]
            candidates = candidates[keep]
        cosine = self.scores(query, candidates)
        take = min(wanted, len(candidates))
        top = np.argpartition(-cosine, take - 1)[:take]
        top = top[np.lexsort((candidates[top], -cosine[top]))]
        return [(int(candidates[i]), float(cosine[i])) for i in top]

    def _hamming(
        self, query: npt.NDArray[np.float32], rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.uint16]:
        sketch = _sketch(query[None, :])[0]
        words = self.sketch[rows] if len(rows) != self.size else self.sketch[: self.size]
        counts = np.bitwise_count(np.bitwise_xor(words, sketch))
        total: npt.NDArray[np.uint16] = counts.sum(axis=1, dtype=np.uint16)
        return total


def _sketch(vectors: npt.NDArray[np.floating] | npt.NDArray[np.int8]) -> npt.NDArray[np.uint64]:
    """One sign bit per dimension, packed into 64-bit words (dimension padded to 64)."""
    bits = np.packbits(vectors > 0, axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    packed: npt.NDArray[np.uint64] = np.ascontiguousarray(bits).view(np.uint64)
    return packed


@dataclass(slots=True)
class _Entry:
    """The growing arrays behind the snapshots of one (index file, model)."""

    model: ModelRow
    generation: int = -1
    last_id: int = 0
    size: int = 0
    codes: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros((0, 0), np.int8))
    scales: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, np.float32))
    sketch: npt.NDArray[np.uint64] = field(default_factory=lambda: np.zeros((0, 0), np.uint64))
    mirror_of: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    seqs: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    parts: npt.NDArray[np.int16] = field(default_factory=lambda: np.zeros(0, np.int16))
    dense: npt.NDArray[np.float32] | None = None
    mirrors: list[str] = field(default_factory=list)
    mirror_index: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, generation: int) -> None:
        dim = self.model.dimension
        self.generation = generation
        self.last_id = 0
        self.size = 0
        self.codes = np.zeros((0, dim), np.int8)
        self.scales = np.zeros(0, np.float32)
        self.sketch = np.zeros((0, (dim + 63) // 64), np.uint64)
        self.mirror_of = np.zeros(0, np.int32)
        self.seqs = np.zeros(0, np.int32)
        self.parts = np.zeros(0, np.int16)
        self.dense = np.zeros((0, dim), np.float32)
        self.mirrors = []
        self.mirror_index = {}

    def _reserve(self, extra: int) -> None:
        need = self.size + extra
        if need <= len(self.scales):
            return
        capacity = max(need, int(len(self.scales) * 1.5) + 1024)

        def grow(array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
            bigger = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            bigger[: self.size] = array[: self.size]
            return bigger

        self.codes = grow(self.codes)  # type: ignore[assignment]
        self.scales = grow(self.scales)  # type: ignore[assignment]
        self.sketch = grow(self.sketch)  # type: ignore[assignment]
        self.mirror_of = grow(self.mirror_of)  # type: ignore[assignment]
        self.seqs = grow(self.seqs)  # type: ignore[assignment]
        self.parts = grow(self.parts)  # type: ignore[assignment]
        if self.dense is not None:
            self.dense = grow(self.dense) if capacity <= DENSE_ROWS else None  # type: ignore[assignment]

    def append(self, rows: list[tuple[int, str, int, int, bytes, float]]) -> None:
        dim = self.model.dimension
        kept = [r for r in rows if len(r[4]) == dim]
        if rows:
            self.last_id = max(self.last_id, max(r[0] for r in rows))
        if not kept:
            return
        self._reserve(len(kept))
        start, stop = self.size, self.size + len(kept)
        codes = np.frombuffer(b"".join(r[4] for r in kept), dtype=np.int8).reshape(-1, dim)
        self.codes[start:stop] = codes
        self.scales[start:stop] = np.fromiter((r[5] for r in kept), np.float32, len(kept))
        self.sketch[start:stop] = _sketch(codes)
        self.parts[start:stop] = np.fromiter((r[3] for r in kept), np.int16, len(kept))
        if self.dense is not None:
            self.dense[start:stop] = codes.astype(np.float32) * self.scales[start:stop, None]
        for offset, (_, mirror, seq, _, _, _) in enumerate(kept):
            index = self.mirror_index.get(mirror)
            if index is None:
                index = len(self.mirrors)
                self.mirrors.append(mirror)
                self.mirror_index[mirror] = index
            self.mirror_of[start + offset] = index
            self.seqs[start + offset] = seq
        self.size = stop

    def snapshot(self) -> VectorMatrix:
        return VectorMatrix(
            dimension=self.model.dimension,
            codes=self.codes,
            scales=self.scales,
            sketch=self.sketch,
            mirror_of=self.mirror_of,
            seqs=self.seqs,
            parts=self.parts,
            mirrors=self.mirrors,
            mirror_index=self.mirror_index,
            size=self.size,
            dense=self.dense,
        )


_entries: dict[tuple[str, int, str], _Entry] = {}
_entries_lock = threading.Lock()
_LOAD_PAGE: Final = 20_000


def _database_file(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else ""


def _load(conn: sqlite3.Connection, entry: _Entry) -> None:
    """Bring ``entry`` up to date with the database (the caller holds the entry lock)."""
    row = conn.execute(
        "SELECT generation FROM embed_models WHERE id = ?", (entry.model.id,)
    ).fetchone()
    generation = int(row[0]) if row is not None else -1
    if generation != entry.generation:
        entry.reset(generation)
    while True:
        page = conn.execute(
            "SELECT id, mirror_hash, seq, part, codes, scale FROM content_vectors "
            "WHERE model_id = ? AND id > ? ORDER BY id LIMIT ?",
            (entry.model.id, entry.last_id, _LOAD_PAGE),
        ).fetchall()
        entry.append(
            [(int(r[0]), str(r[1]), int(r[2]), int(r[3]), bytes(r[4]), float(r[5])) for r in page]
        )
        if len(page) < _LOAD_PAGE:
            return


def matrix_for(conn: sqlite3.Connection, model: ModelRow) -> VectorMatrix:
    """A current snapshot of ``model``'s vectors in this index.

    Read inside one read transaction (when the caller has none open), so a
    deletion between the generation check and the rows cannot be missed.
    """
    single_threaded()
    key = (_database_file(conn), model.id, model.key)
    with _entries_lock:
        entry = _entries.get(key)
        if entry is None or entry.model.dimension != model.dimension:
            entry = _Entry(model)
            _entries[key] = entry
    own_transaction = not conn.in_transaction
    with entry.lock:
        if own_transaction:
            conn.execute("BEGIN")
        try:
            _load(conn, entry)
        finally:
            if own_transaction:
                conn.execute("COMMIT")
        return entry.snapshot()


def forget(conn: sqlite3.Connection) -> None:
    """Drop this index's cached vectors (after the database file was replaced)."""
    path = _database_file(conn)
    with _entries_lock:
        for key in [k for k in _entries if k[0] == path]:
            del _entries[key]
