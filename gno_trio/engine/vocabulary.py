"""The engine's fixed words and bounds, as surfaces spell them out (part of its public face).

The limits and defaults of requests (a recall's facts and tokens, a graph's
nodes and edges, a multi-get's bytes), the closed sets of words an option
takes (capture presets, model roles), the codes a result carries for a
failure it reports inside itself (a collection's ``git pull``), and the
states team mode reports. Surfaces import them from here, next to
:mod:`gno_trio.engine` (which names ``Engine`` and its request and result
types) and :mod:`gno_trio.engine.egress_rules`; each is defined once, in the
engine module whose rule it bounds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gno_trio.engine.lazy import Homes, lazy_exports

if TYPE_CHECKING:
    from gno_trio.engine.context import CONTEXT_ERROR_CODES as CONTEXT_ERROR_CODES
    from gno_trio.engine.context.request_fields import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
    from gno_trio.engine.egress.explain import MAX_CHECK_COLLECTIONS as EGRESS_CHECK_MAX_COLLECTIONS
    from gno_trio.engine.facts import MAX_SCOPES as MEMORY_MAX_SCOPES
    from gno_trio.engine.graph.linkgraph import GRAPH_DEFAULT_EDGE_LIMIT as GRAPH_DEFAULT_EDGE_LIMIT
    from gno_trio.engine.graph.linkgraph import GRAPH_DEFAULT_LIMIT as GRAPH_DEFAULT_LIMIT
    from gno_trio.engine.graph.typed import DEFAULT_MAX_EDGES as IMPACT_DEFAULT_MAX_EDGES
    from gno_trio.engine.ingest.capture_request import (
        CAPTURE_MAX_TEXT_BYTES as CAPTURE_MAX_TEXT_BYTES,
    )
    from gno_trio.engine.ingest.capture_request import COLLISION_POLICIES as COLLISION_POLICIES
    from gno_trio.engine.ingest.capture_request import PRESETS as PRESETS
    from gno_trio.engine.ingest.capture_request import SOURCE_KINDS as SOURCE_KINDS
    from gno_trio.engine.ingest.git_pull import GIT_PULL_FAILED as GIT_PULL_FAILED
    from gno_trio.engine.ingest.update_cmd import UPDATE_CMD_FAILED as UPDATE_CMD_FAILED
    from gno_trio.engine.jobs import RETENTION_COUNT as JOB_RETENTION_COUNT
    from gno_trio.engine.memory.recall import DEFAULT_MAX_FACTS as RECALL_DEFAULT_MAX_FACTS
    from gno_trio.engine.memory.recall import DEFAULT_MAX_TOKENS as RECALL_DEFAULT_MAX_TOKENS
    from gno_trio.engine.memory.service import MAX_FACTS_LIMIT as RECALL_MAX_FACTS
    from gno_trio.engine.memory.service import MAX_TOKENS_LIMIT as RECALL_MAX_TOKENS
    from gno_trio.engine.reads.documents import DEFAULT_MAX_BYTES as MULTI_GET_DEFAULT_MAX_BYTES
    from gno_trio.engine.reads.documents import MAX_TOTAL_BYTES as MULTI_GET_MAX_TOTAL_BYTES
    from gno_trio.engine.team.plane import LOCAL_STATE as TEAM_LOCAL_STATE
    from gno_trio.engine.team.plane import SHARED_STATE as TEAM_SHARED_STATE
    from gno_trio.engine.vectors.presets import ROLES as MODEL_ROLES

_HOMES: Final[Homes] = {
    "CONTEXT_ERROR_CODES": ("gno_trio.engine.context", "CONTEXT_ERROR_CODES"),
    "MAX_SAFE_INTEGER": ("gno_trio.engine.context.request_fields", "MAX_SAFE_INTEGER"),
    "EGRESS_CHECK_MAX_COLLECTIONS": ("gno_trio.engine.egress.explain", "MAX_CHECK_COLLECTIONS"),
    "MEMORY_MAX_SCOPES": ("gno_trio.engine.facts", "MAX_SCOPES"),
    "GRAPH_DEFAULT_EDGE_LIMIT": ("gno_trio.engine.graph.linkgraph", "GRAPH_DEFAULT_EDGE_LIMIT"),
    "GRAPH_DEFAULT_LIMIT": ("gno_trio.engine.graph.linkgraph", "GRAPH_DEFAULT_LIMIT"),
    "IMPACT_DEFAULT_MAX_EDGES": ("gno_trio.engine.graph.typed", "DEFAULT_MAX_EDGES"),
    "CAPTURE_MAX_TEXT_BYTES": ("gno_trio.engine.ingest.capture_request", "CAPTURE_MAX_TEXT_BYTES"),
    "COLLISION_POLICIES": ("gno_trio.engine.ingest.capture_request", "COLLISION_POLICIES"),
    "PRESETS": ("gno_trio.engine.ingest.capture_request", "PRESETS"),
    "SOURCE_KINDS": ("gno_trio.engine.ingest.capture_request", "SOURCE_KINDS"),
    "UPDATE_CMD_FAILED": ("gno_trio.engine.ingest.update_cmd", "UPDATE_CMD_FAILED"),
    "GIT_PULL_FAILED": ("gno_trio.engine.ingest.git_pull", "GIT_PULL_FAILED"),
    "JOB_RETENTION_COUNT": ("gno_trio.engine.jobs", "RETENTION_COUNT"),
    "RECALL_DEFAULT_MAX_FACTS": ("gno_trio.engine.memory.recall", "DEFAULT_MAX_FACTS"),
    "RECALL_DEFAULT_MAX_TOKENS": ("gno_trio.engine.memory.recall", "DEFAULT_MAX_TOKENS"),
    "RECALL_MAX_FACTS": ("gno_trio.engine.memory.service", "MAX_FACTS_LIMIT"),
    "RECALL_MAX_TOKENS": ("gno_trio.engine.memory.service", "MAX_TOKENS_LIMIT"),
    "MULTI_GET_DEFAULT_MAX_BYTES": ("gno_trio.engine.reads.documents", "DEFAULT_MAX_BYTES"),
    "MULTI_GET_MAX_TOTAL_BYTES": ("gno_trio.engine.reads.documents", "MAX_TOTAL_BYTES"),
    "TEAM_LOCAL_STATE": ("gno_trio.engine.team.plane", "LOCAL_STATE"),
    "TEAM_SHARED_STATE": ("gno_trio.engine.team.plane", "SHARED_STATE"),
    "MODEL_ROLES": ("gno_trio.engine.vectors.presets", "ROLES"),
}
"""Each word: the module that defines it, and its name there (loaded on first use, as in
:mod:`gno_trio.engine`)."""

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

__all__ = [
    "CAPTURE_MAX_TEXT_BYTES",
    "COLLISION_POLICIES",
    "CONTEXT_ERROR_CODES",
    "EGRESS_CHECK_MAX_COLLECTIONS",
    "GIT_PULL_FAILED",
    "GRAPH_DEFAULT_EDGE_LIMIT",
    "GRAPH_DEFAULT_LIMIT",
    "IMPACT_DEFAULT_MAX_EDGES",
    "JOB_RETENTION_COUNT",
    "MAX_SAFE_INTEGER",
    "MEMORY_MAX_SCOPES",
    "MODEL_ROLES",
    "MULTI_GET_DEFAULT_MAX_BYTES",
    "MULTI_GET_MAX_TOTAL_BYTES",
    "PRESETS",
    "RECALL_DEFAULT_MAX_FACTS",
    "RECALL_DEFAULT_MAX_TOKENS",
    "RECALL_MAX_FACTS",
    "RECALL_MAX_TOKENS",
    "SOURCE_KINDS",
    "TEAM_LOCAL_STATE",
    "TEAM_SHARED_STATE",
    "UPDATE_CMD_FAILED",
]
