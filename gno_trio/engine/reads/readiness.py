"""What ``status`` says about readiness, setup and the process, beyond raw counts.

GNO's ``status@1.0`` carries an activation report (is each collection
usable, stage by stage), onboarding steps, health checks, background work,
the bootstrap of models and runtime, the content-type boosts in effect and
the resident lifecycle. Every value here is a fact this engine checked or
knows, never a stand-in:

* the index and lexical stages are verified per collection (documents
  present; every active document in the full-text index), with the time
  each check took;
* this engine runs no models and no file watcher and applies no content-type
  boost, so those sections say exactly that (no preset models, nothing to
  download, nothing pending, no rules);
* the resident block describes a process that serves no listener; a
  surface that does (the HTTP gateway) or that knows its mode (stdio)
  replaces it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sqlite3
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from gno_trio.engine.search.lexical import unranked_documents

PRESET: Final = {"id": "lexical", "name": "Lexical search (BM25, no models)"}
ADD_COLLECTION: Final = "gno-trio collection add <path>"
SYNC: Final = "gno-trio update"
# The content-type boosts ranking applies: none (contentTypes in index.yml are kept, not used).
BOOST_RULES: Final[tuple[Mapping[str, Any], ...]] = ()
_NO_MODELS: Final = "This server uses no models: search is lexical (BM25) only."


def _instant(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _stage(
    status: str, code: str | None = None, timing: tuple[str, str, int] | None = None
) -> dict[str, Any]:
    started, completed, latency = timing if timing else (None, None, None)
    stage: dict[str, Any] = {
        "status": status,
        "startedAt": started,
        "completedAt": completed,
        "latencyMs": latency,
    }
    if code is not None:
        stage["code"] = code
    return stage


def _timed(check: Any) -> tuple[Any, tuple[str, str, int]]:
    started = datetime.now(UTC)
    clock = time.monotonic()
    outcome = check()
    latency = int((time.monotonic() - clock) * 1000)
    return outcome, (_instant(started), _instant(datetime.now(UTC)), latency)


def _collection_activation(conn: sqlite3.Connection, name: str, documents: int) -> dict[str, Any]:
    """Index and lexical stages for one collection, each checked against the database."""
    index_ok, index_time = _timed(lambda: documents > 0)
    remediation: dict[str, str] | None
    if not index_ok:
        index = _stage("failed", "no_documents", index_time)
        lexical = _stage("skipped")
        remediation = {
            "stage": "index",
            "code": "no_documents",
            "command": SYNC,
            "message": f"Collection {name} has no indexed documents; add files and sync it.",
        }
    else:
        index = _stage("passed", timing=index_time)

        def searchable() -> bool:
            return unranked_documents(conn, name) == 0

        in_sync, lexical_time = _timed(searchable)
        lexical = _stage(
            "passed" if in_sync else "failed",
            None if in_sync else "index_out_of_sync",
            lexical_time,
        )
        remediation = (
            None
            if in_sync
            else {
                "stage": "lexical",
                "code": "index_out_of_sync",
                "command": SYNC,
                "message": f"Some documents of {name} are missing from the full-text index.",
            }
        )
    ready = index["status"] == "passed" and lexical["status"] == "passed"
    return {
        "collection": name,
        "ready": ready,
        "generatedAt": _instant(datetime.now(UTC)),
        "stages": {
            "index": index,
            "lexical": lexical,
            "semantic": _stage("skipped"),
            "connector": _stage("skipped", "connector_not_requested"),
        },
        # No command can turn semantic search on in this build, so none is named.
        "semanticAvailability": {"status": "skipped", "code": "vector_unavailable", "command": ""},
        "remediation": remediation,
    }


def activation(conn: sqlite3.Connection, counts: Mapping[str, int]) -> dict[str, Any]:
    """GNO's activation report: which collections are usable, verified stage by stage."""
    collections = [_collection_activation(conn, name, n) for name, n in counts.items()]
    return {
        "schemaVersion": "1.0",
        "usable": any(item["ready"] for item in collections),
        "healthy": bool(collections) and all(item["ready"] for item in collections),
        "collections": collections,
        "connectors": [],
        "connectorProjection": {"total": 0, "projected": 0, "truncated": False},
    }


