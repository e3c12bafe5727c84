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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gno_trio.engine.reads.activation import activation
from gno_trio.engine.reads.bootstrap import bootstrap
from gno_trio.engine.reads.semantic_facts import (
    ADD_COLLECTION,
    NO_MODELS,
    PRESET,
    SYNC,
    SemanticFacts,
)
from gno_trio.engine.search.boosts import content_type_boost
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.journal import JournalStore


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
        detail = NO_MODELS if facts is None else facts.summary()
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


def health(counts: Mapping[str, int], failing: int, report: Mapping[str, Any]) -> dict[str, Any]:
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
            "status": "warn" if failing else "ok",
            "summary": f"{failing} files could not be indexed",
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


def idle_watcher(last_sync: str | None) -> dict[str, Any]:
    """GNO's ``background.watcher`` while no resident follows the folders."""
    return {
        "expectedCollections": [],
        "activeCollections": [],
        "failedCollections": [],
        "queuedCollections": [],
        "syncingCollections": [],
        "lastEventAt": None,
        "lastSyncAt": last_sync,
    }


def background(last_sync: str | None, facts: SemanticFacts | None = None) -> dict[str, Any]:
    """Background work: no file watcher, no event stream; the embedding backlog.

    ``running`` is about this process: a direct ``status`` runs no embedder
    (a resident ``serve`` embeds in its own process). The engine puts the
    watching resident's report in place of the idle watcher when there is one.
    """
    return {
        "watcher": idle_watcher(last_sync),
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


def generations(changes: JournalStore) -> dict[str, int]:
    """The change-journal sequence at the last content change and at the last change of any kind."""
    index, content = changes.generations()
    return {"content": content, "index": index}


def _no_model_loads() -> dict[str, int]:
    from gno_trio.engine.vectors.loads import STATUS_FIELDS  # (a lexical command imports none)

    return dict.fromkeys(STATUS_FIELDS, 0)


def standalone_resident(
    mode: str,
    *,
    generation: Mapping[str, int],
    readers: Mapping[str, int] | None = None,
    jobs: Mapping[str, int] | None = None,
    models: Mapping[str, int] | None = None,
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
        "models": dict(models or _no_model_loads()),
        "jobs": dict(jobs or {"active": 0, "recent": 0, "failed": 0}),
        "generations": dict(generation),
    }


def readiness_fields(
    conn: Connection,
    counts: Mapping[str, int],
    *,
    failing: int,
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
        "health": health(counts, failing, report),
        "background": background(last_sync, semantic),
        "bootstrap": bootstrap(cache_dir, semantic),
        "resident": standalone_resident(
            "direct-cli", generation=generations(SQLITE_STORES.journal(conn))
        ),
    }


__all__: Sequence[str] = (
    "idle_watcher",
    "readiness_fields",
    "standalone_resident",
)
