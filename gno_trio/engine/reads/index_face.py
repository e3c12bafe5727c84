"""``engine.index``: the state of an opened index as a whole: status, peek, the watcher, audit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.reads import audit as audit_mod
from gno_trio.engine.reads import status as status_mod
from gno_trio.engine.reads.bootstrap import model_size
from gno_trio.engine.reads.semantic_facts import SemanticFacts
from gno_trio.engine.store.database import Connection


class IndexFace:
    """What an opened index holds and how it is: counts, health, the watcher, findings."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel

    def audit(
        self,
        *,
        category: str = "all",
        collections: Sequence[str] = (),
        paths: Sequence[str] = (),
        tags: Sequence[str] = (),
        max_findings: int = audit_mod.DEFAULT_MAX_FINDINGS,
        max_age_days: int | None = None,
        orphan_roots: Sequence[str] = (),
        orphan_ignore_prefixes: Sequence[str] = (),
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """``audit-report@1.0``: links, provenance and freshness of a scope; reads only."""
        with self._kernel.connection() as c:
            return audit_mod.audit(
                c,
                self._kernel.config,
                self._kernel.location.index_name,
                category=category,
                collections=collections,
                paths=paths,
                tags=tags,
                max_findings=max_findings,
                max_age_days=max_age_days,
                orphan_roots=orphan_roots,
                orphan_ignore_prefixes=orphan_ignore_prefixes,
                should_stop=should_stop,
            )

    def status(self) -> dict[str, Any]:
        """Counts, health, the true embedding backlog and the embed model in force."""
        with self._kernel.connection() as c:
            result = status_mod.status(
                c,
                index_name=self._kernel.location.index_name,
                db_path=str(self._kernel.location.db_path),
                config_path=str(self._kernel.location.config_path),
                semantic=self._semantic_facts(c),
                cache_dir=self._kernel.location.dirs.cache,
            )
            result["background"]["watcher"] = self.watcher()
        return result

    def watcher(self) -> dict[str, Any]:
        """GNO's ``background.watcher`` object, the same from every process and surface.

        The report of the resident that follows this data directory's folders
        (GNO's fields, then events seen and ignored, pending paths, syncs,
        polling collections, the last sync and recent errors), or, while none
        watches, the idle object carrying the index's last sync.
        """
        from gno_trio.engine.ingest.watch_report import published
        from gno_trio.engine.reads.readiness import idle_watcher

        watching = published(self._kernel.location.dirs.data)
        if watching is not None:
            return watching
        with self._kernel.connection() as c:
            return idle_watcher(status_mod.last_synced_at(c))

    def _semantic_facts(self, conn: Connection) -> SemanticFacts:
        """The embedding side as status reports it: read from config and index, no model run."""
        from gno_trio.engine.vectors.models import models_list, models_path
        from gno_trio.engine.vectors.service import backlog_by_collection, pending_documents

        listed = models_list(self._kernel.config)
        embed = listed["embed"]
        kind = "bundled" if embed.get("bundled") else "endpoint" if embed.get("endpoint") else ""
        path = models_path() if kind == "bundled" else None
        return SemanticFacts(
            embed_uri=str(embed["uri"]),
            kind=kind or "unsupported",
            runnable=bool(embed.get("cached")),
            preset_id=listed.get("activePreset") or None,
            version=embed.get("version"),
            path=path,
            size_bytes=model_size(path),
            pending_documents=pending_documents(conn, self._kernel.config),
            embeddings=backlog_by_collection(conn, self._kernel.config),
        )

    def peek(self) -> dict[str, Any]:
        from gno_trio.engine.vectors.service import backlog_by_collection

        with self._kernel.connection() as c:
            return status_mod.peek(
                c,
                index_name=self._kernel.location.index_name,
                embeddings=backlog_by_collection(c, self._kernel.config),
            )


__all__ = ["IndexFace"]
