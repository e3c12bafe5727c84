"""The knowledge engine's one public face.

Surfaces (the CLI, the MCP tools, the HTTP gateway, the runtime) import the
engine from here and nowhere else; everything behind this module may move.
The engine is synchronous and speaks no transport: callers on an event loop
run its methods in worker threads.

What is here: :class:`Engine`, one object per opened index, with the request
and result types its services take and return, the error type of the store,
and the few helpers surfaces need (references, the index's location, job
control, team mode). Two modules stand beside it as part of the face:
:mod:`gno_trio.engine.vocabulary` (the bounds, defaults and closed word sets
surfaces spell out) and :mod:`gno_trio.engine.egress_rules` (the egress
policy's words and the gateway's judge). ``tests/test_layers.py`` holds the
face to its size.

Each service of ``Engine`` is a namespace composed over the opened index
(see :mod:`gno_trio.engine.core`): ``engine.search.query(...)``,
``engine.retrieval.run(...)``, ``engine.capsules.compile(...)``,
``engine.answers.ask(...)``, ``engine.memory.recall(...)``,
``engine.vectors.embed(...)``, ``engine.graph.links(...)``,
``engine.egress.check(...)``, ``engine.traces.list(...)``,
``engine.documents.get(...)``, ``engine.index.status()``,
``engine.collections.add(...)``, ``engine.notes.capture(...)``; what belongs to
the opened index itself (``open``, ``close``, ``sync``, ``config``, the write
lease) is ``Engine``'s own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gno_trio.engine.lazy import Homes, lazy_exports

if TYPE_CHECKING:
    from gno_trio.config import normalize_collection_name as normalize_name
    from gno_trio.engine.ask.face import AskOutcome as AskOutcome
    from gno_trio.engine.ask.face import AskRequest as AskRequest
    from gno_trio.engine.context import ContextRequest as ContextRequest
    from gno_trio.engine.context import agent_projection_text as agent_projection_text
    from gno_trio.engine.context import public_code as public_code
    from gno_trio.engine.core import Engine as Engine
    from gno_trio.engine.egress.change import Confirmation as Confirmation
    from gno_trio.engine.graph.linkgraph import GraphFilters as GraphFilters
    from gno_trio.engine.ingest.capture_request import CaptureRequest as CaptureRequest
    from gno_trio.engine.ingest.spec import SyncReport as SyncReport
    from gno_trio.engine.ingest.spec import now_iso as now_iso
    from gno_trio.engine.ingest.watching import WatchedRoot as WatchedRoot
    from gno_trio.engine.jobs import JobControl as JobControl
    from gno_trio.engine.jobs import JobManager as JobManager
    from gno_trio.engine.jobs import JobPlan as JobPlan
    from gno_trio.engine.jobs import JobTicket as JobTicket
    from gno_trio.engine.jobs import Work as Work
    from gno_trio.engine.kernel import locate as locate
    from gno_trio.engine.memory.identity import Identity as Identity
    from gno_trio.engine.memory.receipts import PresentedReceipt as PresentedReceipt
    from gno_trio.engine.reads.doctor import check as doctor_check
    from gno_trio.engine.reads.doctor import healthy as doctor_healthy
    from gno_trio.engine.reads.doctor import index_checks as doctor_checks
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
    from gno_trio.engine.team.plane import Team as Team
    from gno_trio.engine.team.url import TeamStore as TeamStore
    from gno_trio.engine.team.url import store_from as store_from
    from gno_trio.engine.traces.manage import Judgment as TraceJudgment
    from gno_trio.engine.traces.traced import Traced as Traced
    from gno_trio.engine.uris import parse_ref as parse_ref
    from gno_trio.engine.uris import parse_uri as parse_uri
    from gno_trio.engine.vectors.background import BackgroundEmbedder as BackgroundEmbedder

_HOMES: Final[Homes] = {
    "normalize_name": ("gno_trio.config", "normalize_collection_name"),
    "AskOutcome": ("gno_trio.engine.ask.face", "AskOutcome"),
    "AskRequest": ("gno_trio.engine.ask.face", "AskRequest"),
    "ContextRequest": ("gno_trio.engine.context", "ContextRequest"),
    "agent_projection_text": ("gno_trio.engine.context", "agent_projection_text"),
    "public_code": ("gno_trio.engine.context", "public_code"),
    "Engine": ("gno_trio.engine.core", "Engine"),
    "Confirmation": ("gno_trio.engine.egress.change", "Confirmation"),
    "GraphFilters": ("gno_trio.engine.graph.linkgraph", "GraphFilters"),
    "CaptureRequest": ("gno_trio.engine.ingest.capture_request", "CaptureRequest"),
    "SyncReport": ("gno_trio.engine.ingest.spec", "SyncReport"),
    "now_iso": ("gno_trio.engine.ingest.spec", "now_iso"),
    "WatchedRoot": ("gno_trio.engine.ingest.watching", "WatchedRoot"),
    "JobControl": ("gno_trio.engine.jobs", "JobControl"),
    "JobManager": ("gno_trio.engine.jobs", "JobManager"),
    "JobPlan": ("gno_trio.engine.jobs", "JobPlan"),
    "JobTicket": ("gno_trio.engine.jobs", "JobTicket"),
    "Work": ("gno_trio.engine.jobs", "Work"),
    "locate": ("gno_trio.engine.kernel", "locate"),
    "Identity": ("gno_trio.engine.memory.identity", "Identity"),
    "PresentedReceipt": ("gno_trio.engine.memory.receipts", "PresentedReceipt"),
    "doctor_check": ("gno_trio.engine.reads.doctor", "check"),
    "doctor_healthy": ("gno_trio.engine.reads.doctor", "healthy"),
    "doctor_checks": ("gno_trio.engine.reads.doctor", "index_checks"),
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
    "Team": ("gno_trio.engine.team.plane", "Team"),
    "TeamStore": ("gno_trio.engine.team.url", "TeamStore"),
    "store_from": ("gno_trio.engine.team.url", "store_from"),
    "lease_wait_from_env": ("gno_trio.engine.store.lease", "wait_from_env"),
    "TraceJudgment": ("gno_trio.engine.traces.manage", "Judgment"),
    "parse_ref": ("gno_trio.engine.uris", "parse_ref"),
    "parse_uri": ("gno_trio.engine.uris", "parse_uri"),
    "BackgroundEmbedder": ("gno_trio.engine.vectors.background", "BackgroundEmbedder"),
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
    "AskOutcome",
    "AskRequest",
    "BackgroundEmbedder",
    "CaptureRequest",
    "Confirmation",
    "ContextRequest",
    "Engine",
    "FileSessionRegistry",
    "GraphFilters",
    "HeldLease",
    "Identity",
    "JobControl",
    "JobManager",
    "JobPlan",
    "JobTicket",
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
    "agent_projection_text",
    "doctor_check",
    "doctor_checks",
    "doctor_healthy",
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
