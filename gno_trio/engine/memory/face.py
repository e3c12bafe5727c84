"""``engine.memory``: recall and remember scoped, cited facts."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.memory import recall as recall_mod
from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.receipts import PresentedReceipt
from gno_trio.engine.memory.service import MemoryService


class MemoryFace:
    """The memory of an opened index (one service per engine: it remembers backfills)."""

    def __init__(self, kernel: IndexingKernel) -> None:
        self._kernel = kernel

    @functools.cached_property
    def _service(self) -> MemoryService:
        """Made at first use: it reads the lease wait from the environment then."""
        return MemoryService(self._kernel)

    def recall(
        self,
        *,
        query: str | None,
        collection: str | None,
        scopes: Sequence[str] | None,
        identity: Identity,
        max_facts: int = recall_mod.DEFAULT_MAX_FACTS,
        max_tokens: int = recall_mod.DEFAULT_MAX_TOKENS,
    ) -> dict[str, Any]:
        """``memory-recall@1.0``: current facts in scope, cited, within the budget."""
        return self._service.recall(
            query=query,
            collection=collection,
            scopes=scopes,
            identity=identity,
            max_facts=max_facts,
            max_tokens=max_tokens,
        )

    def remember(
        self,
        *,
        text: str | None,
        collection: str | None,
        scopes: Sequence[str] | None,
        identity: Identity,
        decision: str | None = None,
        predecessor_uri: str | None = None,
        predecessor_hash: str | None = None,
        receipt: PresentedReceipt | Mapping[str, Any] | None = None,
        derived_from: Sequence[str] = (),
        source: str | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """``memory-remember@1.0``: propose, add or supersede one fact."""
        return self._service.remember(
            text=text,
            collection=collection,
            scopes=scopes,
            identity=identity,
            decision=decision,
            predecessor_uri=predecessor_uri,
            predecessor_hash=predecessor_hash,
            receipt=receipt,
            derived_from=derived_from,
            source=source,
            cancelled=cancelled,
        )


__all__ = ["MemoryFace"]
