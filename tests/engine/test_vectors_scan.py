"""Vector search's fast path gives the exact answer.

The exact answer is what one product over every row gives: the rows with
the highest cosine (ties: the lower row first), with those cosines. The
fast path (distinct vectors scored once, blocks, the top-k cut) must agree
with it on the rows, their order and their scores' bits, on the float32
copy and on the int8 rows, whole or filtered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.search.semantic import vector_search
from gno_trio.engine.store.database import connect, migrate, write_transaction
from gno_trio.engine.store.vectors import SqliteVectors
from gno_trio.engine.vectors import cache
from gno_trio.engine.vectors.bundled import BUNDLED_URI
from gno_trio.engine.vectors.distinct import padded
from gno_trio.engine.vectors.embedder import ModelIdentity
from gno_trio.engine.vectors.embedding import embed_backlog
from gno_trio.engine.vectors.index import VectorMatrix
from gno_trio.engine.vectors.models import backend_for
from gno_trio.engine.vectors.storage import register_model, store
from tests.conftest import write_corpus

DIM = 512
WANTED = 40


def _stored_matrix(path: Path, rows: int, seed: int) -> VectorMatrix:
    """``rows`` synthetic unit vectors (chunks of up to four windows) through storage and cache."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((rows, DIM), dtype=np.float32)
    vectors[::97] = vectors[5]  # duplicates: exact ties between rows far apart
    return _stored(path, vectors)


