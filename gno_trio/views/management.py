"""Plain-text views of the engine's management answers, shared by the CLI and the tools.

The ``gno_trace_*``, ``gno_egress_*`` and ``gno_audit`` tools return these as
their text content, and the matching commands print them, so both surfaces
say the same thing in the same words.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def trace_list_text(result: dict[str, Any]) -> str:
    lines = [f"{len(result['traces'])} retrieval traces (newest first)"]
    lines += [
        f"  {t['traceId']} {t['status']} ({t['redactionMode']}, query of "
        f"{t['queryShape']['terms']} terms, {t['byteSize']} bytes)"
        for t in result["traces"]
    ]
    if result["nextCursor"]:
        lines.append(f"More: cursor={result['nextCursor']}")
    return "\n".join(lines)


def trace_show_text(result: dict[str, Any]) -> str:
    trace, totals = result["trace"], result["totals"]
    lines = [
        f"Trace {trace['traceId']}: {trace['status']}, {trace['redactionMode']} mode, "
        f"{totals['runs']} runs, {totals['events']} events, {totals['judgments']} judgments, "
        f"{totals['exports']} exports"
    ]
    if trace["queryText"] is not None:
        lines.append(f"Query: {trace['queryText']}")
    for run in result["runs"]:
        refs = run["payload"].get("ranked") or run["payload"].get("evidence") or []
        lines.append(f"  {run['kind']}: {len(refs)} evidence references")
        lines += [
            f"    {ref.get('rank', '-')}. {ref.get('uri', ref.get('docid'))}"
            + (f":{ref['startLine']}-{ref['endLine']}" if "startLine" in ref else "")
            for ref in refs[:10]
        ]
    return "\n".join(lines)


def trace_label_text(result: dict[str, Any]) -> str:
    judgment = result["judgment"]
    return (
        f"Judgment {result['result']}: {judgment['label']} {judgment['targetKind']} "
        f"on trace {judgment['traceId']}"
    )


def trace_export_text(result: dict[str, Any]) -> str:
    manifest = result["manifest"]
    return (
        f"Export {manifest['exportId']} ({result['result']}): {len(manifest['traceIds'])} traces, "
        f"artifact {manifest['artifactHash']}"
    )


def trace_delete_text(result: dict[str, Any]) -> str:
    if not result["deleted"]:
        return f"No retrieval trace {result['traceId']}; nothing deleted"
    counts = result["counts"]
    return (
        f"Deleted trace {result['traceId']} with {counts['runs']} runs, {counts['events']} "
        f"events, {counts['judgments']} judgments and {counts['exports']} exports"
    )


def trace_purge_text(result: dict[str, Any]) -> str:
    return (
        f"Deleted {result['traces']} traces ({result['runs']} runs, {result['events']} events, "
        f"{result['judgments']} judgments, {result['exports']} exports); physical cleanup: "
        f"{result['physicalCleanup']}"
    )


def egress_policy_text(result: dict[str, Any]) -> str:
    configured = result["configuredPolicy"] or "not set"
    return (
        f"Collection {result['collection']}: egress policy {result['effectivePolicy']} "
        f"(configured: {configured}, source: {result['source']}, "
        f"revision {result['revision']})"
    )


def egress_check_text(result: dict[str, Any]) -> str:
    decision = result["decision"]
    verdict = "allowed" if decision["allowed"] else "denied"
    lines = [
        f"Egress {result['mode']}: {verdict} ({decision['reason']}), effective policy "
        f"{result['lineage']['effectivePolicy']}"
    ]
    if result["allowedCollections"]:
        lines.append(f"  served: {', '.join(result['allowedCollections'])}")
    for entry in result["omittedCollections"]:
        lines.append(f"  omitted: {entry['collection']} ({entry['reason']})")
    if result["remediation"] is not None:
        lines.append(f"  remedy: {result['remediation']['message']}")
    return "\n".join(lines)


def egress_policy_set_text(result: dict[str, Any]) -> str:
    before, after = result["previous"], result["current"]
    return (
        f"Collection {after['collection']}: egress policy {result['change']} "
        f"({before['effectivePolicy']} -> {after['effectivePolicy']}, "
        f"revision {before['revision']} -> {after['revision']})"
    )


def _when(ms: int | None) -> str:
    if ms is None:
        return "none"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds")


def _receipt_line(receipt: dict[str, Any]) -> str:
    return (
        f"{receipt['auditId']} {_when(receipt['createdAtMs'])} {receipt['decision']} "
        f"{receipt['action']} -> {receipt['destinationZone']} ({receipt['contentClass']}, "
        f"{receipt['effectivePolicy']}): {receipt['reasonCode']}"
    )


def egress_audit_list_text(result: dict[str, Any]) -> str:
    lines = [f"{len(result['receipts'])} egress decision receipts (newest first)"]
    lines += [f"  {_receipt_line(receipt)}" for receipt in result["receipts"]]
    if result["nextCursor"]:
        lines.append(f"More: cursor={result['nextCursor']}")
    return "\n".join(lines)


def egress_audit_show_text(result: dict[str, Any]) -> str:
    return _receipt_line(result["receipt"])


def egress_audit_status_text(result: dict[str, Any]) -> str:
    keep = result["retention"]
    return (
        f"Egress audit log: {result['receipts']} receipts, {result['bytes']} bytes "
        f"(oldest {_when(result['oldestCreatedAtMs'])}, "
        f"newest {_when(result['newestCreatedAtMs'])}); "
        f"kept {keep['maxAgeDays']} days, at most {keep['maxReceipts']} receipts and "
        f"{keep['maxBytes']} bytes"
    )


def egress_audit_removal_text(result: dict[str, Any]) -> str:
    what = (
        f"receipt {result['auditId']}" if "auditId" in result else f"{result['deleted']} receipts"
    )
    return f"Deleted {what}; physical cleanup: {result['physicalCleanup']}"


def audit_text(report: dict[str, Any]) -> str:
    counts = report["counts"]
    lines = [
        f"Audit {report['status']}: {counts['rules']['total']} rules "
        f"({counts['rules']['pass']} pass, {counts['rules']['fail']} fail, "
        f"{counts['rules']['skip']} skipped, {counts['rules']['unavailable']} unavailable) over "
        f"{counts['examined']['documents']} documents; {counts['findings']['total']} findings"
    ]
    for rule in report["rules"]:
        why = f" ({rule['skipReason']})" if rule["skipReason"] else ""
        lines.append(f"  {rule['ruleId']}: {rule['status']}{why} - {rule['message']}")
    for found in report["findings"]:
        where = f" {found['location']}" if found["location"] else ""
        lines.append(f"  [{found['severity']}] {found['subject']}{where}: {found['message']}")
    if counts["findings"]["truncated"]:
        lines.append(f"  ... {counts['findings']['total'] - counts['findings']['returned']} more")
    return "\n".join(lines)


__all__ = [
    "audit_text",
    "egress_audit_list_text",
    "egress_audit_removal_text",
    "egress_audit_show_text",
    "egress_audit_status_text",
    "egress_check_text",
    "egress_policy_set_text",
    "egress_policy_text",
    "trace_delete_text",
    "trace_export_text",
    "trace_label_text",
    "trace_list_text",
    "trace_purge_text",
    "trace_show_text",
]
