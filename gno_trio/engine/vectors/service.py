"""The embedding services over a connection and a configuration.

Which model applies is worked out here (per collection: its own
``models.embed``, else the index's). :mod:`gno_trio.engine.vectors.face`
exposes these as engine methods; search over the vectors is the search
face's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gno_trio.config import Config
from gno_trio.engine.egress.policy import EGRESS_DENIED_CODE
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.vectors import storage
from gno_trio.engine.vectors.embedder import EmbeddingBackend
from gno_trio.engine.vectors.embedding import (
    DEFAULT_BATCH_SIZE,
    EmbedProgress,
    WriteGuard,
    embed_backlog,
    guarded_write,
)
from gno_trio.engine.vectors.endpoint import allowed_by_policy, is_endpoint_uri
from gno_trio.engine.vectors.models import (
    backend_for,
    configured_backend,
    embed_model_uri,
    inference_timeout_s,
)
from gno_trio.errors import GnoError


@dataclass(slots=True)
class EmbedRun:
    """What one ``embed`` did, over every model the collections use."""

    models: list[str] = field(default_factory=list)
    embedded: int = 0
    blank: int = 0
    errors: int = 0
    backlog: int = 0
    stopped: bool = False
    duration_s: float = 0.0
    skipped: list[dict[str, str]] = field(default_factory=list)
    last_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """GNO's ``embed --json`` fields, then ours."""
        result: dict[str, Any] = {
            "embedded": self.embedded,
            "errors": self.errors,
            "duration": round(self.duration_s, 3),
            "model": self.models[0] if len(self.models) == 1 else ", ".join(self.models),
            "searchAvailable": self.embedded > 0 or self.backlog == 0,
            "models": list(self.models),
            "blank": self.blank,
            "backlog": self.backlog,
            "stopped": self.stopped,
            "skipped": list(self.skipped),
        }
        if self.last_error is not None:
            result["lastError"] = self.last_error
        return result


def _groups(
    config: Config, names: Sequence[str] | None, model_uri: str | None = None
) -> dict[str, list[str]]:
    """Collections (all, or ``names``) grouped by the embed model URI they use.

    ``model_uri`` (``embed --model``) puts every collection under that one model.
    """
    wanted = list(names) if names else [c.name for c in config.collections]
    groups: dict[str, list[str]] = {}
    for name in wanted:
        found = config.collection(name)
        if found is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {name}")
        uri = model_uri or embed_model_uri(config, found.name)
        groups.setdefault(uri, []).append(found.name)
    return groups


def chosen_backend(
    config: Config, collection: str | None, model_uri: str | None = None
) -> EmbeddingBackend:
    """The embedder for ``collection``: ``model_uri`` when given, else the configured one."""
    if model_uri is None:
        return configured_backend(config, collection)
    if not model_uri.strip():
        raise GnoError("INVALID_INPUT", "--model must name a model URI")
    return backend_for(model_uri.strip(), timeout_s=inference_timeout_s(config))


def embed(
    conn: Connection,
    config: Config,
    names: Sequence[str] | None = None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    force: bool = False,
    should_stop: Callable[[], bool] | None = None,
    progress: EmbedProgress | None = None,
    guard: WriteGuard | None = None,
    model_uri: str | None = None,
) -> EmbedRun:
    """Embed the backlog of the collections (all when ``names`` is empty).

    A collection whose egress policy forbids sending its text to the
    configured endpoint is skipped and reported (``EGRESS_DENIED``); ``force``
    first deletes the collections' vectors. Every write happens inside
    ``guard`` (the write lease), one batch at a time.
    """
    run = EmbedRun()
    model_uri = model_uri.strip() if model_uri is not None else None
    for uri, collections in _groups(config, names, model_uri).items():
        chosen = chosen_backend(config, collections[0], model_uri)
        run.models.append(uri)
        allowed = []
        for name in collections:
            found = config.collection(name)
            assert found is not None
            if is_endpoint_uri(uri) and not allowed_by_policy(uri, found.effective_egress_policy):
                run.skipped.append(
                    {
                        "collection": name,
                        "code": EGRESS_DENIED_CODE,
                        "message": f"egress policy {found.effective_egress_policy} does not "
                        f"allow sending text to {uri}",
                    }
                )
            else:
                allowed.append(name)
        if not allowed:
            continue
        if force:
            with guarded_write(conn, guard):
                for name in allowed:
                    storage.clear_collection(
                        SQLITE_STORES.vectors(conn), name, mode="all", current_key=None
                    )
                # re-made with the chunks' vectors
                SQLITE_STORES.sentence_vectors(conn).drop_unbacked()
        report = embed_backlog(
            conn,
            chosen,
            collections=allowed,
            batch_size=batch_size,
            should_stop=should_stop,
            progress=progress,
            guard=guard,
        )
        run.embedded += report.embedded
        run.blank += report.blank
        run.errors += report.errors
        run.backlog += report.backlog
        run.duration_s += report.duration_s
        run.last_error = report.last_error or run.last_error
        if report.stopped:
            run.stopped = True
            break
    return run


def _model_groups(conn: Connection, config: Config) -> list[tuple[int | None, list[str]]]:
    """The stored model id (None: no vectors yet, or a model that cannot run) per group."""
    found: list[tuple[int | None, list[str]]] = []
    for collections in _groups(config, None).values():
        try:
            key = configured_backend(config, collections[0]).identity.key
        except GnoError:  # a model that cannot run: everything waits for one that can
            key = None
        model = SQLITE_STORES.vectors(conn).model(key) if key else None
        found.append((model.id if model else None, collections))
    return found


def backlog_by_collection(conn: Connection, config: Config) -> dict[str, tuple[int, int]]:
    """``{collection: (embedded chunks, chunks needing a vector)}`` for the status report."""
    counts: dict[str, tuple[int, int]] = {}
    vectors = SQLITE_STORES.vectors(conn)
    for model_id, collections in _model_groups(conn, config):
        for name in collections:
            counts[name] = (
                vectors.embedded_count(model_id, [name]),
                vectors.backlog_count(model_id, [name]),
            )
    return counts


def pending_documents(conn: Connection, config: Config) -> int:
    """Active documents with a chunk still waiting for a vector, over every collection."""
    vectors = SQLITE_STORES.vectors(conn)
    return sum(
        vectors.backlog_documents(model_id, collections)
        for model_id, collections in _model_groups(conn, config)
    )


def clear(
    conn: Connection,
    config: Config,
    collection: str,
    *,
    mode: str = "stale",
    guard: WriteGuard | None = None,
) -> dict[str, Any]:
    """``clear-embeddings``: vectors of stale models (or ``all``) of one collection."""
    if mode not in ("stale", "all"):
        raise GnoError("INVALID_INPUT", f"mode must be stale or all (got {mode!r})")
    found = config.collection(collection)
    if found is None:
        raise GnoError("NOT_FOUND", f"Collection not found: {collection}")
    try:
        current = configured_backend(config, found.name).identity.key
    except GnoError:
        current = None
    with guarded_write(conn, guard):
        result = storage.clear_collection(
            SQLITE_STORES.vectors(conn), found.name, mode=mode, current_key=current
        )
        SQLITE_STORES.sentence_vectors(conn).drop_unbacked()
    if mode == "all":
        result["note"] = f"Run gno-trio embed {found.name} (or gno_embed) to rebuild embeddings."
    return result
