"""The semantic side of memory: recall's vector leg and remember's similarity.

Both run only when the memory collection is embedded (it has vectors of its
configured model) and that model answers; otherwise recall and remember stay
lexical and say why (``semanticUnavailable``). The vector leg looks among the
current in-scope facts only, through the same SQL condition as the lexical
leg, so scopes and supersession hold before any limit. Remember compares the
new text with each candidate fact by the cosine of their embeddings (a fact is
short: one embedding window) against a threshold for a likely duplicate:
GNO's 0.83 in general, 0.75 for the bundled model, whose cosines run lower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from gno_trio.config import Config
from gno_trio.engine.memory.queries import StoredFact, fact_from_row
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.memory import FactStore
from gno_trio.engine.store.vectors import ModelRow
from gno_trio.engine.vectors.bundled import BUNDLED_URI
from gno_trio.engine.vectors.cache import matrix_for
from gno_trio.engine.vectors.embedder import EmbeddingBackend, embed_passage, embed_query
from gno_trio.engine.vectors.models import configured_backend
from gno_trio.errors import GnoError

SEMANTIC_THRESHOLD: Final = 0.83
"""GNO's cosine for a likely duplicate, kept for models we have not measured (endpoints)."""
BUNDLED_THRESHOLD: Final = 0.75
"""The bundled model's: its paraphrases of a fact score 0.79-0.89, unrelated facts 0.3-0.4."""
NOT_EMBEDDED: Final = "the memory collection has no embeddings yet (run gno-trio embed {name})"


@dataclass(frozen=True, slots=True)
class SemanticMemory:
    """An embedded memory collection: its model and that model's stored vectors."""

    backend: EmbeddingBackend
    model: ModelRow

    @property
    def threshold(self) -> float:
        """The similarity at which a candidate counts as a likely duplicate."""
        return BUNDLED_THRESHOLD if self.backend.identity.uri == BUNDLED_URI else SEMANTIC_THRESHOLD


def semantic_memory(conn: Connection, config: Config, collection: str) -> SemanticMemory | str:
    """The collection's semantic side, or why there is none (a ``semanticUnavailable`` text)."""
    try:
        backend = configured_backend(config, collection)
    except GnoError as error:
        return f"{error.code}: {error.message}"
    vectors = SQLITE_STORES.vectors(conn)
    model = vectors.model(backend.identity.key)
    if model is None or vectors.embedded_count(model.id, [collection]) == 0:
        return NOT_EMBEDDED.format(name=collection)
    return SemanticMemory(backend, model)


def vector_candidates(
    conn: Connection,
    facts: FactStore,
    memory: SemanticMemory,
    collection: str,
    scopes: Sequence[str],
    query: str,
    limit: int,
) -> list[tuple[StoredFact, float]]:
    """Current in-scope facts nearest ``query`` with their cosine to it, best first, at
    most ``limit``."""
    rows = facts.current(collection, scopes)
    by_mirror: dict[str, list[StoredFact]] = {}
    for row in rows:
        by_mirror.setdefault(row["mirror_hash"], []).append(fact_from_row(row))
    if not by_mirror:
        return []
    matrix = matrix_for(conn, memory.model)
    allowed = matrix.rows_of_mirrors(list(by_mirror))
    vector = embed_query(memory.backend, query)
    found: list[tuple[StoredFact, float]] = []
    seen: set[str] = set()
    for row_index, cosine in matrix.nearest(vector, limit * 4, allowed):
        mirror = matrix.mirrors[int(matrix.mirror_of[row_index])]
        if mirror in seen:
            continue
        seen.add(mirror)
        found.extend((fact, float(cosine)) for fact in by_mirror[mirror])
        if len(found) >= limit:
            break
    return found[:limit]


def similarities(memory: SemanticMemory, text: str, others: Sequence[str]) -> list[float]:
    """Cosine of ``text`` with each of ``others``, all embedded as passages."""
    if not others:
        return []
    mine = embed_passage(memory.backend, text)
    theirs = np.stack([embed_passage(memory.backend, other) for other in others])
    return [float(value) for value in theirs @ mine]
