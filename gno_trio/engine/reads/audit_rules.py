"""The rules of the knowledge-integrity audit, each over one snapshot of the scope.

A rule examines documents and answers a status (``pass``, ``fail``,
``skip`` with a reason, ``unavailable`` when its evidence cannot be read)
and its findings. Rules only read: index rows, mirror text, and ``stat`` of
source files; none opens a file for writing or a network connection.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.graph.links import Resolver, summary
from gno_trio.engine.ingest.capture_request import clean_source
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.uris import disk_path
from gno_trio.errors import GnoError

DAY_NS: Final = 86_400 * 10**9


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The documents in scope (index rows), their collection roots, and the audit inputs."""

    conn: Connection
    rows: Sequence[RowView]
    roots: Mapping[str, str]
    max_age_days: int | None
    orphan_roots: Sequence[str]
    orphan_ignore_prefixes: Sequence[str]
    now: datetime


@dataclass(slots=True)
class RuleOutcome:
    rule_id: str
    category: str
    status: str
    message: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    examined: int = 0
    duration_ms: int = 0
    skip_reason: str | None = None


def finding(
    rule_id: str,
    category: str,
    severity: str,
    subject: str,
    location: str | None,
    message: str,
    evidence: list[dict[str, str]],
    guidance: list[str],
) -> dict[str, Any]:
    """One finding; its id hashes the rule, subject, location and evidence (never the clock)."""
    evidence_fingerprint = hash_canonical(evidence)
    return {
        "id": hash_canonical(
            {
                "ruleId": rule_id,
                "subject": subject,
                "location": location,
                "evidence": evidence_fingerprint,
            }
        ),
        "ruleId": rule_id,
        "category": category,
        "severity": severity,
        "subject": subject[:2048],
        "location": location,
        "message": message[:512],
        "evidence": evidence[:8],
        "guidance": guidance[:4],
        "evidenceFingerprint": evidence_fingerprint,
    }


def _links_resolve(snapshot: Snapshot) -> RuleOutcome:
    outcome = RuleOutcome("links.local-targets", "links", "pass", "")
    links = SQLITE_STORES.links(snapshot.conn)
    resolver = Resolver(links)
    for row in snapshot.rows:
        source = summary(row)
        outcome.examined += 1
        for link in links.links_of(int(row["id"]), None):
            if resolver.resolve(link["kind"], link["target"], link["collection"], source):
                continue
            written = (
                f"{link['collection']}:{link['target']}" if link["collection"] else link["target"]
            )
            outcome.findings.append(
                finding(
                    outcome.rule_id,
                    "links",
                    "warning",
                    source.uri,
                    f"L{link['line']}",
                    f"{link['kind']} link to {written} does not resolve to an indexed document",
                    [{"kind": f"{link['kind']}_link", "summary": written[:512], "uri": source.uri}],
                    ["Fix the link target, or index the note it means"],
                )
            )
    broken = len(outcome.findings)
    outcome.status = "fail" if broken else "pass"
    outcome.message = f"{broken} links do not resolve" if broken else "Every local link resolves"
    return outcome


def _orphans(snapshot: Snapshot) -> RuleOutcome:
    outcome = RuleOutcome("links.orphans", "links", "skip", "No orphanRoots given")
    if not snapshot.orphan_roots:
        outcome.skip_reason = (
            "Orphan detection needs orphanRoots (the notes everything should reach)"
        )
        return outcome
    links = SQLITE_STORES.links(snapshot.conn)
    resolver = Resolver(links)
    by_uri = {row["uri"]: row for row in snapshot.rows}
    reached = {uri for uri in snapshot.orphan_roots if uri in by_uri}
    frontier = list(reached)
    while frontier:
        uri = frontier.pop()
        source = summary(by_uri[uri])
        for link in links.links_of(int(by_uri[uri]["id"]), None):
            target = resolver.resolve(link["kind"], link["target"], link["collection"], source)
            if target is not None and target.uri in by_uri and target.uri not in reached:
                reached.add(target.uri)
                frontier.append(target.uri)
    for row in snapshot.rows:
        outcome.examined += 1
        uri = str(row["uri"])
        if uri in reached or any(uri.startswith(p) for p in snapshot.orphan_ignore_prefixes):
            continue
        outcome.findings.append(
            finding(
                outcome.rule_id,
                "links",
                "info",
                uri,
                None,
                "No link path from the orphan roots reaches this note",
                [
                    {
                        "kind": "unreached",
                        "summary": "not reachable from the orphan roots",
                        "uri": uri,
                    }
                ],
                ["Link it from a note the roots reach, or add its prefix to orphanIgnorePrefixes"],
            )
        )
    outcome.status = "fail" if outcome.findings else "pass"
    outcome.message = f"{len(outcome.findings)} notes are unreachable from the roots"
    return outcome


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def _provenance(snapshot: Snapshot) -> RuleOutcome:
    outcome = RuleOutcome("provenance.declared-source", "provenance", "pass", "")
    for row in snapshot.rows:
        if row["frontmatter_error"]:
            outcome.examined += 1
            outcome.findings.append(
                finding(
                    outcome.rule_id,
                    "provenance",
                    "warning",
                    row["uri"],
                    "L1",
                    "The frontmatter does not parse, so declared provenance cannot be checked",
                    [{"kind": "frontmatter", "summary": str(row["frontmatter_error"])[:512]}],
                    ["Repair the YAML frontmatter block"],
                )
            )
            continue
        text = SQLITE_STORES.documents(snapshot.conn).mirror(row["mirror_hash"])
        if text is None or not text.startswith("---"):
            continue
        declared = extract_meta(text, row["rel_path"]).frontmatter.get("source")
        if declared is None:
            continue
        outcome.examined += 1
        problem: str | None = None
        if not isinstance(declared, Mapping):
            problem = "source must be a mapping of provenance fields"
        else:
            try:
                clean_source({str(k): _plain(v) for k, v in declared.items()})
            except GnoError as error:
                problem = error.message
        if problem is not None:
            outcome.findings.append(
                finding(
                    outcome.rule_id,
                    "provenance",
                    "error",
                    row["uri"],
                    None,
                    "Declared provenance is invalid",
                    [{"kind": "source_block", "summary": problem[:512], "uri": row["uri"]}],
                    ["Fix the frontmatter source block (kind, capturedAt, url ...)"],
                )
            )
    outcome.status = "fail" if outcome.findings else "pass"
    outcome.message = (
        f"{len(outcome.findings)} notes declare invalid provenance"
        if outcome.findings
        else f"{outcome.examined} declared provenance blocks are valid"
    )
    return outcome


