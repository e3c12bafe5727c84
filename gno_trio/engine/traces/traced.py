"""Retrievals as surfaces ask for them: the answer, and the trace the engine recorded for it.

Recording a retrieval is an engine rule, not a surface's chore: ``retrieve``
runs ``search``, ``vsearch`` or ``query`` and, when ``retrievalTraces`` is
on, records it (filters read from the request by :mod:`.filters`) before
handing back the answer and the trace id; ``retrieve_context`` does the
same for a Context Capsule. The MCP tools, the REST API behind them and the
command line call these and only show the id (``_meta`` or ``Trace: ID``),
so the same request leaves the same trace whichever surface asked.
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


class TracedFace(SearchFace, ContextFace, TracesFace):
    def retrieve(
        self, pipeline: Pipeline, request: SearchRequest, options: QueryOptions | None = None
    ) -> Traced:
        """Run one ranked retrieval (``options`` are ``query``'s) and record its trace."""
        if pipeline == "search":
            result = self.search(request)
        elif pipeline == "vsearch":
            result = self.vsearch(request)
        else:
            result = self.query(request, options)
        if not self.tracing_enabled:
            return Traced(result, None)  # off: no id, no fingerprint, no copy of the filters
        trace_id = self.trace_retrieval(
            pipeline=pipeline,
            query=request.query,
            filters=retrieval_filters(request, options),
            result=result,
        )
        return Traced(result, trace_id)

    def retrieve_context(self, request: ContextRequest) -> Traced:
        """Compile a Context Capsule and record it as one finished trace."""
        capsule = self.context(request)
        if not self.tracing_enabled:
            return Traced(capsule, None)
        trace_id = self.trace_capsule(
            pipeline="context",
            goal=request.goal,
            query=request.query or request.goal,
            filters=capsule_filters(request),
            capsule=capsule,
        )
        return Traced(capsule, trace_id)


__all__ = ["Pipeline", "Traced", "TracedFace"]
