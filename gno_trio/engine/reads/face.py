"""The engine's reads of what is indexed: documents, listings, tags, changes, status."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from gno_trio.config.dirs import canonical_index_name
from gno_trio.engine import journal
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.reads import audit as audit_mod
from gno_trio.engine.reads import diff as diff_mod
from gno_trio.engine.reads import documents, sections
from gno_trio.engine.reads import status as status_mod
from gno_trio.engine.reads.bootstrap import model_size
from gno_trio.engine.reads.semantic_facts import SemanticFacts
from gno_trio.engine.store.database import Connection, connect, schema_version
from gno_trio.engine.uris import parse_ref, with_index
from gno_trio.errors import GnoError


class ReadsFace(EngineKernel):
    def get(
        self,
        ref: str,
        *,
        from_line: int | None = None,
        line_count: int | None = None,
        line_numbers: bool = True,
    ) -> dict[str, Any]:
        named = self._named_index([ref])
        with self._index_connection(named) as c:
            result = documents.get(
                c, ref, from_line=from_line, line_count=line_count, line_numbers=line_numbers
            )
        if named is not None:
            result["uri"] = with_index(result["uri"], named)
        return result

    def multi_get(
        self,
        *,
        refs: Sequence[str] | None = None,
        pattern: str | None = None,
        max_bytes: int = documents.DEFAULT_MAX_BYTES,
        line_numbers: bool = True,
    ) -> dict[str, Any]:
        named = self._named_index(refs or ())
        with self._index_connection(named) as c:
            result = documents.multi_get(
                c, refs=refs, pattern=pattern, max_bytes=max_bytes, line_numbers=line_numbers
            )
        if named is not None:
            for document in result["documents"]:
                document["uri"] = with_index(document["uri"], named)
        return result

    def section(
        self,
        action: str,
        ref: str,
        *,
        anchor: str | None = None,
        line: int | None = None,
        target: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``section@1.0``: create a durable section target, or resolve one against today's text.

        The document is always this index's; create takes exactly one of
        ``anchor`` and ``line``, resolve takes ``target`` and neither of them.
        """
        if self._named_index([ref]) is not None:
            raise GnoError("INVALID_INPUT", "Section targets are made and resolved in this index")
        with self.connection() as c:
            if action == "create":
                if target is not None:
                    raise GnoError("INVALID_INPUT", "action=create takes no target")
                return sections.create(c, ref, anchor=anchor, line=line)
            if action == "resolve":
                if target is None or anchor is not None or line is not None:
                    raise GnoError(
                        "INVALID_INPUT", "action=resolve takes a target and neither anchor nor line"
                    )
                return sections.resolve_target(c, ref, target)
        raise GnoError("INVALID_INPUT", f"Unknown section action: {action} (create or resolve)")

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
        with self.connection() as c:
            return audit_mod.audit(
                c,
                self.config,
                self.location.index_name,
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

    def _named_index(self, refs: Sequence[str]) -> str | None:
        """The other index a batch of refs names (``?index=<name>``, canonical), or None.

        One request reads one index: refs naming two indexes, or naming
        another index beside plain refs (which mean this one), are refused so
        the caller splits the batch. Refs that do not parse are left to the
        read, which reports them.
        """
        named: set[str] = set()
        plain = False
        for ref in refs:
            try:
                index = parse_ref(ref).index
            except GnoError:
                continue
            if index is None:
                plain = True
            else:
                named.add(canonical_index_name(index))
        other = sorted(named - {canonical_index_name(self.location.index_name)})
        if len(named) > 1 or (other and plain):
            raise GnoError(
                "INVALID_INPUT",
                "All refs in one request must name one index; split the batch by index",
            )
        return other[0] if other else None

    @contextlib.contextmanager
    def _index_connection(self, named: str | None) -> Iterator[Connection]:
        """This index's connection, or a read-only one to the named index.

        A named index that does not exist is an error; it is never created.
        """
        if named is None:
            with self.connection() as c:
                yield c
            return
        path = self.location.dirs.database(named)
        if not path.is_file():
            raise GnoError("NOT_FOUND", f"Index not found: {named}")
        other = connect(path, readonly=True)
        try:
            if schema_version(other) < 1:
                raise GnoError("RUNTIME", f"Not a gno index: {named}")
            yield other
        finally:
            other.close()

    def ls(
        self,
        *,
        collection: str | None = None,
        prefix: str | None = None,
        limit: int = 1000,
        offset: int = 0,
    ) -> dict[str, Any]:
        with self.connection() as c:
            return documents.ls(c, collection=collection, prefix=prefix, limit=limit, offset=offset)

    def browse(
        self,
        *,
        collection: str | None = None,
        path: str = "",
    ) -> dict[str, Any]:
        """One level of the browse tree (see :func:`documents.browse`)."""
        with self.connection() as c:
            return documents.browse(c, collection=collection, path=path)

    def list_tags(
        self,
        *,
        collection: str | None = None,
        prefix: str | None = None,
    ) -> dict[str, Any]:
        with self.connection() as c:
            return documents.list_tags(c, collection=collection, prefix=prefix)

    def changes(
        self,
        *,
        since: str | None = None,
        collection: str | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        with self.connection() as c:
            return journal.feed(
                self.stores.journal(c), since=since, collection=collection, limit=limit
            )

    def diff(self, ref: str, change: str | None = None) -> dict[str, Any]:
        """The retained structural diff of one document change (the latest by default)."""
        with self.connection() as c:
            return diff_mod.document_diff(c, self.stores.journal(c), ref, change)

    def status(self) -> dict[str, Any]:
        """Counts, health, the true embedding backlog and the embed model in force."""
        with self.connection() as c:
            result = status_mod.status(
                c,
                index_name=self.location.index_name,
                db_path=str(self.location.db_path),
                config_path=str(self.location.config_path),
                semantic=self._semantic_facts(c),
                cache_dir=self.location.dirs.cache,
            )
            result["background"]["watcher"] = self.watcher_status()
        return result

    def watcher_status(self) -> dict[str, Any]:
        """GNO's ``background.watcher`` object, the same from every process and surface.

        The report of the resident that follows this data directory's folders
        (GNO's fields, then events seen and ignored, pending paths, syncs,
        polling collections, the last sync and recent errors), or, while none
        watches, the idle object carrying the index's last sync.
        """
        from gno_trio.engine.ingest.watch_report import published
        from gno_trio.engine.reads.readiness import idle_watcher

        watching = published(self.location.dirs.data)
        if watching is not None:
            return watching
        with self.connection() as c:
            return idle_watcher(status_mod.last_synced_at(c))

    def _semantic_facts(self, conn: Connection) -> SemanticFacts:
        """The embedding side as status reports it: read from config and index, no model run."""
        from gno_trio.engine.vectors.models import models_list, models_path
        from gno_trio.engine.vectors.service import backlog_by_collection, pending_documents

        listed = models_list(self.config)
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
            pending_documents=pending_documents(conn, self.config),
            embeddings=backlog_by_collection(conn, self.config),
        )

    def peek(self) -> dict[str, Any]:
        from gno_trio.engine.vectors.service import backlog_by_collection

        with self.connection() as c:
            return status_mod.peek(
                c,
                index_name=self.location.index_name,
                embeddings=backlog_by_collection(c, self.config),
            )


__all__ = ["ReadsFace"]
