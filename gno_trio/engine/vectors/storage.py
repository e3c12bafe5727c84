"""Vector rows in the index's SQLite file: models, quantised vectors, backlog counts.

Why in SQLite and not an index file beside it: the stdlib ``sqlite3`` here
cannot load ``sqlite-vec``, and a separate ANN file would have to be kept in
step with the database across crashes. Rows in the same file are written in
the same transactions as everything else, so an interrupted embed leaves
whole batches or nothing, and a reader never sees half a batch. Search runs
in memory over a copy of the rows (:mod:`gno_trio.engine.vectors.index`).

Vectors are stored as int8 (512 bytes for the bundled model's 512
dimensions, a quarter of float32) with one float that restores unit length;
rankings by the quantised cosine match float32 ones (see the benchmarks).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from gno_trio.engine.vectors.chunktext import WindowPlace
from gno_trio.engine.vectors.embedder import EMBED_DIMENSION_MISMATCH, ModelIdentity
from gno_trio.errors import GnoError

_QUANT_MAX = 127.0


@dataclass(frozen=True, slots=True)
class ModelRow:
    id: int
    key: str
    uri: str
    dimension: int
    generation: int


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _row(row: sqlite3.Row) -> ModelRow:
    return ModelRow(int(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]))


def find_model(conn: sqlite3.Connection, key: str) -> ModelRow | None:
    row = conn.execute(
        "SELECT id, model_key, uri, dimension, generation FROM embed_models WHERE model_key = ?",
        (key,),
    ).fetchone()
    return _row(row) if row is not None else None


def register_model(conn: sqlite3.Connection, identity: ModelIdentity, dimension: int) -> ModelRow:
    """The model's row, created on first use; a different dimension is an error.

    Runs inside the caller's write transaction.
    """
    found = find_model(conn, identity.key)
    if found is None:
        conn.execute(
            "INSERT INTO embed_models (model_key, uri, version, dimension, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (identity.key, identity.uri, identity.version, dimension, now_iso()),
        )
        found = find_model(conn, identity.key)
        assert found is not None
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
    conn: sqlite3.Connection,
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
    rows: list[tuple[object, ...]] = []
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
                (model.id, mirror, seq, part, codes[i].tobytes(), float(scales[i]), at)
                + (_NO_PLACE if place is None else _place_columns(place))
            )
    rows.extend((model.id, mirror, seq, 0, b"", 0.0, at, 0, 0, 0, 0) for mirror, seq in blank)
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO content_vectors (model_id, mirror_hash, seq, part, codes, "
        "scale, embedded_at, byte_start, byte_length, start_line, end_line) "
        "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 WHERE EXISTS "
        "(SELECT 1 FROM content_chunks WHERE mirror_hash = ?2 AND seq = ?3)",
        rows,
    )
    return conn.total_changes - before


_NO_PLACE: tuple[None, None, None, None] = (None, None, None, None)


def _place_columns(place: WindowPlace) -> tuple[int, int, int, int]:
    return (place.byte_start, place.byte_length, place.start_line, place.end_line)


def unplaced_page(
    conn: sqlite3.Connection, model_id: int, after_id: int, limit: int
) -> list[tuple[int, str, int, int, bool]]:
    """Rows of ``model_id`` stored without a place, by id: ``(id, mirror, seq, part, blank)``."""
    return [
        (int(r[0]), str(r[1]), int(r[2]), int(r[3]), not r[4])
        for r in conn.execute(
            "SELECT id, mirror_hash, seq, part, length(codes) FROM content_vectors "
            "WHERE model_id = ? AND byte_start IS NULL AND id > ? ORDER BY id LIMIT ?",
            (model_id, after_id, limit),
        )
    ]


def set_places(conn: sqlite3.Connection, places: Sequence[tuple[int, WindowPlace]]) -> None:
    """Record the place of each ``(row id, place)`` (inside the caller's transaction)."""
    conn.executemany(
        "UPDATE content_vectors SET byte_start = ?, byte_length = ?, start_line = ?, "
        "end_line = ? WHERE id = ?",
        [(*_place_columns(place), row_id) for row_id, place in places],
    )


def bump_generation(conn: sqlite3.Connection, model_ids: Iterable[int]) -> None:
    for model_id in set(model_ids):
        conn.execute(
            "UPDATE embed_models SET generation = generation + 1 WHERE id = ?", (model_id,)
        )


# Active chunks of some collections, optionally missing a vector of one model.
_ACTIVE_MIRRORS = "SELECT DISTINCT mirror_hash FROM documents WHERE active = 1 {where}"


def _collection_filter(collections: Sequence[str] | None) -> tuple[str, list[object]]:
    if not collections:
        return "", []
    marks = ", ".join("?" for _ in collections)
    return f"AND collection IN ({marks})", list(collections)


def backlog_count(
    conn: sqlite3.Connection, model_id: int | None, collections: Sequence[str] | None = None
) -> int:
    """Chunks of active documents that have no vector of the model (all, with no model)."""
    where, params = _collection_filter(collections)
    mirrors = _ACTIVE_MIRRORS.format(where=where)
    if model_id is None:
        sql = f"SELECT COUNT(*) FROM content_chunks c WHERE c.mirror_hash IN ({mirrors})"
        return int(conn.execute(sql, params).fetchone()[0])
    sql = (
        f"SELECT COUNT(*) FROM content_chunks c WHERE c.mirror_hash IN ({mirrors}) "
        f"AND NOT EXISTS (SELECT 1 FROM content_vectors v WHERE v.mirror_hash = c.mirror_hash "
        f"AND v.seq = c.seq AND v.model_id = ?)"
    )
    return int(conn.execute(sql, [*params, model_id]).fetchone()[0])


def backlog_documents(
    conn: sqlite3.Connection, model_id: int | None, collections: Sequence[str] | None = None
) -> int:
    """Active documents with at least one chunk that has no vector of the model."""
    where, params = _collection_filter(collections)
    missing = (
        ""
        if model_id is None
        else "AND NOT EXISTS (SELECT 1 FROM content_vectors v WHERE v.mirror_hash = c.mirror_hash "
        "AND v.seq = c.seq AND v.model_id = ?)"
    )
    sql = (
        f"SELECT COUNT(*) FROM documents WHERE active = 1 {where} AND EXISTS "
        f"(SELECT 1 FROM content_chunks c WHERE c.mirror_hash = documents.mirror_hash {missing})"
    )
    extra = [] if model_id is None else [model_id]
    return int(conn.execute(sql, [*params, *extra]).fetchone()[0])


def embedded_count(
    conn: sqlite3.Connection, model_id: int | None, collections: Sequence[str] | None = None
) -> int:
    """Chunks of active documents that have a vector of the model."""
    if model_id is None:
        return 0
    where, params = _collection_filter(collections)
    mirrors = _ACTIVE_MIRRORS.format(where=where)
    sql = (
        f"SELECT COUNT(*) FROM content_chunks c WHERE c.mirror_hash IN ({mirrors}) "
        f"AND EXISTS (SELECT 1 FROM content_vectors v WHERE v.mirror_hash = c.mirror_hash "
        f"AND v.seq = c.seq AND v.model_id = ?)"
    )
    return int(conn.execute(sql, [*params, model_id]).fetchone()[0])


def backlog_page(
    conn: sqlite3.Connection,
    model_id: int | None,
    collections: Sequence[str] | None,
    after_chunk_id: int,
    limit: int,
) -> list[tuple[int, str, int, str | None]]:
    """The next chunks needing a vector, by chunk id: ``(id, mirror_hash, seq, title)``."""
    where, params = _collection_filter(collections)
    mirrors = _ACTIVE_MIRRORS.format(where=where)
    missing = (
        "AND NOT EXISTS (SELECT 1 FROM content_vectors v WHERE v.mirror_hash = c.mirror_hash "
        "AND v.seq = c.seq AND v.model_id = ?)"
        if model_id is not None
        else ""
    )
    sql = (
        f"SELECT c.id, c.mirror_hash, c.seq, (SELECT d.title FROM documents d WHERE "
        f"d.mirror_hash = c.mirror_hash AND d.active = 1 ORDER BY d.id LIMIT 1) "
        f"FROM content_chunks c WHERE c.id > ? AND c.mirror_hash IN ({mirrors}) {missing} "
        f"ORDER BY c.id LIMIT ?"
    )
    args: list[object] = [after_chunk_id, *params]
    if model_id is not None:
        args.append(model_id)
    args.append(limit)
    return [(int(r[0]), str(r[1]), int(r[2]), r[3]) for r in conn.execute(sql, args)]


def delete_orphans(conn: sqlite3.Connection) -> int:
    """Drop vectors whose chunk no longer exists (its mirror was collected)."""
    affected = [
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT model_id FROM content_vectors v WHERE NOT EXISTS "
            "(SELECT 1 FROM content_chunks c WHERE c.mirror_hash = v.mirror_hash "
            "AND c.seq = v.seq)"
        )
    ]
    if not affected:
        return 0
    cursor = conn.execute(
        "DELETE FROM content_vectors WHERE NOT EXISTS (SELECT 1 FROM content_chunks c "
        "WHERE c.mirror_hash = content_vectors.mirror_hash AND c.seq = content_vectors.seq)"
    )
    bump_generation(conn, affected)
    return int(cursor.rowcount)


