"""The embedding services over a connection and a configuration.

Which model applies is worked out here (per collection: its own
``models.embed``, else the index's). :mod:`gno_trio.engine.vectors.face`
exposes these as engine methods; search over the vectors is the search
face's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gno_trio.config import Config
from gno_trio.engine.egress.policy import EGRESS_DENIED_CODE
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.vectors import storage
from gno_trio.engine.vectors.embedding import DEFAULT_BATCH_SIZE, EmbedProgress, embed_backlog
from gno_trio.engine.vectors.endpoint import allowed_by_policy, is_endpoint_uri
from gno_trio.engine.vectors.models import (
    configured_backend,
    embed_model_uri,
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


def _groups(config: Config, names: Sequence[str] | None) -> dict[str, list[str]]:
    """Collections (all, or ``names``) grouped by the embed model URI they use."""
    wanted = list(names) if names else [c.name for c in config.collections]
    groups: dict[str, list[str]] = {}
    for name in wanted:
        found = config.collection(name)
        if found is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {name}")
        groups.setdefault(embed_model_uri(config, found.name), []).append(found.name)
    return groups


def embed(
    conn: sqlite3.Connection,
    config: Config,
    names: Sequence[str] | None = None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    force: bool = False,
    should_stop: Callable[[], bool] | None = None,
    progress: EmbedProgress | None = None,
) -> EmbedRun:
    """Embed the backlog of the collections (all when ``names`` is empty).

    A collection whose egress policy forbids sending its text to the
    configured endpoint is skipped and reported (``EGRESS_DENIED``); ``force``
    first deletes the collections' vectors of the current model.
    """
    run = EmbedRun()
    for uri, collections in _groups(config, names).items():
        chosen = configured_backend(config, collections[0])
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
            with write_transaction(conn):
                for name in allowed:
                    storage.clear_collection(conn, name, mode="all", current_key=None)
        report = embed_backlog(
            conn,
            chosen,
            collections=allowed,
            batch_size=batch_size,
            should_stop=should_stop,
            progress=progress,
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


def backlog_by_collection(conn: sqlite3.Connection, config: Config) -> dict[str, tuple[int, int]]:
    """``{collection: (embedded chunks, chunks needing a vector)}`` for the status report."""
    counts: dict[str, tuple[int, int]] = {}
    for collections in _groups(config, None).values():
        try:
            key = configured_backend(config, collections[0]).identity.key
        except GnoError:  # a model that cannot run: everything waits for one that can
            key = None
        model = storage.find_model(conn, key) if key else None
        model_id = model.id if model else None
        for name in collections:
            counts[name] = (
                storage.embedded_count(conn, model_id, [name]),
                storage.backlog_count(conn, model_id, [name]),
            )
    return counts


def clear(
    conn: sqlite3.Connection, config: Config, collection: str, *, mode: str = "stale"
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
    with write_transaction(conn):
        result = storage.clear_collection(conn, found.name, mode=mode, current_key=current)
    if mode == "all":
        result["note"] = f"Run gno-trio embed {found.name} (or gno_embed) to rebuild embeddings."
    return result
