"""Tool adapters: one module per family, each a thin bridge to the engine."""

from __future__ import annotations

from collections.abc import Callable

from gno_trio.runtime import Runtime
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools import capture, index_state, memory, reading, retrieval
from gno_trio.tools import collections as collection_tools
from gno_trio.tools import context as context_tools
from gno_trio.tools import diagnostics as diagnostic_tools
from gno_trio.tools import egress as egress_tools
from gno_trio.tools import egress_write as egress_write_tools
from gno_trio.tools import files as file_tools
from gno_trio.tools import graph as graph_tools
from gno_trio.tools import jobs as job_tools
from gno_trio.tools import links as link_tools

HandlerFactory = Callable[[Runtime], ToolHandler]

# Every implemented tool and the factory of its handler.
HANDLERS: dict[str, HandlerFactory] = {
    "gno_search": retrieval.make_search,
    "gno_query": retrieval.make_query,
    "gno_query_diagnose": diagnostic_tools.make_query_diagnose,
    "gno_get": reading.make_get,
    "gno_multi_get": reading.make_multi_get,
    "gno_status": index_state.make_status,
    "gno_peek": index_state.make_peek,
    "gno_list_tags": index_state.make_list_tags,
    "gno_changes": index_state.make_changes,
    "gno_diff": diagnostic_tools.make_diff,
    "gno_recall": memory.make_recall,
    "gno_remember": memory.make_remember,
    "gno_capture": capture.make_capture,
    "gno_context": context_tools.make_context,
    "gno_links": link_tools.make_links,
    "gno_backlinks": link_tools.make_backlinks,
    "gno_job_status": job_tools.make_job_status,
    "gno_list_jobs": job_tools.make_list_jobs,
    "gno_add_collection": collection_tools.make_add_collection,
    "gno_sync": collection_tools.make_sync,
    "gno_remove_collection": collection_tools.make_remove_collection,
    "gno_egress_policy_get": egress_tools.make_egress_policy_get,
    "gno_egress_check": egress_tools.make_egress_check,
    "gno_egress_policy_set": egress_write_tools.make_egress_policy_set,
    "gno_graph_neighbors": graph_tools.make_graph_neighbors,
    "gno_graph_path": graph_tools.make_graph_path,
    "gno_graph": graph_tools.make_graph,
    "gno_graph_query": graph_tools.make_graph_query,
    "gno_impact": graph_tools.make_impact,
    "gno_create_folder": file_tools.make_create_folder,
    "gno_duplicate_note": file_tools.make_duplicate_note,
}


def implemented() -> frozenset[str]:
    return frozenset(HANDLERS)
