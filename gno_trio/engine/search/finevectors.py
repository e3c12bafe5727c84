"""Sentence-window rescoring: finer vector evidence for queries the index's words miss.

A query whose words the index mostly lacks (asked in another language, or
in other words) is ranked almost by its vector leg alone, and a chunk's
vector blurs the one or two sentences such a query is about. For those
queries only (lexical coverage below :data:`LOW_COVERAGE`), the best
:data:`RESCORE_DEPTH` fused candidates get, as their vector evidence, the
better of their chunk cosine and their best sentence-window cosine
(:mod:`gno_trio.engine.vectors.sentences`), and every candidate is weighed
again. A query whose words the index holds reads no sentence vector at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.search.fusion import Candidate
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.vectors.sentences import best_sentence_cosines

LOW_COVERAGE: Final = 0.5
"""Lexical coverage below which a query is rescored with sentence windows."""
RESCORE_DEPTH: Final = 20
"""How many of the best fused candidates are rescored."""


def wants_rescoring(coverage: float) -> bool:
    """Whether a query of this lexical coverage is rescored with sentence windows."""
    return coverage < LOW_COVERAGE


def sentence_evidence(
    conn: Connection,
    model_id: int,
    query: npt.NDArray[np.float32],
    ranked: Sequence[Candidate],
) -> dict[int, float]:
    """The best sentence-window cosine of each of the best candidates that has one."""
    top = [c.doc_id for c in ranked[:RESCORE_DEPTH]]
    return best_sentence_cosines(SQLITE_STORES.sentence_vectors(conn), model_id, query, top)


def rescore_line(coverage: float, found: dict[int, float] | None) -> dict[str, str]:
    """The explain line: whether sentence windows rescored the candidates, and how many."""
    if found is None:
        message = (
            f"skipped: lexical coverage {coverage:.2f} >= {LOW_COVERAGE:.2f} "
            "(the query's words carry it)"
        )
    elif not found:
        message = "no sentence-window vectors stored for the best candidates"
    else:
        message = (
            f"lexical coverage {coverage:.2f} < {LOW_COVERAGE:.2f}: {len(found)} of the best "
            f"{RESCORE_DEPTH} candidates rescored with their best sentence-window cosine"
        )
    return {"stage": "sentences", "message": message}


__all__ = [
    "LOW_COVERAGE",
    "RESCORE_DEPTH",
    "rescore_line",
    "sentence_evidence",
    "wants_rescoring",
]
