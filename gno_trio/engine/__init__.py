"""The knowledge engine's one public face.

Surfaces (the CLI, the MCP tools, the HTTP gateway, the runtime) import the
engine from here and nowhere else; everything behind this module may move.
The engine is synchronous and speaks no transport: callers on an event loop
run its methods in worker threads.

Layout (internals, by concern):

* ``core``/``kernel``: :class:`Engine`, one object per opened index; every
  service is one of its methods (see :mod:`gno_trio.engine.core`);
* ``store/``: the SQLite file (connections, pool, migrations), the change
  journal, the write lease;
* ``ingest/``: walker, converters, chunker, frontmatter, sync, collection
  roots, and the writers of notes (capture, filing);
* ``search/``: query grammar, BM25, anchors, time filters, the query
  pipeline and its diagnosis;
* ``graph/``: links, the link graph, typed edges, overview, impact;
* ``vectors/``: embedders (the bundled model, HTTP endpoints), vector
  storage and the in-memory copy searched, the embed phase;
* ``egress/``: the one home of the egress policy order and rules;
* ``reads/``: documents by reference, listings, tags, status, diffs;
* ``memory/``: scoped, cited facts; ``context/``: Context Capsules;
* ``jobs``: background jobs of a server process (threads, no event loop);
* ``uris``: ``gno://`` URIs, refs and docids, shared by all of the above.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gno_trio.engine.lazy import Homes, lazy_exports

if TYPE_CHECKING:
    from gno_trio.config import normalize_collection_name as normalize_name
    from gno_trio.engine.ask.face import AskOutcome as AskOutcome
    from gno_trio.engine.ask.face import AskRequest as AskRequest
    from gno_trio.engine.context import CONTEXT_ERROR_CODES as CONTEXT_ERROR_CODES
    from gno_trio.engine.context import ContextRequest as ContextRequest
    from gno_trio.engine.context import agent_projection_text as agent_projection_text
    from gno_trio.engine.context import canonical_json as canonical_json
    from gno_trio.engine.context import public_code as public_code
    from gno_trio.engine.context.request_fields import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
    from gno_trio.engine.core import Engine as Engine
    from gno_trio.engine.egress.change import Confirmation as Confirmation
    from gno_trio.engine.egress.decision import EGRESS_METHODS as EGRESS_METHODS
    from gno_trio.engine.egress.decision import CollectionPolicy as CollectionPolicy
    from gno_trio.engine.egress.decision import evaluate as evaluate_egress
    from gno_trio.engine.egress.decision import scope_of as egress_scope_of
    from gno_trio.engine.egress.explain import MAX_CHECK_COLLECTIONS as EGRESS_CHECK_MAX_COLLECTIONS
    from gno_trio.engine.egress.explain import PartialMode as EgressPartialMode
    from gno_trio.engine.egress.policy import ACTIONS as EGRESS_ACTIONS
    from gno_trio.engine.egress.policy import CONTENT_CLASSES as EGRESS_CONTENT_CLASSES
    from gno_trio.engine.egress.policy import EGRESS_DENIED_MESSAGE as EGRESS_DENIED_MESSAGE
    from gno_trio.engine.egress.policy import POLICY_ORDER as POLICY_ORDER
    from gno_trio.engine.egress.policy import ZONES as EGRESS_ZONES
    from gno_trio.engine.egress.policy import Action as EgressAction
    from gno_trio.engine.egress.policy import ContentClass as EgressContentClass
    from gno_trio.engine.egress.policy import Policy as Policy
    from gno_trio.engine.egress.policy import Zone as Zone
    from gno_trio.engine.egress.policy import classify_peer as classify_peer
    from gno_trio.engine.facts import MAX_SCOPES as MEMORY_MAX_SCOPES
    from gno_trio.engine.graph.linkgraph import GRAPH_DEFAULT_EDGE_LIMIT as GRAPH_DEFAULT_EDGE_LIMIT
    from gno_trio.engine.graph.linkgraph import GRAPH_DEFAULT_LIMIT as GRAPH_DEFAULT_LIMIT
    from gno_trio.engine.graph.linkgraph import GraphFilters as GraphFilters
    from gno_trio.engine.graph.typed import DEFAULT_MAX_EDGES as IMPACT_DEFAULT_MAX_EDGES
    from gno_trio.engine.ingest.capture_request import (
        CAPTURE_MAX_TEXT_BYTES as CAPTURE_MAX_TEXT_BYTES,
    )
    from gno_trio.engine.ingest.capture_request import COLLISION_POLICIES as COLLISION_POLICIES
    from gno_trio.engine.ingest.capture_request import PRESETS as PRESETS
    from gno_trio.engine.ingest.capture_request import SOURCE_KINDS as SOURCE_KINDS
    from gno_trio.engine.ingest.capture_request import CaptureRequest as CaptureRequest
    from gno_trio.engine.ingest.git_pull import GIT_PULL_FAILED as GIT_PULL_FAILED
    from gno_trio.engine.ingest.spec import SyncReport as SyncReport
    from gno_trio.engine.ingest.spec import now_iso as now_iso
    from gno_trio.engine.ingest.update_cmd import UPDATE_CMD_FAILED as UPDATE_CMD_FAILED
    from gno_trio.engine.ingest.watching import WatchedRoot as WatchedRoot
    from gno_trio.engine.jobs import RETENTION_COUNT as JOB_RETENTION_COUNT
    from gno_trio.engine.jobs import JobControl as JobControl
    from gno_trio.engine.jobs import JobManager as JobManager
    from gno_trio.engine.jobs import JobPlan as JobPlan
    from gno_trio.engine.jobs import JobTicket as JobTicket
    from gno_trio.engine.jobs import Work as Work
    from gno_trio.engine.kernel import locate as locate
    from gno_trio.engine.memory.identity import Identity as Identity
    from gno_trio.engine.memory.recall import DEFAULT_MAX_FACTS as RECALL_DEFAULT_MAX_FACTS
    from gno_trio.engine.memory.recall import DEFAULT_MAX_TOKENS as RECALL_DEFAULT_MAX_TOKENS
    from gno_trio.engine.memory.receipts import PresentedReceipt as PresentedReceipt
    from gno_trio.engine.memory.service import MAX_FACTS_LIMIT as RECALL_MAX_FACTS
    from gno_trio.engine.memory.service import MAX_TOKENS_LIMIT as RECALL_MAX_TOKENS
    from gno_trio.engine.reads.doctor import check as doctor_check
    from gno_trio.engine.reads.doctor import healthy as doctor_healthy
    from gno_trio.engine.reads.doctor import index_checks as doctor_checks
    from gno_trio.engine.reads.documents import DEFAULT_MAX_BYTES as MULTI_GET_DEFAULT_MAX_BYTES
    from gno_trio.engine.reads.documents import MAX_TOTAL_BYTES as MULTI_GET_MAX_TOTAL_BYTES
    from gno_trio.engine.reads.readiness import standalone_resident as standalone_resident
    from gno_trio.engine.search.hybrid import QueryOptions as QueryOptions
    from gno_trio.engine.search.request import SearchRequest as SearchRequest
    from gno_trio.engine.search.scope import Scope as Scope
    from gno_trio.engine.store.atomic import replace as write_file_atomically
    from gno_trio.engine.store.database import StoreError as StoreError
    from gno_trio.engine.store.lease import HeldLease as HeldLease
    from gno_trio.engine.store.lease import wait_from_env as lease_wait_from_env
    from gno_trio.engine.store.sessions import FileSessionRegistry as FileSessionRegistry
    from gno_trio.engine.store.sessions import SessionRegistry as SessionRegistry
    from gno_trio.engine.team.plane import LOCAL_STATE as TEAM_LOCAL_STATE
    from gno_trio.engine.team.plane import SHARED_STATE as TEAM_SHARED_STATE
    from gno_trio.engine.team.plane import Team as Team
    from gno_trio.engine.team.url import TeamStore as TeamStore
    from gno_trio.engine.team.url import store_from as store_from
    from gno_trio.engine.traces.manage import Judgment as TraceJudgment
    from gno_trio.engine.traces.traced import Traced as Traced
    from gno_trio.engine.uris import parse_ref as parse_ref
    from gno_trio.engine.uris import parse_uri as parse_uri
    from gno_trio.engine.vectors.background import BackgroundEmbedder as BackgroundEmbedder
    from gno_trio.engine.vectors.presets import ROLES as MODEL_ROLES

_HOMES: Final[Homes] = {
    "normalize_name": ("gno_trio.config", "normalize_collection_name"),
    "AskOutcome": ("gno_trio.engine.ask.face", "AskOutcome"),
    "AskRequest": ("gno_trio.engine.ask.face", "AskRequest"),
    "CONTEXT_ERROR_CODES": ("gno_trio.engine.context", "CONTEXT_ERROR_CODES"),
    "ContextRequest": ("gno_trio.engine.context", "ContextRequest"),
    "agent_projection_text": ("gno_trio.engine.context", "agent_projection_text"),
    "canonical_json": ("gno_trio.engine.context", "canonical_json"),
    "public_code": ("gno_trio.engine.context", "public_code"),
    "MAX_SAFE_INTEGER": ("gno_trio.engine.context.request_fields", "MAX_SAFE_INTEGER"),
    "Engine": ("gno_trio.engine.core", "Engine"),
    "Confirmation": ("gno_trio.engine.egress.change", "Confirmation"),
    "EGRESS_METHODS": ("gno_trio.engine.egress.decision", "EGRESS_METHODS"),
    "CollectionPolicy": ("gno_trio.engine.egress.decision", "CollectionPolicy"),
    "evaluate_egress": ("gno_trio.engine.egress.decision", "evaluate"),
    "egress_scope_of": ("gno_trio.engine.egress.decision", "scope_of"),
    "EGRESS_CHECK_MAX_COLLECTIONS": ("gno_trio.engine.egress.explain", "MAX_CHECK_COLLECTIONS"),
    "EgressPartialMode": ("gno_trio.engine.egress.explain", "PartialMode"),
    "EGRESS_ACTIONS": ("gno_trio.engine.egress.policy", "ACTIONS"),
    "EGRESS_CONTENT_CLASSES": ("gno_trio.engine.egress.policy", "CONTENT_CLASSES"),
    "EGRESS_DENIED_MESSAGE": ("gno_trio.engine.egress.policy", "EGRESS_DENIED_MESSAGE"),
    "POLICY_ORDER": ("gno_trio.engine.egress.policy", "POLICY_ORDER"),
    "EGRESS_ZONES": ("gno_trio.engine.egress.policy", "ZONES"),
    "EgressAction": ("gno_trio.engine.egress.policy", "Action"),
    "EgressContentClass": ("gno_trio.engine.egress.policy", "ContentClass"),
    "Policy": ("gno_trio.engine.egress.policy", "Policy"),
    "Zone": ("gno_trio.engine.egress.policy", "Zone"),
    "classify_peer": ("gno_trio.engine.egress.policy", "classify_peer"),
    "MEMORY_MAX_SCOPES": ("gno_trio.engine.facts", "MAX_SCOPES"),
    "GRAPH_DEFAULT_EDGE_LIMIT": ("gno_trio.engine.graph.linkgraph", "GRAPH_DEFAULT_EDGE_LIMIT"),
    "GRAPH_DEFAULT_LIMIT": ("gno_trio.engine.graph.linkgraph", "GRAPH_DEFAULT_LIMIT"),
    "GraphFilters": ("gno_trio.engine.graph.linkgraph", "GraphFilters"),
    "IMPACT_DEFAULT_MAX_EDGES": ("gno_trio.engine.graph.typed", "DEFAULT_MAX_EDGES"),
    "CAPTURE_MAX_TEXT_BYTES": ("gno_trio.engine.ingest.capture_request", "CAPTURE_MAX_TEXT_BYTES"),
    "COLLISION_POLICIES": ("gno_trio.engine.ingest.capture_request", "COLLISION_POLICIES"),
    "PRESETS": ("gno_trio.engine.ingest.capture_request", "PRESETS"),
    "SOURCE_KINDS": ("gno_trio.engine.ingest.capture_request", "SOURCE_KINDS"),
    "CaptureRequest": ("gno_trio.engine.ingest.capture_request", "CaptureRequest"),
    "SyncReport": ("gno_trio.engine.ingest.spec", "SyncReport"),
    "now_iso": ("gno_trio.engine.ingest.spec", "now_iso"),
    "WatchedRoot": ("gno_trio.engine.ingest.watching", "WatchedRoot"),
    "UPDATE_CMD_FAILED": ("gno_trio.engine.ingest.update_cmd", "UPDATE_CMD_FAILED"),
    "GIT_PULL_FAILED": ("gno_trio.engine.ingest.git_pull", "GIT_PULL_FAILED"),
    "JOB_RETENTION_COUNT": ("gno_trio.engine.jobs", "RETENTION_COUNT"),
    "JobControl": ("gno_trio.engine.jobs", "JobControl"),
    "JobManager": ("gno_trio.engine.jobs", "JobManager"),
    "JobPlan": ("gno_trio.engine.jobs", "JobPlan"),
    "JobTicket": ("gno_trio.engine.jobs", "JobTicket"),
    "Work": ("gno_trio.engine.jobs", "Work"),
    "locate": ("gno_trio.engine.kernel", "locate"),
    "Identity": ("gno_trio.engine.memory.identity", "Identity"),
    "RECALL_DEFAULT_MAX_FACTS": ("gno_trio.engine.memory.recall", "DEFAULT_MAX_FACTS"),
    "RECALL_DEFAULT_MAX_TOKENS": ("gno_trio.engine.memory.recall", "DEFAULT_MAX_TOKENS"),
    "PresentedReceipt": ("gno_trio.engine.memory.receipts", "PresentedReceipt"),
    "RECALL_MAX_FACTS": ("gno_trio.engine.memory.service", "MAX_FACTS_LIMIT"),
    "RECALL_MAX_TOKENS": ("gno_trio.engine.memory.service", "MAX_TOKENS_LIMIT"),
    "doctor_check": ("gno_trio.engine.reads.doctor", "check"),
    "doctor_healthy": ("gno_trio.engine.reads.doctor", "healthy"),
    "doctor_checks": ("gno_trio.engine.reads.doctor", "index_checks"),
    "MULTI_GET_DEFAULT_MAX_BYTES": ("gno_trio.engine.reads.documents", "DEFAULT_MAX_BYTES"),
    "MULTI_GET_MAX_TOTAL_BYTES": ("gno_trio.engine.reads.documents", "MAX_TOTAL_BYTES"),
    "standalone_resident": ("gno_trio.engine.reads.readiness", "standalone_resident"),
    "QueryOptions": ("gno_trio.engine.search.hybrid", "QueryOptions"),
    "SearchRequest": ("gno_trio.engine.search.request", "SearchRequest"),
    "Scope": ("gno_trio.engine.search.scope", "Scope"),
    "Traced": ("gno_trio.engine.traces.traced", "Traced"),
    "write_file_atomically": ("gno_trio.engine.store.atomic", "replace"),
    "StoreError": ("gno_trio.engine.store.database", "StoreError"),
    "HeldLease": ("gno_trio.engine.store.lease", "HeldLease"),
    "FileSessionRegistry": ("gno_trio.engine.store.sessions", "FileSessionRegistry"),
    "SessionRegistry": ("gno_trio.engine.store.sessions", "SessionRegistry"),
    "TEAM_LOCAL_STATE": ("gno_trio.engine.team.plane", "LOCAL_STATE"),
    "TEAM_SHARED_STATE": ("gno_trio.engine.team.plane", "SHARED_STATE"),
    "Team": ("gno_trio.engine.team.plane", "Team"),
    "TeamStore": ("gno_trio.engine.team.url", "TeamStore"),
    "store_from": ("gno_trio.engine.team.url", "store_from"),
    "lease_wait_from_env": ("gno_trio.engine.store.lease", "wait_from_env"),
    "TraceJudgment": ("gno_trio.engine.traces.manage", "Judgment"),
    "parse_ref": ("gno_trio.engine.uris", "parse_ref"),
    "parse_uri": ("gno_trio.engine.uris", "parse_uri"),
    "BackgroundEmbedder": ("gno_trio.engine.vectors.background", "BackgroundEmbedder"),
    "MODEL_ROLES": ("gno_trio.engine.vectors.presets", "ROLES"),
}
"""Each public name: the module that defines it, and its name there.

