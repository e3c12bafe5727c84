"""The engine's embedding face: the embed phase, clearing vectors, model facts.

The numpy-backed machinery is imported on first use, so commands that never
touch vectors (a keyword search, a ``get``) do not pay for loading numpy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gno_trio.engine.kernel import EngineKernel

if TYPE_CHECKING:
    from gno_trio.engine.vectors.embedder import EmbeddingBackend
    from gno_trio.engine.vectors.embedding import EmbedProgress
    from gno_trio.engine.vectors.service import EmbedRun


class VectorsFace(EngineKernel):
    """Embedding: the embed phase, clearing a collection's vectors, model facts."""

    def embed_backend(self, collection: str | None = None) -> EmbeddingBackend:
        """The embedder configured for ``collection`` (or the index); ``MODEL_NOT_FOUND``."""
        from gno_trio.engine.vectors.models import configured_backend

        return configured_backend(self.config, collection)

    def embed(
        self,
        names: Sequence[str] | None = None,
        *,
        batch_size: int | None = None,
        force: bool = False,
        should_stop: Callable[[], bool] | None = None,
        progress: EmbedProgress | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> EmbedRun:
        """Give every chunk of the collections (all by default) a vector.

        Batch by batch, resumable, stopping between batches when ``should_stop``
        says so; see :func:`gno_trio.engine.vectors.service.embed`.
        """
        from gno_trio.engine.vectors.embedding import DEFAULT_BATCH_SIZE
        from gno_trio.engine.vectors.service import embed

        with self.connection(conn) as c:
            return embed(
                c,
                self.config,
                names,
                batch_size=batch_size or DEFAULT_BATCH_SIZE,
                force=force,
                should_stop=should_stop,
                progress=progress,
            )

    def embedding_counts(
        self, *, conn: sqlite3.Connection | None = None
    ) -> dict[str, tuple[int, int]]:
        """``{collection: (embedded chunks, chunks waiting for a vector)}``."""
        from gno_trio.engine.vectors.service import backlog_by_collection

        with self.connection(conn) as c:
            return backlog_by_collection(c, self.config)

    def clear_embeddings(
        self, collection: str, *, mode: str = "stale", conn: sqlite3.Connection | None = None
    ) -> dict[str, Any]:
        """Delete a collection's vectors of stale models (or ``all``)."""
        from gno_trio.engine.vectors.service import clear

        with self.connection(conn) as c:
            return clear(c, self.config, collection, mode=mode)

    def models(self) -> dict[str, Any]:
        """The configured model roles and whether each can run here (``models list``)."""
        from gno_trio.engine.vectors.models import models_list

        return models_list(self.config)

    def models_path(self) -> str | None:
        """Where the bundled model's files live (``models path``)."""
        from gno_trio.engine.vectors.models import models_path

        return models_path()
