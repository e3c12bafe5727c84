"""Similarity edges for the graph overview (``graph --include-similar``).

Each document is the mean of its chunk vectors (as ``similar`` compares
them); each returned node keeps its ``top_k`` nearest other nodes scoring at
least ``threshold``, one undirected edge per pair. The pairwise comparison
is bounded: past :data:`COMPUTE_BUDGET` nodes only the first ones (highest
degree first) take part, and the answer says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.graph.links import DocSummary
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.vectors.available import stored_vectors
from gno_trio.engine.vectors.embedder import EmbeddingBackend
from gno_trio.engine.vectors.index import VectorMatrix

COMPUTE_BUDGET: Final = 2000
"""Most nodes compared pairwise (a 2000 x 2000 float32 matrix is 16 MB)."""

SimilarEdge = tuple[int, int, float]
"""(source document id, target document id, cosine score)."""


def centre(matrix: VectorMatrix, mirror: str) -> npt.NDArray[np.float32] | None:
    """A document's unit mean chunk vector, or None when it has none."""
    rows = matrix.rows_of(mirror)
    if len(rows) == 0:
        return None
    mean = matrix.vectors(rows).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32) if norm > 0 else None


def similar_edges(
    conn: Connection,
    backend: EmbeddingBackend,
    nodes: Sequence[DocSummary],
    *,
    top_k: int,
    threshold: float,
) -> tuple[list[SimilarEdge], bool]:
    """The similarity edges among ``nodes``, and whether the compute budget cut them.

    ``VECTORS_UNAVAILABLE`` (from :func:`stored_vectors`) when nothing is embedded.
    """
    _, matrix = stored_vectors(conn, backend)
    ids = [doc.id for doc in nodes[:COMPUTE_BUDGET]]
    mirrors = SQLITE_STORES.links(conn).mirrors(ids)
    kept: list[int] = []
    vectors: list[npt.NDArray[np.float32]] = []
    for doc_id in ids:
        mirror = mirrors.get(doc_id)
        found = centre(matrix, mirror) if mirror else None
        if found is not None:
            kept.append(doc_id)
            vectors.append(found)
    if len(kept) < 2:
        return [], len(nodes) > COMPUTE_BUDGET
    stacked = np.stack(vectors)
    scores = stacked @ stacked.T
    np.fill_diagonal(scores, -1.0)
    pairs: dict[tuple[int, int], float] = {}
    for row in range(len(kept)):
        nearest = np.argsort(-scores[row], kind="stable")[:top_k]
        for col in nearest:
            score = float(scores[row, col])
            if score < threshold:
                break
            key = (min(row, int(col)), max(row, int(col)))
            pairs[key] = max(pairs.get(key, score), score)
    edges = [(kept[a], kept[b], min(1.0, round(score, 6))) for (a, b), score in pairs.items()]
    return edges, len(nodes) > COMPUTE_BUDGET


__all__ = ["COMPUTE_BUDGET", "SimilarEdge", "centre", "similar_edges"]
