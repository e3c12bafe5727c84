"""Whether an index holds vectors of the configured model, and the error that says so.

Every semantic surface (vector search, the hybrid pipeline's vector leg,
similarity edges of the graph) asks this first, and an index without
vectors answers ``VECTORS_UNAVAILABLE`` with what to run, before any model
is loaded.
"""

from __future__ import annotations

import sqlite3

from gno_trio.engine.vectors.cache import matrix_for
from gno_trio.engine.vectors.embedder import VECTORS_UNAVAILABLE, EmbeddingBackend
from gno_trio.engine.vectors.index import VectorMatrix
from gno_trio.engine.vectors.storage import ModelRow, find_model
from gno_trio.errors import GnoError


def _no_vectors(backend: EmbeddingBackend) -> GnoError:
    return GnoError(
        VECTORS_UNAVAILABLE,
        f"No embeddings for model {backend.identity.uri} yet: run gno-trio embed "
        f"(or gno-trio index)",
    )


def require_vectors(conn: sqlite3.Connection, backend: EmbeddingBackend) -> ModelRow:
    """The model row with stored vectors, or ``VECTORS_UNAVAILABLE`` (what to run is said)."""
    model = find_model(conn, backend.identity.key)
    if (
        model is None
        or conn.execute(
            "SELECT 1 FROM content_vectors WHERE model_id = ? AND length(codes) > 0 LIMIT 1",
            (model.id,),
        ).fetchone()
        is None
    ):
        raise _no_vectors(backend)
    return model


def stored_vectors(
    conn: sqlite3.Connection, backend: EmbeddingBackend
) -> tuple[ModelRow, VectorMatrix]:
    """:func:`require_vectors` and the model's in-memory vectors, in one step.

    The snapshot holds only non-blank vectors, so its size answers whether
    there are any without a query of its own. It is read before anything
    is embedded: an index without vectors answers without loading the model.
    """
    model = find_model(conn, backend.identity.key)
    matrix = matrix_for(conn, model) if model is not None else None
    if model is None or matrix is None or matrix.size == 0:
        raise _no_vectors(backend)
    return model, matrix
