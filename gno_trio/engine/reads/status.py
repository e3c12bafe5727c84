"""Index health: the full ``status`` report and the cheap ``peek`` snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gno_trio.engine.ingest.documents.records import listed_warnings
from gno_trio.engine.ingest.documents.records import listing as not_indexed_files
from gno_trio.engine.ingest.memory_projection import problems as memory_problems
from gno_trio.engine.reads.readiness import readiness_fields
from gno_trio.engine.reads.semantic_facts import SemanticFacts
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection


def status(
    conn: Connection,
    *,
    index_name: str,
    db_path: str,
    config_path: str | None,
    cache_dir: Path,
    embeddings: Mapping[str, tuple[int, int]] | None = None,
    semantic: SemanticFacts | None = None,
) -> dict[str, Any]:
    """Per-collection counts, last sync, files not indexed and frontmatter warnings.

    ``semantic`` describes the embedding side (see :class:`SemanticFacts`);
    its ``embeddings`` are used when ``embeddings`` is not given.

    Warnings are derived from the stored documents rather than kept in their
    own table, so they can never outlive the problem: fixing the file and
    syncing clears them.
    """
    if embeddings is None and semantic is not None:
        embeddings = semantic.embeddings
    stored = SQLITE_STORES.counts(conn)
    collections = []
    for row in stored.collections():
        name = row["name"]
        documents = stored.active_documents(name)
        chunks = stored.active_chunks(name)
        not_indexed = not_indexed_files(conn, name)
        warnings = [
            {"relPath": rel_path, "code": "FRONTMATTER_INVALID", "message": message}
            for rel_path, message in stored.frontmatter_errors(name, 50)
        ]
        warnings += listed_warnings(conn, name)
        if row["memory_managed"]:
            # Fact files the memory validator rejected (recall skips them).
            warnings += memory_problems(conn, name)
        collections.append(
            {
                "name": name,
                "path": row["path"],
                "documentCount": documents,
                "chunkCount": chunks,
                "embeddedCount": (embeddings or {}).get(name, (0, 0))[0],
                **not_indexed,
                "warnings": warnings,
                "lastSyncedAt": row["last_synced_at"],
                "memoryManaged": bool(row["memory_managed"]),
                "egressPolicy": row["egress_policy"],
            }
        )
    total_docs = stored.active_documents()
    total_chunks = stored.active_chunks()
    since = (datetime.now(UTC) - timedelta(days=1)).isoformat(timespec="milliseconds")
    # Files skipped for their type (a photo next to the notes) are no fault.
    recent_errors = stored.failures(since.replace("+00:00", "Z"))
    failing = sum(c["errorCount"] for c in collections)
    last_sync = last_synced_at(conn)
    vectors = any(embedded for embedded, _ in (embeddings or {}).values())
    from gno_trio.engine.vectors.sentences import disk_use  # numpy: only for a full status

    result: dict[str, Any] = {
        "indexName": index_name,
        "dbPath": db_path,
        "collections": collections,
        "totalDocuments": total_docs,
        "totalChunks": total_chunks,
        "embeddingBacklog": backlog_total(embeddings),
        "recentErrors": recent_errors,
        "lastUpdated": last_sync,
        # Healthy while every file of a type we index is indexed: an error that
        # still stands (an encrypted PDF) keeps counting after a day has passed.
        # Doctor raises its ingest-errors warning on this same verdict.
        "healthy": failing == 0,
        "capabilities": {
            "bm25": True,
            "vector": vectors,
            "hybrid": vectors,
            "answer": False,
        },
    }
    if config_path:
        result["configPath"] = config_path
    counts = {c["name"]: c["documentCount"] for c in collections}
    result.update(
        readiness_fields(
            conn,
            counts,
            failing=failing,
            last_sync=last_sync,
            cache_dir=cache_dir,
            semantic=semantic,
        )
    )
    # Sentence-window vectors (finer evidence for low-coverage queries) and their disk cost.
    result["background"]["embedding"]["sentenceWindows"] = disk_use(
        SQLITE_STORES.sentence_vectors(conn)
    )
    return result


def last_synced_at(conn: Connection) -> str | None:
    """When any collection was last synced (None: never)."""
    return SQLITE_STORES.counts(conn).last_synced_at()


def backlog_total(embeddings: Mapping[str, tuple[int, int]] | None) -> int:
    """Chunks waiting for a vector, over every collection."""
    return sum(waiting for _, waiting in (embeddings or {}).values())


def peek(
    conn: Connection,
    *,
    index_name: str,
    recent: int = 5,
    embeddings: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """A model-free snapshot cheap enough to call before every task."""
    counts = SQLITE_STORES.counts(conn)
    collections = counts.collection_count()
    documents = counts.active_documents()
    last = counts.last_indexed_at()
    recent_docs = [
        {"docid": r["docid"], "uri": r["uri"], "title": r["title"], "indexedAt": r["indexed_at"]}
        for r in counts.recently_indexed(recent)
    ]
    return {
        "schemaVersion": "1.0",
        "indexName": index_name,
        "initialized": collections > 0,
        "counts": {
            "collections": collections,
            "documents": documents,
            "chunks": counts.chunk_count(),
            "errors": counts.failures(),
        },
        "embeddingBacklog": backlog_total(embeddings),
        "lastIndexedAt": last,
        "recentDocuments": recent_docs,
    }