def onboarding(counts: Mapping[str, int]) -> dict[str, Any]:
    """Where first-time setup stands: add a collection, index it, done."""
    has_collection = bool(counts)
    has_documents = any(counts.values())
    if not has_collection:
        stage, headline, detail = (
            "add-collection",
            "Add a folder to search",
            f"No collection is configured yet: {ADD_COLLECTION}",
        )
    elif not has_documents:
        stage, headline, detail = (
            "indexing",
            "Index your collections",
            f"Collections are configured but hold no indexed documents yet: {SYNC}",
        )
    else:
        stage, headline, detail = "ready", "Ready to search", _NO_MODELS
    order = ("add-collection", "indexing", "ready")
    position = order.index(stage)

    def step_status(index: int) -> str:
        if index < position or stage == "ready":
            return "complete"
        return "current" if index == position else "upcoming"

    return {
        "ready": stage == "ready",
        "stage": stage,
        "headline": headline,
        "detail": detail,
        "suggestedCollections": [],
        "steps": [
            {
                "id": "add-collection",
                "title": "Add a collection",
                "status": step_status(0),
                "detail": f"{len(counts)} collections configured",
                "action": "add-collection",
            },
            {
                "id": "sync",
                "title": "Index documents",
                "status": step_status(1),
                "detail": f"{sum(counts.values())} documents indexed",
                "action": "sync",
            },
        ],
    }


def health(
    counts: Mapping[str, int], recent_errors: int, report: Mapping[str, Any]
) -> dict[str, Any]:
    """The checks behind ``healthy``, each with what to do about it."""
    checks: list[dict[str, Any]] = []
    if not counts:
        checks.append(
            {
                "id": "collections",
                "title": "Collections",
                "status": "error",
                "summary": "No collection is configured",
                "detail": ADD_COLLECTION,
                "actionLabel": "Add a collection",
                "actionKind": "add-collection",
            }
        )
    else:
        checks.append(
            {
                "id": "collections",
                "title": "Collections",
                "status": "ok",
                "summary": f"{len(counts)} collections configured",
                "detail": ", ".join(sorted(counts)),
            }
        )
    unready = [item["collection"] for item in report["collections"] if not item["ready"]]
    checks.append(
        {
            "id": "index",
            "title": "Index",
            "status": "warn" if unready else "ok",
            "summary": (
                f"Not searchable yet: {', '.join(unready)}"
                if unready
                else "Every collection is searchable"
            ),
            "detail": SYNC if unready else f"{sum(counts.values())} documents indexed",
            **({"actionLabel": "Sync", "actionKind": "sync"} if unready else {}),
        }
    )
    checks.append(
        {
            "id": "ingest-errors",
            "title": "Ingest errors",
            "status": "warn" if recent_errors else "ok",
            "summary": f"{recent_errors} files failed to index in the last 24 hours",
            "detail": "gno-trio status lists each file and its error",
        }
    )
    if not counts:
        state, summary = "setup-required", "Add a collection to start"
    elif any(check["status"] != "ok" for check in checks):
        state, summary = "needs-attention", "Some checks need attention"
    else:
        state, summary = "healthy", "Everything checked is fine"
    return {"state": state, "summary": summary, "checks": checks}


def background(last_sync: str | None) -> dict[str, Any]:
    """Background work: no file watcher, no embedding runs, no event stream."""
    return {
        "watcher": {
            "expectedCollections": [],
            "activeCollections": [],
            "failedCollections": [],
            "queuedCollections": [],
            "syncingCollections": [],
            "lastEventAt": None,
            "lastSyncAt": last_sync,
        },
        "embedding": {
            "available": False,
            "pendingDocCount": 0,
            "running": False,
            "nextRunAt": None,
            "lastRunAt": None,
            "lastResult": None,
        },
        "events": {"connectedClients": 0, "retryMs": 0},
    }


