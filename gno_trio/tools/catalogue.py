"""The catalogue: every target tool in wire order, assembled from the family modules.

``TOOL_ORDER`` is the one list of all 53 tools in the order ``tools/list``
serves them:
GNO 1.35's observed order (read tools, then the 19 write tools, then the two
job tools, which are read tools GNO registers last), with 1.42's
``gno_peek``, ``gno_recall`` and ``gno_remember`` where GNO 1.42 places them.
Each family module declares its tools whole (output schema and egress
content class included); :data:`CATALOGUE` checks at import that the order
and the declarations name the same tools and that each declaration is
complete, so adding a tool touches its module, this list and its schema
file, and nothing else.
"""

from __future__ import annotations

from typing import Final

from gno_trio.engine.egress_rules import EGRESS_CONTENT_CLASSES
from gno_trio.server.registry import Catalogue
from gno_trio.tools import (
    ask,
    audit,
    capture,
    collections,
    context,
    context_verify,
    diagnostics,
    egress,
    egress_audit,
    files,
    graph,
    index_state,
    jobs,
    links,
    memory,
    reading,
    refactor,
    retrieval,
    sections,
    semantic,
    traces,
)

TOOL_ORDER: Final[tuple[str, ...]] = (
    # ---- read tools (34) --------------------------------------------------
    "gno_context",
    "gno_context_verify",
    "gno_ask",
    "gno_search",
    "gno_vsearch",
    "gno_query",
    "gno_query_diagnose",
    "gno_get",
    "gno_section",
    "gno_multi_get",
    "gno_peek",
    "gno_status",
    "gno_audit",
    "gno_egress_policy_get",
    "gno_egress_check",
    "gno_egress_audit_list",
    "gno_egress_audit_show",
    "gno_egress_audit_status",
    "gno_changes",
    "gno_diff",
    "gno_impact",
    "gno_trace_list",
    "gno_trace_show",
    "gno_list_tags",
    "gno_links",
    "gno_backlinks",
    "gno_similar",
    "gno_graph",
    "gno_graph_query",
    "gno_graph_neighbors",
    "gno_graph_path",
    "gno_recall",
    # ---- write tools (19) -------------------------------------------------
    "gno_egress_policy_set",
    "gno_egress_audit_delete",
    "gno_egress_audit_purge",
    "gno_trace_label",
    "gno_trace_export",
    "gno_trace_delete",
    "gno_trace_purge",
    "gno_capture",
    "gno_remember",
    "gno_add_collection",
    "gno_sync",
    "gno_embed",
    "gno_index",
    "gno_remove_collection",
    "gno_clear_collection_embeddings",
    "gno_create_folder",
    "gno_rename_note",
    "gno_move_note",
    "gno_duplicate_note",
    # ---- read tools GNO lists last (2) --------------------------------------
    "gno_job_status",
    "gno_list_jobs",
)

CORE_READ: Final = (
    "gno_query",
    "gno_search",
    "gno_get",
    "gno_multi_get",
    "gno_context",
    "gno_changes",
    "gno_recall",
)
CORE_WRITE: Final = ("gno_capture", "gno_remember")
"""The ``core`` profile's exact allow-list; it still obeys the write gate."""

CATALOGUE: Final = Catalogue(
    order=TOOL_ORDER,
    tools=(
        *retrieval.TOOLS,
        *semantic.TOOLS,
        *diagnostics.TOOLS,
        *context.TOOLS,
        *context_verify.TOOLS,
        *ask.TOOLS,
        *reading.TOOLS,
        *sections.TOOLS,
        *index_state.TOOLS,
        *audit.TOOLS,
        *memory.TOOLS,
        *capture.TOOLS,
        *links.TOOLS,
        *jobs.TOOLS,
        *collections.TOOLS,
        *egress.TOOLS,
        *egress_audit.TOOLS,
        *graph.TOOLS,
        *files.TOOLS,
        *refactor.TOOLS,
        *traces.TOOLS,
    ),
    content_classes=EGRESS_CONTENT_CLASSES,
    core=CORE_READ + CORE_WRITE,
)

__all__ = ["CATALOGUE", "CORE_READ", "CORE_WRITE", "TOOL_ORDER"]