def _stat(snapshot: Snapshot, row: RowView) -> os.stat_result | None:
    root = snapshot.roots.get(str(row["collection"]))
    if root is None:
        return None
    try:
        return (Path(root) / disk_path(str(row["rel_path"]))).stat()
    except OSError:
        return None


def _freshness(snapshot: Snapshot) -> RuleOutcome:
    outcome = RuleOutcome("freshness.index-current", "freshness", "pass", "")
    available = [name for name, root in snapshot.roots.items() if Path(root).is_dir()]
    if snapshot.rows and not available:
        outcome.status = "unavailable"
        outcome.message = "No collection folder is readable, so freshness cannot be checked"
        outcome.skip_reason = "collection folders unavailable"
        return outcome
    for row in snapshot.rows:
        outcome.examined += 1
        st = _stat(snapshot, row)
        if st is None:
            summary_text, severity = "the source file is gone", "error"
        elif st.st_size != row["source_size"] or st.st_mtime_ns != row["source_mtime_ns"]:
            summary_text, severity = "the source file changed after it was indexed", "warning"
        else:
            continue
        outcome.findings.append(
            finding(
                outcome.rule_id,
                "freshness",
                severity,
                row["uri"],
                None,
                f"The index is behind: {summary_text}",
                [{"kind": "source_state", "summary": summary_text, "uri": row["uri"]}],
                ["Run gno-trio update (or gno_sync) to re-index the collection"],
            )
        )
    outcome.status = "fail" if outcome.findings else "pass"
    outcome.message = f"{len(outcome.findings)} indexed notes are behind their files"
    return outcome


def _max_age(snapshot: Snapshot) -> RuleOutcome:
    outcome = RuleOutcome("freshness.max-age", "freshness", "skip", "No maxAgeDays given")
    if snapshot.max_age_days is None:
        outcome.skip_reason = "Age is only judged against an explicit maxAgeDays"
        return outcome
    limit = int(snapshot.now.timestamp() * 10**9) - snapshot.max_age_days * DAY_NS
    for row in snapshot.rows:
        outcome.examined += 1
        if int(row["source_mtime_ns"]) >= limit:
            continue
        outcome.findings.append(
            finding(
                outcome.rule_id,
                "freshness",
                "info",
                row["uri"],
                None,
                f"Not modified in the last {snapshot.max_age_days} days",
                [
                    {
                        "kind": "modified_at",
                        "summary": str(row["source_mtime"])[:512],
                        "uri": row["uri"],
                    }
                ],
                ["Review whether the note is still current"],
            )
        )
    outcome.status = "fail" if outcome.findings else "pass"
    outcome.message = f"{len(outcome.findings)} notes are older than {snapshot.max_age_days} days"
    return outcome


RULES: Final[dict[str, tuple[Callable[[Snapshot], RuleOutcome], ...]]] = {
    "links": (_links_resolve, _orphans),
    "provenance": (_provenance,),
    "freshness": (_freshness, _max_age),
}
RULES_FINGERPRINT: Final = hash_canonical(
    {category: [rule.__name__ for rule in rules] for category, rules in RULES.items()}
    | {"version": "1.0"}
)


def run_rule(rule: Callable[[Snapshot], RuleOutcome], snapshot: Snapshot) -> RuleOutcome:
    started = time.perf_counter()
    outcome = rule(snapshot)
    outcome.duration_ms = int((time.perf_counter() - started) * 1000)
    return outcome


def utc_now() -> datetime:
    return datetime.now(UTC)


__all__ = [
    "RULES",
    "RULES_FINGERPRINT",
    "RuleOutcome",
    "Snapshot",
    "finding",
    "run_rule",
    "utc_now",
]
