"""``engine.collections``: the configured collections: add, remove, rename, update, clean up."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gno_trio.config import Collection, Config
from gno_trio.config import normalize_collection_name as normalize_name
from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.ingest.rename import rename_collection_rows, renamed_config
from gno_trio.engine.ingest.roots import validate_root
from gno_trio.engine.ingest.spec import now_iso
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.store.lease import HeldLease
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.egress.decision import Decision
    from gno_trio.engine.egress.policy import Zone

StopFn = Callable[[], bool]


def refuse_if_referenced(config: Config, name: str) -> None:
    """``HAS_REFERENCES`` while a configured context is scoped to collection ``name``."""
    scopes = [c.scope_key for c in config.contexts if (c.collection_name or "").lower() == name]
    if scopes:
        raise GnoError(
            "HAS_REFERENCES",
            f"Collection {name} is referenced by contexts ({', '.join(scopes)}); "
            f"remove them first (gno-trio context rm {scopes[0]})",
        )


class CollectionsFace:
    """The collections of an opened index, kept in step with ``index.yml``."""

    def __init__(self, kernel: IndexingKernel) -> None:
        self._kernel = kernel

    def check_root(self, path: str, *, absolute: bool = False) -> Path:
        """``path`` resolved, if it may be a collection root of this index (else the refusal).

        ``absolute``: refuse a relative path (for a caller in another working directory).
        """
        return validate_root(path, dirs=self._kernel.location.dirs, absolute=absolute)

    def list(self) -> dict[str, Any]:
        """The configured collections, as ``collection list`` and the REST API show them."""
        return {
            "collections": [
                {
                    "name": c.name,
                    "path": str(c.path),
                    "pattern": c.pattern,
                    "include": list(c.include),
                    "exclude": list(c.exclude),
                    "memoryManaged": c.memory_managed,
                }
                for c in self._kernel.config.collections
            ]
        }

    def add(
        self,
        path: str,
        *,
        name: str | None = None,
        pattern: str | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] | None = None,
        language_hint: str | None = None,
        memory_managed: bool = False,
        update_cmd: str | None = None,
        embed_model: str | None = None,
        lease: HeldLease | None = None,
    ) -> Collection:
        """Validate and register a folder; nothing is written when a check fails.

        Runs under the write lease, against ``index.yml`` as it is on disk, and
        brings the database's collections in line with the file afterwards.
        ``update_cmd`` is GNO's ``updateCmd`` (run by ``gno-trio update``
        before it syncs the collection); ``embed_model`` its ``models.embed``,
        refused unless the model runs here.
        """
        root = self.check_root(path)
        chosen = normalize_name(name if name is not None else root.name)
        fields: dict[str, Any] = {"name": chosen, "path": root}
        if pattern:
            fields["pattern"] = pattern
        if include:
            fields["include"] = tuple(include)
        if exclude is not None:
            fields["exclude"] = tuple(exclude)
        if language_hint:
            fields["language_hint"] = language_hint
        if memory_managed:
            fields["memory_managed"] = True
        if update_cmd is not None and update_cmd.strip():
            fields["update_cmd"] = update_cmd.strip()
        if embed_model is not None:
            from gno_trio.engine.vectors.models import check_embed_model_uri  # the model stack

            fields["models"] = {"embed": check_embed_model_uri(embed_model)}
        try:
            collection = Collection(**fields)
        except (TypeError, ValueError) as exc:
            raise GnoError("INVALID_INPUT", str(exc)) from exc

        def add(config: Config) -> Config:
            if config.collection(chosen) is not None:
                raise GnoError("DUPLICATE", f"Collection already exists: {chosen}")
            for existing in config.collections:
                if Path(existing.path) == root:
                    raise GnoError(
                        "DUPLICATE", f"{root} is already indexed as collection {existing.name}"
                    )
            return config.with_collection(collection)

        with self._kernel.writing(lease) as held:
            self._kernel.update_config(add, lease=held)
            self._kernel.reconcile(lease=held, expected={chosen})
        return collection

    def remove(self, name: str, *, lease: HeldLease | None = None) -> dict[str, Any]:
        """Drop a collection from the config; its documents leave search results.

        Refused with ``HAS_REFERENCES`` while a configured context names it.
        The config is the source of truth and is written first; the database
        follows in the same lease.
        """
        removed: list[str] = []

        def remove(config: Config) -> Config:
            found = config.collection(name.strip().lower())
            if found is None:
                raise GnoError("NOT_FOUND", f"Collection not found: {name}")
            refuse_if_referenced(config, found.name)
            removed.append(found.name)
            return config.without_collection(found.name)

        with self._kernel.writing(lease) as held:
            self._kernel.update_config(remove, lease=held)
            changes = self._kernel.reconcile(lease=held, expected=removed)
        gone = removed[0]
        documents = sum(e["documents"] for e in changes["removed"] if e["collection"] == gone)
        return {"removed": True, "collection": gone, "documents": documents}

    def cleanup(self, *, dry_run: bool = False, lease: HeldLease | None = None) -> dict[str, Any]:
        """Delete inactive documents and the texts, chunks and vectors only they used.

        Under the write lease, after the collections are reconciled with
        ``index.yml`` (see :mod:`.cleanup`); ``dry_run`` only counts, and
        writes nothing.
        """
        from gno_trio.engine.ingest import cleanup as cleanup_mod

        if dry_run:
            with self._kernel.pool.connection() as conn:
                return cleanup_mod.cleanup(conn, dry_run=True)
        with self._kernel.writing(lease) as held:
            self._kernel.reconcile(lease=held)
            with self._kernel.pool.connection() as conn:
                return cleanup_mod.cleanup(conn)

    def run_update_command(self, name: str) -> dict[str, Any] | None:
        """Run collection ``name``'s ``updateCmd`` in its folder (see :mod:`.update_cmd`)."""
        from gno_trio.engine.ingest import update_cmd

        return update_cmd.run_update_command(self._kernel.collection(name))

    def git_pull(self, name: str) -> dict[str, Any]:
        """``git pull --ff-only`` in collection ``name``'s work tree, judged and bounded first.

        The upstream's URL is judged against the collection's egress policy
        (its receipt kept in the egress audit) before git runs; see
        :mod:`.git_pull`. Runs without the write lease: it changes files, not
        the index.
        """
        from gno_trio.engine.egress import audit
        from gno_trio.engine.ingest import git_pull

        collection = self._kernel.collection(name)

        def judge(collection_name: str, zone: Zone) -> Decision:
            with self._kernel.pool.connection() as conn:  # the receipt commits on its own
                return audit.judge(
                    self._kernel.stores.egress_receipts(conn),
                    self._kernel.config.collections,
                    collections=[collection_name],
                    action="retrieve",
                    zone=zone,
                    content_class="metadata",
                    authenticated=True,  # the user's own configured remote, asked for by name
                )

        return git_pull.pull_collection(collection, judge)

    def rename(self, old: str, new: str, *, lease: HeldLease | None = None) -> dict[str, Any]:
        """Give collection ``old`` the name ``new``, everywhere at once (see :mod:`.rename`).

        ``INVALID_NAME`` for a bad new name, ``NOT_FOUND`` for an unknown old
        one, ``DUPLICATE`` when the new name is taken: all checked before
        anything is written. Under the write lease the database rows change
        in one transaction and ``index.yml`` is written before it commits;
        when the config cannot be written the transaction rolls back, and
        when the commit fails the old config is written back, so the index
        and its config never disagree about the name.
        """
        target = normalize_name(new)
        with self._kernel.writing(lease) as held:
            self._kernel.reconcile(lease=held)
            renamed_config(self._kernel.config, old, target)  # the refusals, before any write
            previous: list[Config] = []

            def rename(config: Config) -> Config:
                updated = renamed_config(config, old, target)
                previous.append(config)
                return updated

            with self._kernel.pool.connection() as conn:
                try:
                    with write_transaction(conn):
                        counts = rename_collection_rows(
                            conn, old.strip().lower(), target, now_iso()
                        )
                        self._kernel.update_config(rename, lease=held)
                except BaseException:
                    if previous and self._kernel.config.collection(target) is not None:
                        self._kernel.update_config(lambda _: previous[0], lease=held)
                    raise
        return {"renamed": True, "from": old.strip().lower(), "to": target, **counts}


__all__ = ["CollectionsFace"]
