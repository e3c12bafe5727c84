"""Turning one retrieval, read or Capsule into trace records, with GNO's privacy projections.

Recording is opt-in (``retrievalTraces.enabled``) and costs nothing when off:
no id is made and nothing is hashed or written. When on, each successful
retrieval tool writes one trace: a ``query`` event, the run with its ranked
evidence (document identities, line spans, scores and ranks; never text),
the matching event, and for Capsules and answers a ``complete`` event.

``replay`` mode keeps the query and goal text and the filters so a trace can
be replayed; ``metadata`` mode keeps only their shape (characters, terms,
the type of each filter value). Evidence references carry identities and
coordinates in both modes; source text never enters a trace.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.config.features import RetrievalTraces, TraceRetention
from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.store.counts import IndexCounts
from gno_trio.engine.store.traces import TraceStore
from gno_trio.engine.traces import store

PIPELINE_VERSION: Final = "gno-trio-retrieval-v1"
NO_MODEL: Final = "gno-trio:no-model"
FILTER_KEYS: Final = (
    "limit",
    "minScore",
    "collection",
    "collections",
    "lang",
    "full",
    "lineNumbers",
    "tagsAll",
    "tagsAny",
    "since",
    "until",
    "categories",
    "author",
    "intent",
    "exclude",
    "noExpand",
    "noRerank",
    "candidateLimit",
    "explain",
    "graph",
    "noGraph",
    "queryLanguageHint",
    "queryModes",
    "uriPrefix",
)
"""The filter keys a trace keeps (GNO's retrieval-trace-filters); others are dropped."""
MAX_EVIDENCE: Final = 10_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_text(text: str) -> str:
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))


def text_shape(text: str | None) -> dict[str, int]:
    normalized = normalize_text(text or "")
    return {"characters": len(normalized), "terms": len(normalized.split())}


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def value_shape(value: object) -> dict[str, Any]:
    """The shape of a filter value: its type, and for arrays the count and item types."""
    kind = _type_name(value)
    if kind == "array":
        items = list(value)  # type: ignore[call-overload]
        return {
            "type": kind,
            "count": len(items),
            "itemTypes": sorted({_type_name(i) for i in items}),
        }
    return {"type": kind}


def kept_filters(filters: Mapping[str, Any]) -> dict[str, Any]:
    return {key: filters[key] for key in FILTER_KEYS if key in filters and filters[key] is not None}


def project_filters(mode: str, filters: Mapping[str, Any]) -> dict[str, Any]:
    kept = kept_filters(filters)
    if mode == "replay":
        return kept
    return {
        "shape": {
            "type": "object",
            "fields": {key: value_shape(kept[key]) for key in sorted(kept)},
        }
    }


def _collection_of(uri: str) -> str | None:
    rest = uri.removeprefix("gno://")
    return rest.split("/", 1)[0] if rest != uri and "/" in rest else None


def index_fingerprint(counts: IndexCounts, index_name: str) -> str:
    """A cheap identity of the indexed state: active documents and their newest change."""
    count, newest = counts.active_and_newest()
    return hash_canonical({"indexName": index_name, "documents": count, "newest": newest})


