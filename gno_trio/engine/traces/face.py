"""``engine.traces``: retrieval traces, recorded by the retrieval services, and their management.

Recording methods (``record_retrieval``, ``record_read``, ``record_capsule``)
are called right after a successful retrieval (by :mod:`.traced`, and by the
surfaces for a read made under a trace); they return the
trace id (or whether a read was recorded) and never fail the retrieval: a
trace that cannot be written is simply not written. Management (list, show,
label, export, delete, purge) works whether or not recording is on, so
stored receipts stay inspectable and deletable after tracing is turned off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gno_trio.config.features import TraceRetention
from gno_trio.engine.egress import audit as egress_audit
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store.database import Connection, StoreError
from gno_trio.engine.traces import manage, store
from gno_trio.engine.traces.recorder import Recorder, capsule_evidence, now_ms, search_evidence
from gno_trio.errors import GnoError

logger = logging.getLogger("gno_trio.engine.traces")


class TracesFace:
    """The retrieval traces of an opened index."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel

    def _recorder(self, conn: Connection) -> Recorder | None:
        return Recorder.for_config(
            self._kernel.stores.traces(conn),
            self._kernel.stores.counts(conn),
            self._kernel.config,
            self._kernel.location.index_name,
        )

    @property
    def enabled(self) -> bool:
        """Whether retrieval traces are being recorded (``retrievalTraces.enabled``)."""
        settings = self._kernel.config.retrieval_traces
        return settings is not None and settings.enabled

    @property
    def _retention(self) -> TraceRetention:
        settings = self._kernel.config.retrieval_traces
        return (settings.retention if settings else None) or TraceRetention()

    # -- recording -------------------------------------------------------------------------

    def record_retrieval(
        self,
        *,
        pipeline: str,
        query: str,
        filters: Mapping[str, Any],
        result: Mapping[str, Any],
    ) -> str | None:
        """Record a search or query answer as a new open trace; its id, or None when off."""
        with self._kernel.connection() as c:
            recorder = self._recorder(c)
            if recorder is None:
                return None
            ranked = search_evidence(result.get("results", []))
            try:
                trace_id = recorder.start(
                    pipeline=pipeline,
                    query=query,
                    goal=None,
                    filters=filters,
                    uris=[ref["uri"] for ref in ranked],
                )
                meta = result.get("meta") or {}
                payload: dict[str, Any] = {"ranked": ranked}
                if meta.get("mode"):
                    payload["capabilities"] = [str(meta["mode"])]
                recorder.run(trace_id, "retrieval", payload)
            except (GnoError, StoreError) as exc:
                logger.warning("retrieval trace not recorded: %s", exc)
                return None
            return trace_id

    def record_read(self, trace_id: str, result: Mapping[str, Any]) -> bool:
        """Record the exact lines a read returned against an open trace; False if nothing was."""
        returned = result.get("returnedLines")
        with self._kernel.connection() as c:
            recorder = self._recorder(c)
            if recorder is None or not returned:
                return False
            try:
                row = store.trace_row(self._kernel.stores.traces(c), trace_id)
                if store.status_of(row, now_ms()) != "open":
                    return False
                ref = {
                    "docid": result["docid"],
                    "uri": result["uri"],
                    "sourceHash": result["source"]["sourceHash"],
                    "mirrorHash": result["conversion"]["mirrorHash"],
                    "startLine": int(returned["start"]),
                    "endLine": int(returned["end"]),
                }
                run_id = recorder.run(trace_id, "get", {"evidence": [ref]})
                recorder.event(trace_id, "open", {"evidence": [ref]}, run_id)
            except (GnoError, StoreError) as exc:
                logger.debug("read not recorded in trace %s: %s", trace_id, exc)
                return False
            return True

    def record_capsule(
        self,
        *,
        pipeline: str,
        goal: str,
        query: str,
        filters: Mapping[str, Any],
        capsule: Mapping[str, Any],
        retrieval: Mapping[str, Any] | None = None,
        outcome: str = "completed",
    ) -> str | None:
        """Record a Capsule (and the retrieval under it) as one finished trace."""
        with self._kernel.connection() as c:
            recorder = self._recorder(c)
            if recorder is None:
                return None
            evidence = capsule_evidence(capsule)
            try:
                trace_id = recorder.start(
                    pipeline=pipeline,
                    query=query,
                    goal=goal,
                    filters=filters,
                    uris=[ref["uri"] for ref in evidence],
                )
                if retrieval is not None:
                    ranked = search_evidence(retrieval.get("results", []))
                    recorder.run(trace_id, "retrieval", {"ranked": ranked})
                recorder.run(
                    trace_id,
                    "context",
                    {"evidence": evidence, "capsuleId": str(capsule["capsuleId"])},
                )
                recorder.complete(trace_id, outcome)
            except (GnoError, StoreError) as exc:
                logger.warning("capsule trace not recorded: %s", exc)
                return None
            return trace_id

    # -- management ------------------------------------------------------------------------

    def list(
        self,
        *,
        limit: int = store.LIST_DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``retrieval-trace-list@1.0``: newest-first summaries (no query or goal text)."""
        with self._kernel.connection() as c:
            return store.list_page(
                self._kernel.stores.traces(c), limit=limit, cursor=cursor, moment=now_ms()
            )

    def show(
        self,
        trace_id: str,
        *,
        detail_limit: int = store.DETAIL_DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """``retrieval-trace-show@1.0``: one trace with bounded sections and exact totals."""
        with self._kernel.connection() as c:
            return store.detail(
                self._kernel.stores.traces(c), trace_id, detail_limit=detail_limit, moment=now_ms()
            )

    def label(
        self,
        trace_id: str,
        judgment: manage.Judgment,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """``retrieval-trace-judgment@1.0``: one explicit judgment, under the write lease."""
        with self._kernel.writing(should_stop=should_stop), self._kernel.connection() as c:
            return manage.label(
                self._kernel.stores.traces(c), trace_id, judgment, retention=self._retention
            )

    def export(
        self,
        trace_ids: Sequence[str],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """``retrieval-trace-export@1.0``: finished traces as one agentic receipt.

        Missing (``NOT_FOUND``) and open traces are refused before the egress
        policy of their collections is judged for a local export (with a
        receipt in the egress audit); a refusal is ``EGRESS_DENIED``.
        """
        from gno_trio.engine.context.lineage import egress_lineage, policies_of

        with self._kernel.writing(should_stop=should_stop), self._kernel.connection() as c:
            wanted, collections = manage.export_scope(self._kernel.stores.traces(c), trace_ids)
            decision = egress_audit.judge(
                self._kernel.stores.egress_receipts(c),
                self._kernel.config.collections,
                collections=collections,
                action="export",
                zone="local_process",
                content_class="retrieval_trace",
                authenticated=True,
            )
            if not decision.allowed:
                raise GnoError(
                    "EGRESS_DENIED", f"Export refused by egress policy ({decision.reason})"
                )
            policies = policies_of(self._kernel.config)
            named = [name for name in collections if name in policies]
            lineage = egress_lineage(named, policies) if named else None
            return manage.export(self._kernel.stores.traces(c), wanted, lineage)

    def delete(
        self,
        trace_id: str,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """``retrieval-trace-delete@1.0``: one trace and everything it owns."""
        with self._kernel.writing(should_stop=should_stop), self._kernel.connection() as c:
            return store.delete(self._kernel.stores.traces(c), trace_id)

    def purge(
        self,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """``retrieval-trace-purge@1.0``: every trace, record and export."""
        with self._kernel.writing(should_stop=should_stop), self._kernel.connection() as c:
            return store.purge(self._kernel.stores.traces(c))


__all__ = ["TracesFace"]
