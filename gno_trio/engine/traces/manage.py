"""Judging and exporting stored traces: explicit labels and deterministic agentic receipts.

A ``relevant`` or ``irrelevant`` label must name evidence the trace recorded
(the same document, and for a span or chunk the same lines or chunk); a
``missing_expected`` label names a document the retrieval should have found
and accepts only a content-free identity: a ``gno://`` URI, a docid or a
source hash, never a filesystem path or text. Labels are append-only and a
retry with the same key is answered ``duplicate``.

An export copies one or more finished traces, in trace-id order, into one
``agentic-receipt`` artifact whose hash identifies it: exporting the same
traces again reuses the stored receipt. Open or missing traces are refused.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.config.features import TraceRetention
from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.store.traces import TraceStore
from gno_trio.engine.traces import store
from gno_trio.engine.traces.recorder import now_ms, sha256
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

EXPORT_FORMAT: Final = "agentic-receipt"
MAX_EXPORT_TRACES: Final = 1000
SECRET_KEY: Final = "judgment-redaction-secret"
_SHA256: Final = re.compile(r"[a-f0-9]{64}")
_DOCID: Final = re.compile(r"#[a-f0-9]{6,8}")
_IDENTITY_KEYS: Final = ("docid", "sourceHash", "mirrorHash", "uri", "seq", "startLine", "endLine")
_TARGET_KEYS: Final = (*_IDENTITY_KEYS, "plannerRank", "passageHash", "sources", "graphExpanded")


def _recorded_evidence(traces: TraceStore, trace_id: str) -> list[tuple[str, dict[str, Any]]]:
    """Every evidence reference the trace's runs hold, with the run that holds it."""
    runs, _ = store.records(traces, trace_id, "run")
    found = []
    for run in runs:
        payload = run["payload"]
        for ref in payload.get("ranked", []) + payload.get("evidence", []):
            found.append((str(run["runId"]), ref))
    return found


def _target_uri(target_ref: str) -> tuple[str | None, str | None]:
    """The URI or docid a label's ``targetRef`` names (``INVALID_INPUT`` for anything else)."""
    if _DOCID.fullmatch(target_ref):
        return None, target_ref
    try:
        ref = parse_ref(target_ref)
    except GnoError:
        raise GnoError(
            "INVALID_INPUT", f"targetRef is not a document reference: {target_ref}"
        ) from None
    if ref.docid is not None:
        return None, ref.docid
    return ref.uri, None


def _matches(
    ref: Mapping[str, Any],
    *,
    uri: str | None,
    docid: str | None,
    kind: str,
    lines: tuple[int, int] | None,
    source_hash: str | None,
) -> bool:
    if uri is not None and ref.get("uri") != uri:
        return False
    if docid is not None and not str(ref.get("docid", "")).startswith(docid):
        return False
    if source_hash is not None and ref.get("sourceHash") != source_hash:
        return False
    if kind == "span":
        return lines is not None and (ref.get("startLine"), ref.get("endLine")) == lines
    if kind == "chunk":
        return "seq" in ref
    return True


def _missing_target(target_ref: str, docid: str | None, source_hash: str | None) -> dict[str, Any]:
    if target_ref.startswith(("/", "~", "\\", "file:")) or "\\" in target_ref:
        raise GnoError(
            "INVALID_INPUT", "missing_expected takes a gno:// URI, docid or source hash, not a path"
        )
    if _SHA256.fullmatch(target_ref):
        return {"sourceHash": target_ref}
    if _DOCID.fullmatch(target_ref):
        return {"docid": target_ref}
    if target_ref.startswith("gno://") and len(target_ref) <= 4096:
        return {"uri": target_ref}
    if docid is not None:
        return {"docid": docid}
    if source_hash is not None:
        return {"sourceHash": source_hash}
    raise GnoError(
        "INVALID_INPUT", "missing_expected takes a gno:// URI, docid or source hash as targetRef"
    )


def _redaction_secret(traces: TraceStore) -> str:
    return store.state_value(traces, SECRET_KEY, lambda: uuid.uuid4().hex + uuid.uuid4().hex)


@dataclass(frozen=True, slots=True)
class Judgment:
    """One explicit judgment as a caller states it (``gno_trace_label``'s arguments)."""

    label: str
    target_ref: str
    target_kind: str = "document"
    start_line: int | None = None
    end_line: int | None = None
    source_hash: str | None = None
    docid: str | None = None
    idempotency_key: str | None = None