def search_evidence(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Evidence references of ranked search hits: identities, spans, scores and ranks."""
    refs: list[dict[str, Any]] = []
    for rank, hit in enumerate(results[:MAX_EVIDENCE], 1):
        ref: dict[str, Any] = {"docid": hit["docid"], "uri": hit["uri"]}
        source_hash = (hit.get("source") or {}).get("sourceHash")
        mirror_hash = (hit.get("conversion") or {}).get("mirrorHash")
        if source_hash:
            ref["sourceHash"] = source_hash
        if mirror_hash:
            ref["mirrorHash"] = mirror_hash
        span = hit.get("snippetRange")
        if span:
            ref["startLine"], ref["endLine"] = int(span["startLine"]), int(span["endLine"])
        ref["score"] = float(hit["score"])
        ref["rank"] = rank
        refs.append(ref)
    return refs


def capsule_evidence(capsule: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Evidence references of a Capsule's passages, in selection order."""
    refs = []
    for item in list(capsule["evidence"])[:MAX_EVIDENCE]:
        ref = {
            "docid": item["docid"],
            "uri": item["uri"],
            "sourceHash": item["sourceHash"],
            "mirrorHash": item["mirrorHash"],
            "startLine": item["startLine"],
            "endLine": item["endLine"],
            "passageHash": item["passageHash"],
            "rank": item["selectionRank"],
            "plannerRank": item["retrievalRank"],
        }
        if item.get("retrievalSources"):
            ref["sources"] = list(item["retrievalSources"])
        refs.append(ref)
    return refs


@dataclass(frozen=True, slots=True)
class Recorder:
    """Writes the traces of one index while recording is enabled."""

    traces: TraceStore
    counts: IndexCounts
    """Where the index's documents are counted (the fingerprint of the indexed state)."""
    config: Config
    index_name: str
    settings: RetrievalTraces

    @classmethod
    def for_config(
        cls, traces: TraceStore, counts: IndexCounts, config: Config, index_name: str
    ) -> Recorder | None:
        """A recorder when tracing is on, else ``None`` (and no work is done)."""
        settings = config.retrieval_traces
        if settings is None or not settings.enabled:
            return None
        return cls(traces, counts, config, index_name, settings)

    @property
    def retention(self) -> TraceRetention:
        return self.settings.retention or TraceRetention()

    @property
    def mode(self) -> str:
        return self.settings.redaction_mode or "metadata"

    def _lineage(self, collections: Iterable[str]) -> dict[str, Any] | None:
        from gno_trio.engine.context.lineage import egress_lineage, policies_of

        policies = policies_of(self.config)
        names = sorted({name for name in collections if name in policies}) or sorted(policies)
        if not names:
            return None
        return egress_lineage(names, policies)

    def start(
        self,
        *,
        pipeline: str,
        query: str,
        goal: str | None,
        filters: Mapping[str, Any],
        uris: Iterable[str],
    ) -> str:
        """Create an open trace and its ``query`` event; returns the new trace id."""
        # Loaded by the first trace recorded, not by every process that might record one.
        from gno_trio.engine.context.lineage import config_fingerprint

        moment = store.next_moment(self.traces, now_ms())
        trace_id = str(uuid.uuid4())
        replay = self.mode == "replay"
        query_text = normalize_text(query)
        goal_text = normalize_text(goal) if goal is not None else None
        scope = [name for uri in uris if (name := _collection_of(uri))]
        if isinstance(filters.get("collection"), str):
            scope.append(str(filters["collection"]).lower())
        creation: dict[str, Any] = {
            "traceId": trace_id,
            "schemaVersion": store.SCHEMA_VERSION,
            "redactionMode": self.mode,
            "replayCapable": replay,
            "queryText": query_text if replay else None,
            "queryDigest": sha256(query_text) if replay else None,
            "queryShape": text_shape(query_text),
            "goalText": goal_text if replay else None,
            "goalDigest": sha256(goal_text) if replay and goal_text is not None else None,
            "goalShape": text_shape(goal_text),
            "filters": project_filters(self.mode, filters),
            "fingerprints": {
                "pipeline": sha256(f"{PIPELINE_VERSION}:{pipeline}"),
                "model": sha256(NO_MODEL),
                "config": config_fingerprint(self.config),
                "index": index_fingerprint(self.counts, self.index_name),
            },
            "createdAtMs": moment,
            "expiresAtMs": moment + self.retention.max_age_days * store.DAY_MS,
        }
        lineage = self._lineage(scope)
        if lineage is not None:
            creation["egressLineage"] = lineage
        creation["creationDigest"] = hash_canonical(creation)
        store.create(self.traces, creation, self.retention, moment)
        self.event(trace_id, "query", {"filterFingerprint": hash_canonical(kept_filters(filters))})
        return trace_id

    def _write(
        self, trace_id: str, section: store.Section, kind: str, body: dict[str, Any], key: str
    ) -> dict[str, Any]:
        moment = now_ms()
        record_id = str(uuid.uuid4())
        id_field = {"run": "runId", "event": "eventId"}[section]
        payload_text = store.dumps(body["payload"])
        full = {
            id_field: record_id,
            "traceId": trace_id,
            **body,
            "idempotencyKey": key,
            "kind": kind,
            "createdAtMs": moment,
            "payloadBytes": store.size_of(payload_text),
        }
        full["canonicalDigest"] = hash_canonical(
            {"traceId": trace_id, "kind": kind, "payload": body["payload"], "key": key}
        )
        _, stored = store.append(
            self.traces,
            trace_id,
            section,
            full,
            idempotency_key=key,
            record_id=record_id,
            retention=self.retention,
            moment=moment,
        )
        return stored

    def event(
        self, trace_id: str, kind: str, payload: dict[str, Any], run_id: str | None = None
    ) -> None:
        self._write(
            trace_id,
            "event",
            kind,
            {"runId": run_id, "payload": payload},
            f"event:{kind}:{uuid.uuid4()}",
        )

    def run(self, trace_id: str, kind: str, payload: dict[str, Any]) -> str:
        """One run and its matching event; returns the run id."""
        stored = self._write(
            trace_id, "run", kind, {"payload": payload}, f"run:{kind}:{uuid.uuid4()}"
        )
        run_id = str(stored["runId"])
        self.event(trace_id, kind, payload, run_id)
        return run_id

    def complete(self, trace_id: str, outcome: str = "completed") -> None:
        self.event(trace_id, "complete", {"outcome": outcome})
        store.finalize(self.traces, trace_id, outcome, now_ms())


__all__ = [
    "FILTER_KEYS",
    "Recorder",
    "capsule_evidence",
    "normalize_text",
    "now_ms",
    "project_filters",
    "search_evidence",
    "sha256",
    "text_shape",
]
