"""``gno_audit``: an offline, read-only knowledge-integrity report (``audit-report@1.0``).

The audit reads one snapshot of the documents in scope (by collection, path
prefix and tag) and runs the rules of the chosen categories over it: links
(every local link resolves; with ``orphanRoots``, every note is reachable),
provenance (declared ``source`` blocks are valid) and freshness (the index
matches the files; with ``maxAgeDays``, notes are recent enough). It never
writes: not to notes, the configuration, the index or any baseline.

The snapshot's index and source fingerprints are taken before and after the
rules; when they differ the audit runs once more, and if they differ again
the report says ``changed_during_audit`` rather than passing off a moving
target as healthy. A cancelled audit reports ``partial`` with what it had.
Findings are ordered canonically and cut at ``maxFindings``; totals stay
exact.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.reads.audit_rules import (
    RULES,
    RULES_FINGERPRINT,
    RuleOutcome,
    Snapshot,
    run_rule,
    utc_now,
)
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.uris import make_uri, parse_ref
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
CATEGORIES: Final = ("links", "provenance", "freshness")
DEFAULT_MAX_FINDINGS: Final = 100
MAX_FINDINGS: Final = 1000
MAX_SCOPE_ITEMS: Final = 256


def _instant(moment: Any) -> str:
    return str(moment.isoformat(timespec="milliseconds")).replace("+00:00", "Z")


def _scope_rows(
    conn: Connection, collections: Sequence[str], paths: Sequence[str], tags: Sequence[str]
) -> list[RowView]:
    documents = SQLITE_STORES.documents(conn)
    rows = documents.active(by_uri=True)
    if collections:
        wanted = set(collections)
        rows = [row for row in rows if row["collection"] in wanted]
    if paths:
        rows = [
            row
            for row in rows
            if any(
                str(row["uri"]).startswith(p)
                or str(row["rel_path"]).startswith(p)
                or f"{row['collection']}/{row['rel_path']}".startswith(p)
                for p in paths
            )
        ]
    if tags:
        tagged = documents.tagged([tag.casefold() for tag in tags])
        rows = [row for row in rows if int(row["id"]) in tagged]
    return rows


def _roots_as_uris(conn: Connection, refs: Sequence[str]) -> list[str]:
    uris = []
    for ref in refs:
        parsed = parse_ref(ref)
        if parsed.docid is not None:
            uri = SQLITE_STORES.documents(conn).active_uri_by_docid_prefix(parsed.docid)
            if uri is None:
                raise GnoError("NOT_FOUND", f"Orphan root not found: {ref}")
            uris.append(uri)
        else:
            assert parsed.collection is not None and parsed.rel_path is not None
            uris.append(make_uri(parsed.collection, parsed.rel_path))
    return uris


def _fingerprints(rows: Sequence[RowView], roots: dict[str, str]) -> tuple[str, str]:
    """(index, source) fingerprints of the scope: the rows as indexed, the files as on disk."""
    index = hash_canonical([[r["uri"], r["source_hash"], r["mirror_hash"]] for r in rows])
    source = hashlib.sha256()
    for row in rows:
        path = Path(roots.get(row["collection"], "/nonexistent")) / row["rel_path"]
        try:
            st = path.stat()
            source.update(f"{row['uri']}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except OSError:
            source.update(f"{row['uri']}\0missing\n".encode())
    return index, source.hexdigest()


def _sort_key(found: dict[str, Any]) -> tuple[str, ...]:
    return (
        found["category"],
        found["ruleId"],
        found["subject"],
        found["location"] or "",
        found["id"],
    )


def audit(
    conn: Connection,
    config: Config,
    index_name: str,
    *,
    category: str = "all",
    collections: Sequence[str] = (),
    paths: Sequence[str] = (),
    tags: Sequence[str] = (),
    max_findings: int = DEFAULT_MAX_FINDINGS,
    max_age_days: int | None = None,
    orphan_roots: Sequence[str] = (),
    orphan_ignore_prefixes: Sequence[str] = (),
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """The audit report of one scope (see the module docstring)."""
    from gno_trio import __version__
    from gno_trio.engine.context.lineage import config_fingerprint  # not loaded at start-up

    started_wall, started = utc_now(), time.perf_counter()
    if category not in (*CATEGORIES, "all"):
        raise GnoError("INVALID_INPUT", f"Unknown audit category: {category}")
    if not 1 <= max_findings <= MAX_FINDINGS:
        raise GnoError("INVALID_INPUT", f"maxFindings must be between 1 and {MAX_FINDINGS}")
    names = [name.strip().lower() for name in collections]
    known = {c.name for c in config.collections}
    unknown = sorted(set(names) - known)
    if unknown:
        raise GnoError("NOT_FOUND", f"Collection not found: {', '.join(unknown)}")
    chosen = list(CATEGORIES) if category == "all" else [category]
    roots = {c.name: str(c.path) for c in config.collections}
    stop = should_stop or (lambda: False)
    status = "complete"
    outcomes: list[RuleOutcome] = []
    rows: list[RowView] = []
    snapshot_ms = 0
    for attempt in range(2):
        snapshot_started = time.perf_counter()
        rows = _scope_rows(conn, names, paths, tags)
        before = _fingerprints(rows, roots)
        snapshot_ms = int((time.perf_counter() - snapshot_started) * 1000)
        snapshot = Snapshot(
            conn=conn,
            rows=rows,
            roots=roots,
            max_age_days=max_age_days,
            orphan_roots=_roots_as_uris(conn, orphan_roots),
            orphan_ignore_prefixes=tuple(orphan_ignore_prefixes),
            now=started_wall,
        )
        outcomes = []
        status = "complete"
        for name in chosen:
            for rule in RULES[name]:
                if stop():
                    status = "partial"
                    break
                outcomes.append(run_rule(rule, snapshot))
            if status == "partial":
                break
        after = _fingerprints(_scope_rows(conn, names, paths, tags), roots)
        if status == "partial" or after == before:
            break
        status = "changed_during_audit" if attempt == 1 else status
    index_fp, source_fp = _fingerprints(rows, roots)
    every = sorted((f for outcome in outcomes for f in outcome.findings), key=_sort_key)
    shown = every[:max_findings]
    statuses = [outcome.status for outcome in outcomes]
    rules_ms = sum(outcome.duration_ms for outcome in outcomes)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ruleSetVersion": "1.0",
        "status": status,
        "scope": {
            "categories": chosen,
            "collections": names,
            "paths": list(paths),
            "tags": list(tags),
            "indexName": index_name,
        },
        "capabilities": {
            "indexReadable": True,
            "sourcesReadable": all(Path(root).is_dir() for root in roots.values()),
            "linksGraphAvailable": True,
            "provenanceSchemaAvailable": True,
            "offline": True,
            "llmDisabled": True,
        },
        "fingerprints": {
            "config": config_fingerprint(config),
            "source": source_fp,
            "index": index_fp,
            "rules": RULES_FINGERPRINT,
        },
        "versions": {"gno": __version__[:64], "schema": "1.0", "ruleSet": "1.0"},
        "startedAt": _instant(started_wall),
        "completedAt": _instant(utc_now()),
        "durationMs": int((time.perf_counter() - started) * 1000),
        "rules": [
            {
                "ruleId": outcome.rule_id,
                "category": outcome.category,
                "status": outcome.status,
                "message": outcome.message,
                "findings": sorted(outcome.findings, key=_sort_key)[:max_findings],
                "findingCount": len(outcome.findings),
                "examinedCount": outcome.examined,
                "durationMs": outcome.duration_ms,
                "skipReason": outcome.skip_reason,
            }
            for outcome in outcomes
        ],
        "findings": shown,
        "counts": {
            "rules": {
                "pass": statuses.count("pass"),
                "fail": statuses.count("fail"),
                "skip": statuses.count("skip"),
                "unavailable": statuses.count("unavailable"),
                "inconclusive": statuses.count("inconclusive"),
                "total": len(statuses),
            },
            "findings": {
                "total": len(every),
                "returned": len(shown),
                "truncated": len(shown) < len(every),
            },
            "examined": {"documents": len(rows)},
        },
        "truncation": {"findingsTruncated": len(shown) < len(every), "maxFindings": max_findings},
        "timing": {
            "snapshotMs": snapshot_ms,
            "rulesMs": rules_ms,
            "totalMs": int((time.perf_counter() - started) * 1000),
        },
    }


__all__ = ["CATEGORIES", "DEFAULT_MAX_FINDINGS", "MAX_FINDINGS", "audit"]
