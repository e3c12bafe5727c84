"""The engine's writers of collections and notes: add, remove, capture, file."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from gno_trio.config import Collection
from gno_trio.config import normalize_collection_name as normalize_name
from gno_trio.engine.ingest import capture as capture_mod
from gno_trio.engine.ingest import filing
from gno_trio.engine.ingest.collection_rows import drop_collection_rows
from gno_trio.engine.ingest.roots import validate_root
from gno_trio.engine.ingest.sync import upsert_collection
from gno_trio.engine.kernel import EngineKernel, spec_for
from gno_trio.engine.store.database import write_transaction
from gno_trio.errors import GnoError

StopFn = Callable[[], bool]


class IngestFace(EngineKernel):
    def add_collection(
        self,
        path: str,
        *,
        name: str | None = None,
        pattern: str | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] | None = None,
        language_hint: str | None = None,
        memory_managed: bool = False,
    ) -> Collection:
        """Validate and register a folder; nothing is written when a check fails."""
        root = validate_root(path)
        chosen = normalize_name(name if name is not None else root.name)
        if self.config.collection(chosen) is not None:
            raise GnoError("DUPLICATE", f"Collection already exists: {chosen}")
        for existing in self.config.collections:
            if Path(existing.path) == root:
                raise GnoError(
                    "DUPLICATE", f"{root} is already indexed as collection {existing.name}"
                )
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
        try:
            collection = Collection(**fields)
        except (TypeError, ValueError) as exc:
            raise GnoError("INVALID_INPUT", str(exc)) from exc
        self.save_config(self.config.with_collection(collection))
        with self.pool.connection() as conn:
            upsert_collection(conn, spec_for(collection))
        return collection

    def remove_collection(self, name: str) -> dict[str, Any]:
        """Drop a collection from the config; its documents leave search results."""
        collection = self.collection(name)
        # The config is the source of truth and is written first; if the
        # database step fails, the next open reconciles it.
        self.save_config(self.config.without_collection(collection.name))
        with self.pool.connection() as conn, write_transaction(conn):
            dropped = drop_collection_rows(conn, collection.name)
        return {"removed": True, "collection": collection.name, "documents": dropped}

    def capture(
        self,
        request: capture_mod.CaptureRequest,
        *,
        server_instance_id: str | None = None,
        conn: sqlite3.Connection | None = None,
        lease_wait_seconds: float | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Create (or open, per the collision policy) one note and index it."""
        return capture_mod.capture(
            self,
            request,
            server_instance_id=server_instance_id,
            conn=conn,
            lease_wait_seconds=lease_wait_seconds,
            now=now,
        )

    def create_folder(
        self,
        collection: str,
        name: str,
        *,
        parent_path: str | None = None,
        should_stop: StopFn | None = None,
    ) -> dict[str, Any]:
        """Make one new folder in a collection, under an existing parent folder."""
        return filing.create_folder(
            self, collection, name, parent_path=parent_path, should_stop=should_stop
        )

    def duplicate_note(
        self,
        ref: str,
        *,
        folder_path: str | None = None,
        name: str | None = None,
        should_stop: StopFn | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        """Copy a note's source file to a new name in its collection and index the copy."""
        with self.connection(conn) as c:
            return filing.duplicate_note(
                self, c, ref, folder_path=folder_path, name=name, should_stop=should_stop
            )


__all__ = ["IngestFace"]
