"""The REST API's routes: each names the tool (or REST-only operation) it calls.

A route is data: method, path pattern (``{name}`` is one path segment, given
to the tool as argument ``name``), the operation, and where the arguments
come from (the query string for GET and DELETE, a JSON object body for
POST). The few routes that call no tool (health, the OpenAPI document, the
event stream) name a ``local`` handler instead. The OpenAPI document is
generated from this table and the operations' own schemas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote

HEALTH: Final = "health"
OPENAPI: Final = "openapi"
EVENTS: Final = "events"


@dataclass(frozen=True, slots=True)
class Route:
    """One method on one path pattern."""

    method: str
    pattern: str
    summary: str
    operation: str | None = None
    """The tool or REST-only operation called (``None``: a ``local`` handler)."""
    local: str | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Query names accepted for an argument (``uri`` for ``ref``)."""

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.pattern.strip("/").split("/"))

    @property
    def from_body(self) -> bool:
        return self.method == "POST"


def _get(pattern: str, operation: str, summary: str, **aliases: str) -> Route:
    return Route("GET", pattern, summary, operation, aliases=aliases)


def _post(pattern: str, operation: str, summary: str) -> Route:
    return Route("POST", pattern, summary, operation)


_REF_ALIASES: Final = {"uri": "ref", "docid": "ref"}

ROUTES: Final[tuple[Route, ...]] = (
    Route("GET", "/api/health", "The process is alive", local=HEALTH),
    Route("GET", "/api/openapi.json", "This API as an OpenAPI 3.1 document", local=OPENAPI),
    Route("GET", "/api/events", "Server-sent job progress and document changes", local=EVENTS),
    _get("/api/status", "gno_status", "Index status, health and background work (watcher)"),
    _get("/api/search", "gno_search", "BM25 keyword search"),
    _post("/api/search", "gno_search", "BM25 keyword search"),
    _get("/api/vsearch", "gno_vsearch", "Semantic (vector) search"),
    _post("/api/vsearch", "gno_vsearch", "Semantic (vector) search"),
    _get("/api/query", "gno_query", "Hybrid search"),
    _post("/api/query", "gno_query", "Hybrid search"),
    _post("/api/ask", "gno_ask", "An answer with numbered sources"),
    _get("/api/doc", "gno_get", "One document by URI or docid", **_REF_ALIASES),
    _post("/api/docs/multi-get", "gno_multi_get", "Several documents by refs or glob"),
    _get("/api/docs", "ls", "Active documents, by collection and path prefix"),
    _get("/api/browse", "browse", "One level of the browse tree"),
    _get("/api/doc/{ref}/links", "gno_links", "Outgoing links of a document"),
    _get("/api/doc/{ref}/backlinks", "gno_backlinks", "Documents linking to a document"),
    _get("/api/doc/{ref}/similar", "gno_similar", "Semantically similar documents"),
    _get("/api/graph", "gno_graph", "The knowledge graph of links"),
    _get("/api/tags", "gno_list_tags", "Tags with document counts"),
    _get("/api/collections", "collections", "The configured collections"),
    _post("/api/collections", "gno_add_collection", "Add a collection (write)"),
    Route(
        "DELETE",
        "/api/collections/{collection}",
        "Remove a collection (write)",
        "gno_remove_collection",
    ),
    _post("/api/sync", "gno_sync", "Re-index one or every collection (write; a job)"),
    _post("/api/context", "gno_context", "Compile a budgeted evidence capsule"),
    _post("/api/context/verify", "gno_context_verify", "Verify a capsule against the index"),
    _post("/api/memory/recall", "gno_recall", "Recall memory facts with citations"),
    _post("/api/memory/remember", "gno_remember", "Remember a fact (write)"),
    _post("/api/capture", "gno_capture", "Capture a note (write)"),
    _get("/api/jobs", "gno_list_jobs", "Recent and running jobs"),
    _get("/api/jobs/{jobId}", "gno_job_status", "One job's status and progress"),
    _get("/api/traces", "gno_trace_list", "Retrieval traces"),
    _get("/api/traces/{traceId}", "gno_trace_show", "One retrieval trace"),
    _get("/api/egress/audit", "gno_egress_audit_list", "Egress audit records"),
    _get("/api/egress/audit/status", "gno_egress_audit_status", "Egress audit totals"),
    _get("/api/egress/audit/{auditId}", "gno_egress_audit_show", "One egress audit record"),
)


def _segments_of(raw_path: str) -> list[str]:
    return [unquote(part) for part in raw_path.strip("/").split("/")]


def match(raw_path: str, routes: Sequence[Route] = ROUTES) -> tuple[list[Route], dict[str, str]]:
    """The routes of the first pattern matching ``raw_path`` (percent-encoded), and its
    path arguments; literal segments win over ``{name}`` ones, so ``/status`` is not an id."""
    wanted = _segments_of(raw_path)
    best: tuple[int, str] | None = None
    found: list[Route] = []
    arguments: dict[str, str] = {}
    for route in routes:
        pattern = route.segments
        if len(pattern) != len(wanted):
            continue
        params: dict[str, str] = {}
        for expected, given in zip(pattern, wanted, strict=True):
            if expected.startswith("{"):
                if not given:
                    break
                params[expected[1:-1]] = given
            elif expected != given:
                break
        else:
            rank = (len(params), route.pattern)
            if best is None or rank < best:
                best, found, arguments = rank, [route], params
            elif rank == best:
                found.append(route)
    return found, arguments


__all__ = ["EVENTS", "HEALTH", "OPENAPI", "ROUTES", "Route", "match"]
