"""Tool adapters: one module per family, each a thin bridge to the engine."""

from __future__ import annotations

from collections.abc import Callable

from gno_trio.runtime import Runtime
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools import capture, index_state, memory, reading, retrieval

HandlerFactory = Callable[[Runtime], ToolHandler]

# Every implemented tool and the factory of its handler.
HANDLERS: dict[str, HandlerFactory] = {
    "gno_search": retrieval.make_search,
    "gno_query": retrieval.make_query,
    "gno_get": reading.make_get,
    "gno_multi_get": reading.make_multi_get,
    "gno_status": index_state.make_status,
    "gno_peek": index_state.make_peek,
    "gno_list_tags": index_state.make_list_tags,
    "gno_changes": index_state.make_changes,
    "gno_recall": memory.make_recall,
    "gno_remember": memory.make_remember,
    "gno_capture": capture.make_capture,
}


def implemented() -> frozenset[str]:
    return frozenset(HANDLERS)