def _stored(path: Path, vectors: npt.NDArray[np.float32]) -> VectorMatrix:
    """These vectors (normalised) as windows of chunks of four, through storage and cache."""
    rows = len(vectors)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [(f"{row // 4:064x}", 0, row % 4) for row in range(rows)]
    conn = connect(path)
    migrate(conn)
    with write_transaction(conn):
        conn.executemany(
            "INSERT INTO content_chunks (mirror_hash, seq, pos, length, start_line, end_line, "
            "token_count) VALUES (?, 0, 0, 0, 1, 1, 0)",
            [(f"{chunk:064x}",) for chunk in range(-(-rows // 4))],
        )
        model = register_model(SqliteVectors(conn), ModelIdentity("test:random", "1", DIM), DIM)
        store(SqliteVectors(conn), model, keys, vectors)
    matrix = cache.matrix_for(conn, model)
    conn.close()
    assert matrix.size == rows
    return matrix


def _one_product(
    matrix: VectorMatrix, query: npt.NDArray[np.float32], picked: npt.NDArray[np.intp]
) -> npt.NDArray[np.float32]:
    """The rows' float32 vectors, in order, in one product over whole row groups.

    (BLAS scores the last few rows of a product by another path whose last
    bits differ; padding to whole groups gives every row the bits it would
    have anywhere.)
    """
    whole = np.zeros((padded(len(picked)), DIM), dtype=np.float32)
    if matrix.dense_codes is not None:
        whole[: len(picked)] = matrix.vectors(picked)
        product: npt.NDArray[np.float32] = (whole @ query)[: len(picked)]
        return product
    whole[: len(picked)] = matrix.codes[picked]
    return (whole @ query)[: len(picked)] * matrix.scales[picked]  # type: ignore[no-any-return]


def _exact(
    matrix: VectorMatrix,
    query: npt.NDArray[np.float32],
    rows: npt.NDArray[np.intp] | None,
    wanted: int = WANTED,
) -> list[tuple[int, float]]:
    """One product over every candidate row, then a full sort: the reference answer."""
    picked = np.arange(matrix.size) if rows is None else rows
    cosine = _one_product(matrix, query, picked)
    order = np.lexsort((picked, -cosine))[:wanted]
    return [(int(picked[i]), float(cosine[i])) for i in order]


def _agree(found: list[tuple[int, float]], exact: list[tuple[int, float]]) -> None:
    assert found == exact


# Row counts: below the shared-scan size, a whole number of blocks, one and
# three rows past a block (the tail joins the last block), and int8 rows
# only (past the distinct copy's limit).
@pytest.mark.parametrize("rows", [3001, 9216, 9217, 10_243, cache.DENSE_ROWS + 1027])
def test_the_fast_path_agrees_with_one_product_over_every_row(tmp_path: Path, rows: int) -> None:
    matrix = _stored_matrix(tmp_path / "index.sqlite", rows, seed=rows)
    assert (matrix.dense_codes is None) == (rows > cache.DENSE_ROWS)
    rng = np.random.default_rng(1)
    filtered = np.sort(rng.choice(rows, rows * 3 // 5, replace=False)).astype(np.intp)
    queries = [matrix.vectors(np.array([5]))[0]]  # has exact duplicates (rows 0, 97, ...)
    for row in rng.integers(0, rows, 6):
        query = matrix.vectors(np.array([row]))[0] + 0.05 * rng.standard_normal(DIM)
        queries.append((query / np.linalg.norm(query)).astype(np.float32))
    for query in queries:
        every = np.arange(rows, dtype=np.intp)  # the very same bits as one product:
        np.testing.assert_array_equal(matrix.scores(query), _one_product(matrix, query, every))
        np.testing.assert_array_equal(
            matrix.scores(query, filtered), _one_product(matrix, query, filtered)
        )
        _agree(matrix.nearest(query, WANTED), _exact(matrix, query, None))
        _agree(matrix.nearest(query, WANTED, filtered), _exact(matrix, query, filtered))
    tied = matrix.nearest(queries[0], 4)
    assert [row for row, _ in tied] == [0, 5, 97, 194]  # equal scores: lower rows first
    if matrix.dense_codes is not None:  # a repeated vector is held (and scored) once
        assert matrix.dense_rows == rows - len(range(0, rows, 97))


def test_a_small_index_in_memory_costs_less_than_one_float32_copy_of_its_rows(
    tmp_path: Path,
) -> None:
    """A serving process keeps its snapshot for life: the int8 rows, the distinct
    vectors scored first, their growth room and every per-row array together stay
    under the 4 bytes per dimension that a float32 copy of the rows alone would hold."""
    rows = 9217
    matrix = _stored_matrix(tmp_path / "index.sqlite", rows, seed=7)
    assert matrix.dense_codes is not None  # the distinct vectors are held
    assert matrix.nbytes < rows * DIM * 4


def test_near_ties_the_int8_first_pass_cannot_tell_apart_keep_their_exact_order(
    tmp_path: Path,
) -> None:
    """Thousands of vectors within a hair of one another: the int8 first pass scores
    them alike, so its bound must keep every one that could rank, and the answer is
    still the exact product's (rows, order and score bits)."""
    rng = np.random.default_rng(3)
    centre = rng.standard_normal(DIM).astype(np.float32)
    vectors = centre + 0.002 * rng.standard_normal((4000, DIM)).astype(np.float32)
    vectors[2000:] = rng.standard_normal((2000, DIM)).astype(np.float32)  # far ones
    matrix = _stored(tmp_path / "index.sqlite", vectors)
    assert matrix.dense_codes is not None
    picked = np.flatnonzero(rng.random(len(vectors)) < 0.3)  # a filter's rows
    for scale in (0.0, 0.01, 0.1):
        query = centre / np.linalg.norm(centre) + scale * rng.standard_normal(DIM)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        for wanted in (1, 5, 25, 400):
            _agree(matrix.nearest(query, wanted), _exact(matrix, query, None, wanted))
            _agree(matrix.nearest(query, wanted, picked), _exact(matrix, query, picked, wanted))


@pytest.fixture
def notes(engine: Engine, tmp_path: Path) -> Iterator[sqlite3.Connection]:
    docs = {
        "garden.md": "# Vegetable garden\n\nPlant tomatoes in spring and water the seedlings.\n",
        "herbs.md": "# Herb beds\n\nBasil and parsley grow well beside tomatoes in the garden.\n",
        "orchard.md": "# Orchard\n\nPrune the apple trees in winter and pick the fruit.\n",
        "bread.md": "# Baking bread\n\nKnead the dough and bake the loaf until golden.\n",
        "tyres.md": "# Tyres\n\nChange to winter tyres before the first frost.\n",
    }
    root = write_corpus(tmp_path / "notes", docs)
    engine.collections.add(str(root), name="notes")
    engine.sync()
    with engine.connection() as conn:
        embed_backlog(conn, backend_for(BUNDLED_URI))
        (root / "garden.md").write_text("# Sailing\n\nHoist the sails and cross the bay.\n")
        engine.sync()  # garden.md's old vectors now belong to no document
        yield conn


def test_vectors_of_a_changed_document_never_cost_an_answer(notes: sqlite3.Connection) -> None:
    """The nearest vectors are stale: the documents behind the next ones fill the answer."""
    backend = backend_for(BUNDLED_URI)
    request = SearchRequest(query="tomatoes and seedlings in the vegetable garden", limit=3)
    found = vector_search(notes, backend, request)["results"]
    paths = [hit["source"]["relPath"] for hit in found]
    assert len(paths) == 3 and "garden.md" not in paths and paths[0] == "herbs.md"
    scores = [hit["score"] for hit in found]
    assert scores == sorted(scores, reverse=True)