def label(
    traces: TraceStore, trace_id: str, judgment: Judgment, *, retention: TraceRetention
) -> dict[str, Any]:
    """``retrieval-trace-judgment@1.0``: one explicit judgment appended to a trace."""
    label, target_ref, target_kind = judgment.label, judgment.target_ref, judgment.target_kind
    start_line, end_line = judgment.start_line, judgment.end_line
    source_hash, docid = judgment.source_hash, judgment.docid
    idempotency_key = judgment.idempotency_key
    row = store.trace_row(traces, trace_id)
    creation = json.loads(row["creation"])
    if (start_line is None) != (end_line is None):
        raise GnoError("INVALID_INPUT", "startLine and endLine go together")
    if start_line is not None and end_line is not None and start_line > end_line:
        raise GnoError("INVALID_INPUT", "endLine must not precede startLine")
    if target_kind == "span" and start_line is None:
        raise GnoError("INVALID_INPUT", "a span label needs startLine and endLine")
    run_id: str | None = None
    if label == "missing_expected":
        if target_kind != "document":
            raise GnoError("INVALID_INPUT", "missing_expected labels name a whole document")
        target = _missing_target(target_ref, docid, source_hash)
    else:
        uri, named_docid = _target_uri(target_ref)
        lines = (start_line, end_line) if start_line is not None and end_line is not None else None
        matched = [
            (run, ref)
            for run, ref in _recorded_evidence(traces, trace_id)
            if _matches(
                ref,
                uri=uri,
                docid=named_docid or docid,
                kind=target_kind,
                lines=lines,
                source_hash=source_hash,
            )
        ]
        if not matched:
            raise GnoError(
                "INVALID_INPUT",
                f"{target_ref} is not {target_kind} evidence recorded in trace {trace_id}",
            )
        run_id, ref = matched[0]
        keys = (
            _IDENTITY_KEYS
            if target_kind != "document"
            else ("docid", "sourceHash", "mirrorHash", "uri")
        )
        target = {key: ref[key] for key in keys if key in ref}
    shown_ref = target_ref
    if creation["redactionMode"] == "metadata":
        shown_ref = "redacted:" + sha256(f"{_redaction_secret(traces)}\0{target_ref}")
    key = idempotency_key or hash_canonical(
        {"label": label, "targetKind": target_kind, "target": target}
    )
    moment = now_ms()
    record_id = str(uuid.uuid4())
    target_text = store.dumps(target)
    body: dict[str, Any] = {
        "judgmentId": record_id,
        "traceId": trace_id,
        "runId": run_id,
        "idempotencyKey": key,
        "label": label,
        "targetKind": target_kind,
        "targetRef": shown_ref,
        "target": target,
        "createdAtMs": moment,
        "targetBytes": store.size_of(target_text),
    }
    body["canonicalDigest"] = hash_canonical(
        {"traceId": trace_id, "label": label, "targetKind": target_kind, "target": target}
    )
    result, stored = store.append(
        traces,
        trace_id,
        "judgment",
        body,
        idempotency_key=key,
        record_id=record_id,
        retention=retention,
        moment=moment,
    )
    return {"schemaVersion": store.SCHEMA_VERSION, "result": result, "judgment": stored}


def export_scope(traces: TraceStore, trace_ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """The sorted, distinct trace ids of an export and the collections their lineage names.

    ``NOT_FOUND`` for a missing trace and ``INVALID_INPUT`` for one still
    open, both before any policy is evaluated.
    """
    wanted = sorted(set(trace_ids))
    if not 1 <= len(wanted) <= MAX_EXPORT_TRACES:
        raise GnoError("INVALID_INPUT", f"traceIds must name 1 to {MAX_EXPORT_TRACES} traces")
    moment = now_ms()
    store.settle(traces, wanted, moment)
    collections: set[str] = set()
    for trace_id in wanted:
        row = store.trace_row(traces, trace_id)
        if store.status_of(row, moment) not in store.TERMINAL:
            raise GnoError(
                "INVALID_INPUT",
                f"Retrieval trace {trace_id} is still open; export it once it has finished",
            )
        lineage = json.loads(row["creation"]).get("egressLineage") or {}
        collections.update(source["collection"] for source in lineage.get("sources", []))
    return wanted, sorted(collections)


def export(
    traces: TraceStore, trace_ids: Sequence[str], lineage: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``retrieval-trace-export@1.0`` for already checked, finished traces."""
    moment = now_ms()
    copied = []
    for trace_id in trace_ids:
        row = store.trace_row(traces, trace_id)
        copied.append(
            {
                "trace": store.trace_object(row, moment),
                "runs": store.records(traces, trace_id, "run")[0],
                "events": store.records(traces, trace_id, "event")[0],
                "judgments": store.records(traces, trace_id, "judgment")[0],
            }
        )
    artifact: dict[str, Any] = {"schemaVersion": store.SCHEMA_VERSION, "format": EXPORT_FORMAT}
    if lineage is not None:
        artifact["egressLineage"] = dict(lineage)
    artifact["traces"] = copied
    artifact_hash = hash_canonical(artifact)
    export_id = f"export-{artifact_hash[:32]}"
    with traces.writing():
        stored = traces.export(export_id)
        if stored is not None:
            return {
                "schemaVersion": store.SCHEMA_VERSION,
                "result": "duplicate",
                "manifest": stored[0],
                "artifact": stored[1],
            }
        manifest: dict[str, Any] = {
            "exportId": export_id,
            "traceIds": list(trace_ids),
            "format": EXPORT_FORMAT,
            "artifactHash": artifact_hash,
        }
        if lineage is not None:
            manifest["egressLineage"] = dict(lineage)
        manifest["createdAtMs"] = moment
        traces.insert_export(
            export_id,
            EXPORT_FORMAT,
            artifact_hash,
            moment,
            store.dumps(manifest),
            store.dumps(artifact),
            trace_ids,
        )
    return {
        "schemaVersion": store.SCHEMA_VERSION,
        "result": "inserted",
        "manifest": manifest,
        "artifact": artifact,
    }


__all__ = ["EXPORT_FORMAT", "MAX_EXPORT_TRACES", "Judgment", "export", "export_scope", "label"]
