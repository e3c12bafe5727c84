"""Retrievals as surfaces ask for them: the answer, and the trace the engine recorded for it.

Recording a retrieval is an engine rule, not a surface's chore:
``engine.retrieval.run`` runs ``search``, ``vsearch`` or ``query`` and, when
``retrievalTraces`` is on, records it (filters read from the request by
:mod:`.filters`) before handing back the answer and the trace id;
``engine.retrieval.capsule`` does the same for a Context Capsule. The MCP
tools, the REST API behind them and the command line call these and only
show the id (``_meta`` or ``Trace: ID``), so the same request leaves the
same trace whichever surface asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from gno_trio.engine.context.face import ContextFace
from gno_trio.engine.search.face import SearchFace
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.request import SearchRequest
from gno_trio.engine.traces.face import TracesFace
from gno_trio.engine.traces.filters import capsule_filters, retrieval_filters

if TYPE_CHECKING:
    from gno_trio.engine.context.request import ContextRequest

Pipeline: TypeAlias = Literal["search", "vsearch", "query"]


@dataclass(frozen=True, slots=True)
class Traced:
    """A retrieval's answer and its trace id (``None`` when tracing is off or it failed)."""

    result: dict[str, Any]
    trace_id: str | None


class Retrieval:
    """Retrievals and the traces recording them, over the services that do each part."""

    def __init__(self, search: SearchFace, capsules: ContextFace, traces: TracesFace) -> None:
        self._search = search
        self._capsules = capsules
        self._traces = traces

    def run(
        self, pipeline: Pipeline, request: SearchRequest, options: QueryOptions | None = None
    ) -> Traced:
        """Run one ranked retrieval (``options`` are ``query``'s) and record its trace."""
        if pipeline == "search":
            result = self._search.lexical(request)
        elif pipeline == "vsearch":
            result = self._search.vector(request)
        else:
            result = self._search.query(request, options)
        if not self._traces.enabled:
            return Traced(result, None)  # off: no id, no fingerprint, no copy of the filters
        trace_id = self._traces.record_retrieval(
            pipeline=pipeline,
            query=request.query,
            filters=retrieval_filters(request, options),
            result=result,
        )
        return Traced(result, trace_id)

    def capsule(self, request: ContextRequest) -> Traced:
        """Compile a Context Capsule and record it as one finished trace."""
        capsule = self._capsules.compile(request)
        if not self._traces.enabled:
            return Traced(capsule, None)
        trace_id = self._traces.record_capsule(
            pipeline="context",
            goal=request.goal,
            query=request.query or request.goal,
            filters=capsule_filters(request),
            capsule=capsule,
        )
        return Traced(capsule, trace_id)


__all__ = ["Pipeline", "Retrieval", "Traced"]
