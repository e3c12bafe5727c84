"""The activation report: is each collection usable, stage by stage, and how long each check took.

The index and lexical stages are verified against the database (documents
present; every active document in the full-text index); the semantic stage
is described from stored facts, so ``status`` and ``doctor`` stay passive.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from gno_trio.engine.reads.semantic_facts import EMBED, SYNC, SemanticFacts
from gno_trio.engine.search.docrankers import document_ranker
from gno_trio.engine.store.database import Connection


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
    conn: Connection, name: str, documents: int, facts: SemanticFacts | None = None
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
            return document_ranker(conn).unranked(name) == 0

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
    conn: Connection, counts: Mapping[str, int], facts: SemanticFacts | None = None
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
