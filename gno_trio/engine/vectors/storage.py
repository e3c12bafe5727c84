"""What is written of vectors: quantised rows, a model's dimension, a collection's clearing.

Vectors are stored as int8 (512 bytes for the bundled model's 512
dimensions, a quarter of float32) with one float that restores unit length;
rankings by the quantised cosine match float32 ones (see the benchmarks).
The rows are kept by a :class:`~gno_trio.engine.store.vectors.VectorStore`
(in the index's own file, written in the same transactions as everything
else); search runs in memory over a copy of them
(:mod:`gno_trio.engine.vectors.index`). Nothing here speaks to the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from gno_trio.engine.store.vectors import ModelRow, VectorRow, VectorStore
from gno_trio.engine.vectors.chunktext import WindowPlace
from gno_trio.engine.vectors.embedder import EMBED_DIMENSION_MISMATCH, ModelIdentity
from gno_trio.errors import GnoError

_QUANT_MAX = 127.0


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def register_model(vectors: VectorStore, identity: ModelIdentity, dimension: int) -> ModelRow:
    """The model's row, created on first use; a different dimension is an error.

    Runs inside the caller's write transaction.
    """
    found = vectors.model(identity.key)
    if found is None:
        found = vectors.add_model(
            identity.key, identity.uri, identity.version, dimension, now_iso()
        )
    if found.dimension != dimension:
        raise GnoError(
            EMBED_DIMENSION_MISMATCH,
            f"Model {identity.uri} now gives {dimension}-dimensional vectors but its stored "
            f"vectors have {found.dimension}; clear them (clear-embeddings --all) to re-embed",
        )
    return found


def quantise(
    vectors: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Unit rows as int8 codes plus the factor that makes ``codes * factor`` unit length."""
    peak = np.abs(vectors).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    codes = np.rint(vectors / peak * _QUANT_MAX).astype(np.int8)
    norms = np.linalg.norm(codes.astype(np.float32), axis=1)
    norms[norms == 0] = 1.0
    return codes, (1.0 / norms).astype(np.float32)


def store(
    into: VectorStore,
    model: ModelRow,
    keys: Sequence[tuple[str, int, int]],
    vectors: npt.NDArray[np.float32] | None,
    blank: Iterable[tuple[str, int]] = (),
    places: Sequence[WindowPlace | None] | None = None,
) -> int:
    """Insert one batch (inside the caller's transaction); returns rows written.

    ``keys`` name each vector's chunk and window (mirror_hash, seq, part),
    ``places`` where each window lies in its mirror (None: not known).
    ``blank`` chunks had no text: they get an empty row so they leave the
    backlog. A chunk another writer embedded meanwhile is left as it is, and
    a chunk that no longer exists (a sync collected it while the batch was
    being embedded) gets no row, so no vector outlives its chunk.
    """
    at = now_iso()
    rows: list[VectorRow] = []
    if vectors is not None and len(keys):
        if vectors.shape[1] != model.dimension:
            raise GnoError(
                EMBED_DIMENSION_MISMATCH,
                f"{vectors.shape[1]}-dimensional vectors for a model stored with {model.dimension}",
            )
        codes, scales = quantise(vectors)
        for i, (mirror, seq, part) in enumerate(keys):
            place = places[i] if places is not None else None
            rows.append(
                VectorRow(
                    model.id,
                    mirror,
                    seq,
                    part,
                    codes[i].tobytes(),
                    float(scales[i]),
                    at,
                    *(_NO_PLACE if place is None else place_columns(place)),
                )
            )
    rows.extend(
        VectorRow(model.id, mirror, seq, 0, b"", 0.0, at, 0, 0, 0, 0) for mirror, seq in blank
    )
    return into.add_vectors(rows)


_NO_PLACE: tuple[None, None, None, None] = (None, None, None, None)


def place_columns(place: WindowPlace) -> tuple[int, int, int, int]:
    """A window's place as the store keeps it."""
    return (place.byte_start, place.byte_length, place.start_line, place.end_line)


def clear_collection(
    vectors: VectorStore, collection: str, *, mode: str, current_key: str | None
) -> dict[str, object]:
    """Delete a collection's vectors: of stale models only, or ``all`` of them.

    Runs inside the caller's transaction. Vectors of chunks that an active
    document of another collection shares (same content) are kept and counted.
    """
    deleted, models, protected = vectors.clear_collection(
        collection, keep_model=current_key, all_models=mode == "all"
    )
    return {
        "collection": collection,
        "mode": mode,
        "deletedVectors": deleted,
        "deletedModels": models,
        "protectedSharedVectors": protected,
    }
