"""What ``status`` says about readiness, setup and the process, beyond raw counts.

GNO's ``status@1.0`` carries an activation report (is each collection
usable, stage by stage), onboarding steps, health checks, background work,
the bootstrap of models and runtime, the content-type boosts in effect and
the resident lifecycle. Every value here is a fact this engine checked or
knows, never a stand-in:

* the index and lexical stages are verified per collection (documents
  present; every active document in the full-text index), with the time
  each check took;
* the semantic side is described from stored facts, never by running a
  model (status stays passive, as GNO's is): the embed model in force, whether
  it can run here (its package installed, or an endpoint configured), its
  files and their size, and the chunks and documents still waiting for
  vectors; availability at run time stays ``semantic_not_checked``;
* there is no file watcher and no content-type boost, so those sections say
  exactly that (nothing pending, no rules);
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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from gno_trio.engine.search.lexical import unranked_documents

PRESET: Final = {"id": "lexical", "name": "Lexical search (BM25, no models)"}
ADD_COLLECTION: Final = "gno-trio collection add <path>"
SYNC: Final = "gno-trio update"
EMBED: Final = "gno-trio embed"
# The content-type boosts ranking applies: none (contentTypes in index.yml are kept, not used).
BOOST_RULES: Final[tuple[Mapping[str, Any], ...]] = ()
_NO_MODELS: Final = "This server uses no models: search is lexical (BM25) only."


@dataclass(frozen=True, slots=True)
class SemanticFacts:
    """What status knows of the embedding side without running a model.

    ``kind`` is ``bundled`` (the model inside an installed package),
    ``endpoint`` (an OpenAI-compatible server from the configuration) or
    ``unsupported`` (a URI only GNO's native runtime can run); ``runnable``
    says whether this server can embed with it at all.
    """

    embed_uri: str
    kind: str
    runnable: bool
    preset_id: str | None = None
    version: str | None = None
    path: str | None = None
    size_bytes: int | None = None
    pending_documents: int = 0
    embeddings: Mapping[str, tuple[int, int]] | None = None  # collection: (embedded, waiting)

    @property
    def waiting(self) -> int:
        return sum(waiting for _, waiting in (self.embeddings or {}).values())

    def preset(self) -> dict[str, str]:
        """The active preset: the configured one, else the bundled model with BM25."""
        if self.preset_id:
            return {"id": self.preset_id, "name": f"{self.preset_id} (embed: {self.embed_uri})"}
        if self.kind == "bundled":
            return {"id": "bundled", "name": "BM25 + bundled multilingual embeddings"}
        return {"id": "custom", "name": f"BM25 + {self.embed_uri}"}

    def summary(self) -> str:
        if not self.runnable:
            return (
                f"Embedding model {self.embed_uri} cannot run here; search is lexical (BM25) "
                f"until it can (gno-trio models list)."
            )
        where = {
            "bundled": f"bundled in the installed package (version {self.version})",
            "endpoint": "served by the configured endpoint",
        }.get(self.kind, "configured")
        waiting = f"; {self.waiting} chunks wait for vectors ({EMBED})" if self.waiting else ""
        return f"Embedding model {self.embed_uri} is {where}; nothing is downloaded{waiting}."


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


def _semantic(
    name: str, ready: bool, facts: SemanticFacts | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The semantic stage and availability of one collection, from its stored vectors.

    ``passed``: every chunk has a vector of the model in force. Whether the
    model answers right now is not checked (status never runs one), so the
    availability says ``semantic_not_checked`` then, as GNO's passive status does.
    """
    embedded, waiting = (facts.embeddings or {}).get(name, (0, 0)) if facts else (0, 0)
    if facts is None or not ready:
        stage = _stage("skipped")
        availability = {"status": "pending", "code": "semantic_not_checked", "command": SYNC}
    elif not facts.runnable:
        stage = _stage("skipped")
        availability = {
            "status": "pending",
            "code": "models_missing",
            "command": "gno-trio models list",
        }
    elif waiting:
        stage = _stage("pending")
        availability = {"status": "pending", "code": "embeddings_pending", "command": EMBED}
    else:
        passed, timing = _timed(lambda: embedded > 0)
        stage = _stage("passed" if passed else "skipped", timing=timing)
        availability = {
            "status": "pending",
            "code": "semantic_not_checked",
            "command": "gno-trio vsearch <query>",
        }
    return stage, availability


def _collection_activation(
    conn: sqlite3.Connection, name: str, documents: int, facts: SemanticFacts | None = None
) -> dict[str, Any]:
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
    semantic, availability = _semantic(name, ready, facts)
    return {
        "collection": name,
        "ready": ready,
        "generatedAt": _instant(datetime.now(UTC)),
        "stages": {
            "index": index,
            "lexical": lexical,
            "semantic": semantic,
            "connector": _stage("skipped", "connector_not_requested"),
        },
        "semanticAvailability": availability,
        "remediation": remediation,
    }


def activation(
    conn: sqlite3.Connection, counts: Mapping[str, int], facts: SemanticFacts | None = None
) -> dict[str, Any]:
    """GNO's activation report: which collections are usable, verified stage by stage."""
    collections = [_collection_activation(conn, name, n, facts) for name, n in counts.items()]
    return {
        "schemaVersion": "1.0",
        "usable": any(item["ready"] for item in collections),
        "healthy": bool(collections) and all(item["ready"] for item in collections),
        "collections": collections,
        "connectors": [],
        "connectorProjection": {"total": 0, "projected": 0, "truncated": False},
    }


def onboarding(counts: Mapping[str, int], facts: SemanticFacts | None = None) -> dict[str, Any]:
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
        detail = _NO_MODELS if facts is None else facts.summary()
        stage, headline = "ready", "Ready to search"
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


def background(last_sync: str | None, facts: SemanticFacts | None = None) -> dict[str, Any]:
    """Background work: no file watcher, no event stream; the embedding backlog.

    ``running`` is about this process: a direct ``status`` runs no embedder
    (a resident ``serve`` embeds in its own process).
    """
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
            "available": facts is not None and facts.runnable,
            "pendingDocCount": 0 if facts is None else facts.pending_documents,
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


def _models(facts: SemanticFacts | None) -> dict[str, Any]:
    """``bootstrap.models``: the embed role in force, its files, nothing downloading."""
    if facts is None:
        return {
            "activePresetId": PRESET["id"],
            "activePresetName": PRESET["name"],
            "estimatedFootprint": None,
            "downloading": False,
            "cachedCount": 0,
            "totalCount": 0,
            "summary": _NO_MODELS,
            "entries": [],
        }
    preset = facts.preset()
    label = {"bundled": "bundled", "endpoint": "endpoint"}.get(facts.kind, "unsupported here")
    return {
        "activePresetId": preset["id"],
        "activePresetName": preset["name"],
        "estimatedFootprint": None if facts.size_bytes is None else _size_label(facts.size_bytes),
        "downloading": False,
        "cachedCount": int(facts.runnable),
        "totalCount": 1,
        "summary": facts.summary(),
        "entries": [
            {
                "role": "embed",
                "uri": facts.embed_uri,
                "cached": facts.runnable,
                "path": facts.path,
                "sizeBytes": facts.size_bytes,
                "statusLabel": label if facts.runnable else f"{label}: cannot run",
            }
        ],
    }


def model_size(path: str | None) -> int | None:
    """Bytes of the model's files under ``path`` (None when there is no local copy)."""
    if path is None or not Path(path).is_dir():
        return None
    return _tree_size(Path(path))


def bootstrap(cache_dir: Path, facts: SemanticFacts | None = None) -> dict[str, Any]:
    """Runtime, download policy, cache and models: Python, never a download.

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
        "models": _models(facts),
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
    semantic: SemanticFacts | None = None,
) -> dict[str, Any]:
    """Every ``status@1.0`` section beyond the counts, for a process serving no listener."""
    report = activation(conn, counts, semantic)
    return {
        "activePreset": dict(PRESET) if semantic is None else semantic.preset(),
        "contentTypeBoost": content_type_boost(),
        "activation": report,
        "onboarding": onboarding(counts, semantic),
        "health": health(counts, recent_errors, report),
        "background": background(last_sync, semantic),
        "bootstrap": bootstrap(cache_dir, semantic),
        "resident": standalone_resident("direct-cli", generation=generations(conn)),
    }


__all__: Sequence[str] = (
    "PRESET",
    "SemanticFacts",
    "model_size",
    "readiness_fields",
    "standalone_resident",
)
