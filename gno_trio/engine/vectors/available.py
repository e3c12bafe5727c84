"""Whether an index holds vectors of the configured model, and the error that says so.

Every semantic surface (vector search, the hybrid pipeline's vector leg,
similarity edges of the graph) asks this first, and an index without
vectors answers ``VECTORS_UNAVAILABLE`` with what to run, before any model
is loaded.
"""

from __future__ import annotations

from typing import NamedTuple

from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.vectors import ModelRow
from gno_trio.engine.vectors.cache import matrix_for
from gno_trio.engine.vectors.embedder import VECTORS_UNAVAILABLE, EmbeddingBackend
from gno_trio.engine.vectors.index import VectorMatrix
from gno_trio.errors import GnoError


def _no_vectors(backend: EmbeddingBackend) -> GnoError:
    return GnoError(
        VECTORS_UNAVAILABLE,
        f"No embeddings for model {backend.identity.uri} yet: run gno-trio embed "
        f"(or gno-trio index)",
    )


class StoredVectors(NamedTuple):
    """A model with stored vectors, and the snapshot of them a search scores."""

    model: ModelRow
    matrix: VectorMatrix


def stored_vectors(conn: Connection, backend: EmbeddingBackend) -> StoredVectors:
    """The model row and its in-memory vectors, or ``VECTORS_UNAVAILABLE`` (what to run is said).

    The snapshot holds only non-blank vectors, so its size answers whether
    there are any without a query of its own. It is read before anything
    is embedded: an index without vectors answers without loading the model.
    """
    model = SQLITE_STORES.vectors(conn).model(backend.identity.key)
    matrix = matrix_for(conn, model) if model is not None else None
    if model is None or matrix is None or matrix.size == 0:
        raise _no_vectors(backend)
    return StoredVectors(model, matrix)