def _tree_size(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_size
            except OSError:
                continue
    return total


def _size_label(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def bootstrap(cache_dir: Path) -> dict[str, Any]:
    """Runtime, download policy, cache and models: Python, never a download, no models.

    GNO's contract knows one runtime kind (``bun``, installed by hand); this
    server needs none beside the Python running it, which ``summary`` and
    ``detail`` name.
    """
    size = _tree_size(cache_dir) if cache_dir.is_dir() else 0
    python = platform.python_version()
    return {
        "runtime": {
            "kind": "bun",
            "strategy": "manual-install-beta",
            "currentVersion": "",
            "requiredVersion": "",
            "ready": True,
            "managedByApp": False,
            "summary": f"No extra runtime needed: gno-trio runs on Python {python}",
            "detail": f"{platform.python_implementation()} {python}; nothing else to install.",
        },
        "policy": {
            "offline": True,
            "allowDownload": False,
            "source": "no-auto-download",
            "summary": "Nothing is ever downloaded at run time.",
        },
        "cache": {
            "path": str(cache_dir),
            "totalSizeBytes": size,
            "totalSizeLabel": _size_label(size),
        },
        "models": {
            "activePresetId": PRESET["id"],
            "activePresetName": PRESET["name"],
            "estimatedFootprint": None,
            "downloading": False,
            "cachedCount": 0,
            "totalCount": 0,
            "summary": _NO_MODELS,
            "entries": [],
        },
    }


def content_type_boost() -> dict[str, Any]:
    """The boosts ranking applies and a fingerprint of them (no path prefixes, as GNO redacts)."""
    rules = [dict(rule) for rule in BOOST_RULES]
    canonical = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return {"rulesFingerprint": hashlib.sha256(canonical.encode()).hexdigest(), "rules": rules}


def generations(conn: sqlite3.Connection) -> dict[str, int]:
    """The change-journal sequence at the last content change and at the last change of any kind."""
    row = conn.execute(
        "SELECT COALESCE(MAX(id), 0), COALESCE(MAX(CASE WHEN kind IN "
        "('create', 'update', 'reactivate') THEN id END), 0) FROM document_changes"
    ).fetchone()
    return {"content": int(row[1]), "index": int(row[0])}


def standalone_resident(
    mode: str,
    *,
    generation: Mapping[str, int],
    readers: Mapping[str, int] | None = None,
    jobs: Mapping[str, int] | None = None,
    active_requests: int = 0,
) -> dict[str, Any]:
    """``resident-status@1.0`` for a process with no listener (``stdio`` or ``direct-cli``)."""
    return {
        "schemaVersion": "1.0",
        "mode": mode,
        "resident": False,
        "uptimeSeconds": None,
        "listenerPort": None,
        "admission": {"state": "accepting", "activeRequests": active_requests},
        "shutdown": {"state": "none"},
        "transport": {
            "activeRequests": 0,
            "activeSessions": 0,
            "queuedRequests": 0,
            "maxConcurrentRequests": 0,
            "maxQueuedRequests": 0,
            "maxSessions": 0,
        },
        "readers": dict(readers or {"active": 0, "queued": 0, "limit": 0, "maxQueued": 0}),
        "models": dict.fromkeys(
            (
                "activeLeases",
                "leaseAcquisitions",
                "leaseReleases",
                "loadedModels",
                "loadAttempts",
                "loadSuccesses",
                "loadFailures",
                "inflightLoads",
            ),
            0,
        ),
        "jobs": dict(jobs or {"active": 0, "recent": 0, "failed": 0}),
        "generations": dict(generation),
    }


def readiness_fields(
    conn: sqlite3.Connection,
    counts: Mapping[str, int],
    *,
    recent_errors: int,
    last_sync: str | None,
    cache_dir: Path,
) -> dict[str, Any]:
    """Every ``status@1.0`` section beyond the counts, for a process serving no listener."""
    report = activation(conn, counts)
    return {
        "activePreset": dict(PRESET),
        "contentTypeBoost": content_type_boost(),
        "activation": report,
        "onboarding": onboarding(counts),
        "health": health(counts, recent_errors, report),
        "background": background(last_sync),
        "bootstrap": bootstrap(cache_dir),
        "resident": standalone_resident("direct-cli", generation=generations(conn)),
    }


__all__: Sequence[str] = ("PRESET", "readiness_fields", "standalone_resident")