def clear_collection(
    conn: sqlite3.Connection, collection: str, *, mode: str, current_key: str | None
) -> dict[str, object]:
    """Delete a collection's vectors: of stale models only, or ``all`` of them.

    Runs inside the caller's transaction. Vectors of chunks that an active
    document of another collection shares (same content) are kept and counted.
    """
    own = "SELECT DISTINCT mirror_hash FROM documents WHERE collection = ?"
    shared = (
        "SELECT DISTINCT mirror_hash FROM documents WHERE collection != ? AND active = 1 "
        "AND mirror_hash IS NOT NULL"
    )
    stale = "" if mode == "all" else "AND m.model_key IS NOT ?"
    base = (
        f"FROM content_vectors v JOIN embed_models m ON m.id = v.model_id "
        f"WHERE v.mirror_hash IN ({own}) {stale}"
    )
    params: list[object] = [collection] if mode == "all" else [collection, current_key]
    protected = int(
        conn.execute(
            f"SELECT COUNT(*) {base} AND v.mirror_hash IN ({shared})", [*params, collection]
        ).fetchone()[0]
    )
    doomed = conn.execute(
        f"SELECT v.id, m.id, m.model_key {base} AND v.mirror_hash NOT IN ({shared})",
        [*params, collection],
    ).fetchall()
    ids = [int(r[0]) for r in doomed]
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ", ".join("?" for _ in part)
        conn.execute(f"DELETE FROM content_vectors WHERE id IN ({marks})", part)
    bump_generation(conn, (int(r[1]) for r in doomed))
    return {
        "collection": collection,
        "mode": mode,
        "deletedVectors": len(ids),
        "deletedModels": sorted({str(r[2]) for r in doomed}),
        "protectedSharedVectors": protected,
    }