A name is imported from its module the first time it is asked for (PEP 562),
so a process loads only the parts of the engine it uses: a lexical search
never imports the vector stack, Context Capsules or answer checking. The
``TYPE_CHECKING`` imports above say the same for type checkers; a test
holds the two lists equal.
"""


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

__all__ = [
    "CAPTURE_MAX_TEXT_BYTES",
    "COLLISION_POLICIES",
    "CONTEXT_ERROR_CODES",
    "EGRESS_ACTIONS",
    "EGRESS_CHECK_MAX_COLLECTIONS",
    "EGRESS_CONTENT_CLASSES",
    "EGRESS_DENIED_MESSAGE",
    "EGRESS_METHODS",
    "EGRESS_ZONES",
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
    "POLICY_ORDER",
    "PRESETS",
    "RECALL_DEFAULT_MAX_FACTS",
    "RECALL_DEFAULT_MAX_TOKENS",
    "RECALL_MAX_FACTS",
    "RECALL_MAX_TOKENS",
    "SOURCE_KINDS",
    "TEAM_LOCAL_STATE",
    "TEAM_SHARED_STATE",
    "UPDATE_CMD_FAILED",
    "AskOutcome",
    "AskRequest",
    "BackgroundEmbedder",
    "CaptureRequest",
    "CollectionPolicy",
    "Confirmation",
    "ContextRequest",
    "EgressAction",
    "EgressContentClass",
    "EgressPartialMode",
    "Engine",
    "FileSessionRegistry",
    "GraphFilters",
    "HeldLease",
    "Identity",
    "JobControl",
    "JobManager",
    "JobPlan",
    "JobTicket",
    "Policy",
    "PresentedReceipt",
    "QueryOptions",
    "Scope",
    "SearchRequest",
    "SessionRegistry",
    "StoreError",
    "SyncReport",
    "Team",
    "TeamStore",
    "TraceJudgment",
    "Traced",
    "WatchedRoot",
    "Work",
    "Zone",
    "agent_projection_text",
    "canonical_json",
    "classify_peer",
    "doctor_check",
    "doctor_checks",
    "doctor_healthy",
    "egress_scope_of",
    "evaluate_egress",
    "lease_wait_from_env",
    "locate",
    "normalize_name",
    "now_iso",
    "parse_ref",
    "parse_uri",
    "public_code",
    "standalone_resident",
    "store_from",
    "write_file_atomically",
]
