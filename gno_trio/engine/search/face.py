"""``engine.search``: keyword search, vector search, the query pipeline, diagnosis.

Configured contexts (``index.yml`` guidance per scope) are attached here, so
every surface's hits carry the same guidance. The embedding model comes from
the configuration (:mod:`gno_trio.engine.vectors.models`); a model that
cannot run leaves ``query`` lexical, with the reason in its explain lines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from gno_trio.config import Config
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.search import chunkkeeper, lexical
from gno_trio.engine.search import contexts as contexts_mod
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.request import ContextRule, SearchRequest
from gno_trio.engine.store.database import Connection, read_snapshot
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.egress.policy import ContentClass
    from gno_trio.engine.search.remote import RemoteModels
    from gno_trio.engine.vectors.embedder import EmbeddingBackend


class SearchFace:
    """Retrieval over an opened index, and the configured contexts its hits carry."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel
        self._holds_chunk_index = False

    def context_rules(self) -> tuple[ContextRule, ...]:
        return tuple(
            ContextRule(scope_type=c.scope_type, scope_key=c.scope_key, text=c.text)
            for c in self._kernel.config.contexts
        )

    def contexts(self) -> list[dict[str, Any]]:
        """``context list``: every configured context, in file order."""
        return [contexts_mod.entry(c) for c in self._kernel.config.contexts]

    def add_context(self, scope: str, text: str) -> dict[str, Any]:
        """``context add``: attach guidance to a scope (written to ``index.yml``)."""
        return self._edit_contexts(lambda config: contexts_mod.with_context(config, scope, text))

    def remove_context(self, scope: str, text: str | None = None) -> dict[str, Any]:
        """``context rm``: drop the one context of a scope (or the one with ``text``)."""
        return self._edit_contexts(lambda config: contexts_mod.without_context(config, scope, text))

    def _edit_contexts(
        self, edit: Callable[[Config], tuple[Config, dict[str, Any]]]
    ) -> dict[str, Any]:
        """Apply ``edit`` to ``index.yml`` as it is on disk; the context it added or removed."""
        touched: dict[str, Any] = {}

        def change(config: Config) -> Config:
            updated, found = edit(config)
            touched.update(found)
            return updated

        self._kernel.update_config(change)
        return touched

    def check_contexts(self) -> dict[str, Any]:
        """``context check``: contexts that apply to nothing, or are configured twice."""
        return contexts_mod.check(self._kernel.config)

    def hold_chunk_index(self) -> None:
        """Keep the chunk index in memory for as long as this engine is open.

        The resident gateways call it (``gno-trio mcp``, one process per
        client session, does not): searches then find their hits' best
        chunks and snippets without an FTS5 statement per hit (same answers,
        see :mod:`.chunkmemory`). It is built in the background, from now and
        after each change to the index; a one-shot command never pays for it.
        """
        if not self._holds_chunk_index:
            chunkkeeper.keep(self._kernel.location.db_path)
            self._holds_chunk_index = True
            self.chunk_index_held()  # starts the build now, not at the first search

    def chunk_index_held(self, timeout: float = 0.0) -> bool:
        """Whether the chunk index is in memory for the index as it is now (waiting up to
        ``timeout`` seconds for a build this call may start)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._snapshot() as conn:
                if chunkkeeper.current(conn) is not None:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def release(self) -> None:
        """Let go of the chunk index held for this engine (the engine closing)."""
        if self._holds_chunk_index:
            self._holds_chunk_index = False
            chunkkeeper.release(self._kernel.location.db_path)

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[Connection]:
        """A connection reading one state of the index for the whole request."""
        with self._kernel.connection() as c, read_snapshot(c):
            yield c

    def _with_contexts(self, request: SearchRequest) -> SearchRequest:
        if request.contexts or not self._kernel.config.contexts:
            return request
        return dataclasses.replace(request, contexts=self.context_rules())

    def lexical(self, request: SearchRequest) -> dict[str, Any]:
        """BM25 keyword search; returns ``search-results@1.0``."""
        with self._snapshot() as c:
            return lexical.search(c, self._with_contexts(request))

    def _embedder(self, collection: str | None) -> EmbeddingBackend:
        from gno_trio.engine.vectors.models import configured_backend

        return configured_backend(self._kernel.config, collection)

    def _optional_embedder(
        self, collection: str | None
    ) -> tuple[EmbeddingBackend | None, str | None]:
        """The configured model, or None and why (the query then stays lexical)."""
        try:
            return self._embedder(collection), None
        except GnoError as error:
            return None, f"{error.code}: {error.message}"

    def query(
        self,
        request: SearchRequest,
        options: QueryOptions | None = None,
    ) -> dict[str, Any]:
        """The hybrid retrieval pipeline; ``search-results@1.0`` (``hybrid`` or ``bm25_only``)."""
        from gno_trio.engine.search import pipeline

        embedder, reason = self._optional_embedder(request.collection)
        models = self.remote_models(request.collection)
        with self._snapshot() as c:
            return pipeline.hybrid_query(
                c,
                self._with_contexts(request),
                options or QueryOptions(),
                embedder,
                unavailable=reason,
                models=models,
            )

    def remote_models(self, collection: str | None) -> RemoteModels:
        """The expansion and rerank endpoints in force, each call judged by the egress
        policy of the collections searched (a receipt kept, as for ``ask``'s generator)."""
        from gno_trio.engine.search import remote

        config = self._kernel.config
        names = [collection] if collection else [c.name for c in config.collections]

        def judge(uri: str, content_class: ContentClass) -> str | None:
            from gno_trio.engine.egress import audit
            from gno_trio.engine.egress.policy import endpoint_zone

            with (
                self._kernel.pool.connection() as own
            ):  # the receipt is written beside the read snapshot
                decision = audit.judge(
                    self._kernel.stores.egress_receipts(own),
                    config.collections,
                    collections=names,
                    action="remote_inference",
                    zone=endpoint_zone(uri.partition("#")[0]),
                    content_class=content_class,
                    authenticated=True,
                )
            return None if decision.allowed else decision.reason

        return remote.RemoteModels(
            expand_uri=remote.role_uri(config, "expand"),
            rerank_uri=remote.role_uri(config, "rerank"),
            budget_s=remote.retrieval_budget_s(config),
            judge=judge,
        )

    def vector(self, request: SearchRequest) -> dict[str, Any]:
        """Vector search; ``search-results@1.0`` with ``mode: vector``."""
        from gno_trio.engine.search import semantic

        embedder = self._embedder(request.collection)
        with self._snapshot() as c:
            return semantic.vector_search(c, embedder, self._with_contexts(request))

    def similar(
        self,
        ref: str,
        *,
        limit: int = 5,
        threshold: float | None = None,
        cross_collection: bool = False,
    ) -> dict[str, Any]:
        """Documents nearest one document's mean chunk vector; ``similar@1.0``."""
        from gno_trio.engine.search import semantic

        embedder = self._embedder(None)
        with self._snapshot() as c:
            return semantic.similar(
                c,
                embedder,
                ref,
                limit=limit,
                threshold=threshold,
                cross_collection=cross_collection,
            )

    def diagnose(
        self,
        request: SearchRequest,
        target: str,
        options: QueryOptions | None = None,
    ) -> dict[str, Any]:
        """Where ``target`` ranks or drops out for ``request`` in ``query``; ``query-diagnose``.

        ``fast`` keeps it BM25-only (GNO: no model is loaded for it).
        """
        fast = options is not None and options.fast
        embedder, reason = (None, None) if fast else self._optional_embedder(request.collection)
        from gno_trio.engine.search import diagnose as diagnose_mod  # the hybrid stack

        with self._snapshot() as c:
            return diagnose_mod.diagnose(
                c,
                self._with_contexts(request),
                target,
                options,
                backend=embedder,
                unavailable=reason,
            )


__all__ = ["SearchFace"]
