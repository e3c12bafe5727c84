"""The in-memory vector copy on a large index: the shortlist path and incremental loads.

Vectors here are synthetic (random topics, four windows per chunk), written
through the storage functions into a real SQLite file, so that more rows
than the exact-search limit exist without embedding forty thousand texts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from gno_trio.engine.store.database import connect, migrate, write_transaction
from gno_trio.engine.store.vectors import SqliteVectors
from gno_trio.engine.vectors.cache import matrix_for
from gno_trio.engine.vectors.embedder import ModelIdentity
from gno_trio.engine.vectors.index import EXACT_ROWS
from gno_trio.engine.vectors.storage import register_model, store

DIM = 512
CHUNKS = EXACT_ROWS // 4 + 2000  # past the exact-search limit
WINDOWS = 4


def _vectors(rng: np.random.Generator, chunks: int) -> npt.NDArray[np.float32]:
    topics = rng.standard_normal((chunks, 1, DIM), dtype=np.float32)
    windows = topics + 0.6 * rng.standard_normal((chunks, WINDOWS, DIM), dtype=np.float32)
    flat = windows.reshape(-1, DIM)
    flat /= np.linalg.norm(flat, axis=1, keepdims=True)
    return flat


def _chunks(conn: object, first: int, count: int) -> None:
    """Chunk rows for synthetic mirrors (vectors are stored only for chunks that exist)."""
    conn.executemany(  # type: ignore[attr-defined]
        "INSERT INTO content_chunks (mirror_hash, seq, pos, length, start_line, end_line, "
        "token_count) VALUES (?, 0, 0, 0, 1, 1, 0)",
        [(f"{c:064x}",) for c in range(first, first + count)],
    )


def test_large_index_search_finds_exact_neighbours_and_follows_changes(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    conn = connect(tmp_path / "index.sqlite")
    migrate(conn)
    vectors = _vectors(rng, CHUNKS)
    keys = [(f"{c:064x}", 0, w) for c in range(CHUNKS) for w in range(WINDOWS)]
    with write_transaction(conn):
        _chunks(conn, 0, CHUNKS + 1)
        model = register_model(SqliteVectors(conn), ModelIdentity("test:random", "1", DIM), DIM)
        store(SqliteVectors(conn), model, keys, vectors)
    matrix = matrix_for(conn, model)
    assert matrix.size == CHUNKS * WINDOWS > EXACT_ROWS and matrix.chunks == CHUNKS
    assert matrix.dense_codes is None  # too large for the distinct copy
    hits = 0
    for row in rng.integers(0, matrix.size, 20):
        query = vectors[row] + 0.02 * rng.standard_normal(DIM, dtype=np.float32)
        query /= np.linalg.norm(query)
        found = matrix.nearest(query, 10)
        hits += found[0][0] == row
        assert [r for r, _ in found] == sorted(
            (r for r, _ in found), key=lambda r: -float(matrix.vectors(np.array([r]))[0] @ query)
        )
    assert hits >= 19
    # Within a subset of rows (a filter), only those rows come back.
    allowed = np.arange(0, matrix.size, 8, dtype=np.intp)
    target = int(allowed[123])
    found = matrix.nearest(vectors[target], 5, allowed)
    assert found[0][0] == target and all(r % 8 == 0 for r, _ in found)
    # New rows are picked up incrementally, a deletion triggers a reload.
    extra = _vectors(rng, 1)
    with write_transaction(conn):
        store(SqliteVectors(conn), model, [(f"{CHUNKS:064x}", 0, w) for w in range(WINDOWS)], extra)
    grown = matrix_for(conn, model)
    assert grown.size == matrix.size + WINDOWS and grown.chunks == CHUNKS + 1
    assert grown.nearest(extra[2], 1)[0][0] == matrix.size + 2
    assert matrix.size == CHUNKS * WINDOWS  # the older snapshot is unchanged
    with write_transaction(conn):
        conn.execute("DELETE FROM content_vectors WHERE mirror_hash = ?", (f"{0:064x}",))
        SqliteVectors(conn).bump_generation([model.id])
    reloaded = matrix_for(conn, model)
    assert reloaded.size == grown.size - WINDOWS and reloaded.chunks == CHUNKS
    assert f"{0:064x}" not in reloaded.mirror_index
    nearest_row = reloaded.nearest(vectors[0], 1)[0][0]
    assert reloaded.mirrors[int(reloaded.mirror_of[nearest_row])] != f"{0:064x}"
    conn.close()
