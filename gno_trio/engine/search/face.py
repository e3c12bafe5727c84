"""The engine's retrieval: keyword search, the query pipeline and its diagnosis.

Configured contexts (``index.yml`` guidance per scope) are attached here, so
every surface's hits carry the same guidance.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Any

from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.search import diagnose as diagnose_mod
from gno_trio.engine.search import hybrid, lexical
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.lexical import ContextRule, SearchRequest


class SearchFace(EngineKernel):
    def context_rules(self) -> tuple[ContextRule, ...]:
        return tuple(
            ContextRule(scope_type=c.scope_type, scope_key=c.scope_key, text=c.text)
            for c in self.config.contexts
        )

    def _with_contexts(self, request: SearchRequest) -> SearchRequest:
        if request.contexts or not self.config.contexts:
            return request
        return dataclasses.replace(request, contexts=self.context_rules())

    def search(
        self, request: SearchRequest, *, conn: sqlite3.Connection | None = None
    ) -> dict[str, Any]:
        """BM25 keyword search; returns ``search-results@1.0``."""
        with self.connection(conn) as c:
            return lexical.search(c, self._with_contexts(request))

    def query(
        self,
        request: SearchRequest,
        options: QueryOptions | None = None,
        *,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        """The general retrieval pipeline (model-free today); ``search-results@1.0``."""
        with self.connection(conn) as c:
            return hybrid.query(c, self._with_contexts(request), options or QueryOptions())

    def diagnose(
        self,
        request: SearchRequest,
        target: str,
        options: QueryOptions | None = None,
        *,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        """Where ``target`` ranks or drops out for ``request``; ``query-diagnose``."""
        with self.connection(conn) as c:
            return diagnose_mod.diagnose(c, self._with_contexts(request), target, options)


__all__ = ["SearchFace"]
