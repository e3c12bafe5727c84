"""Folder and copy operations inside a collection: ``gno_create_folder``, ``gno_duplicate_note``.

Both follow the write-path rules (:func:`gno_trio.engine.ingest.write_paths.path_segments`:
relative, no ``..``, no sensitive folders, names of at most 255 bytes) and
never follow a symbolic link below the collection root, since a link could
lead a write out of the collection. Every existing step on the way must be a
real folder; these tools create only their final name, never missing
parents. Both run under the shared write lease, and neither ever replaces an
existing name: the folder is made with ``mkdir`` and the copy is linked into
place exclusively, so an existing name is a ``CONFLICT`` and stays untouched.

A copy is indexed before the call returns, like a capture; when indexing
fails the copy stays on disk and the answer's ``sync`` block says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.ingest.reading import note_text
from gno_trio.engine.ingest.write_paths import (
    collection_root,
    lstat_or_none,
    path_segments,
    real_folder,
    single_name,
    unindexable_reason,
)
from gno_trio.engine.ingest.written import index_written, indexed_document
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store.atomic import create_new
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.lease import HeldLease
from gno_trio.engine.uris import docid_for, make_uri, parse_ref
from gno_trio.errors import GnoError

COPY_SUFFIX = "-copy"


def create_folder(
    engine: IndexingKernel,
    collection_name: str,
    name: str,
    *,
    parent_path: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    lease: HeldLease | None = None,
) -> dict[str, Any]:
    """Make one new folder in a collection, under an existing parent folder.

    Raises ``NOT_FOUND`` (collection), ``INVALID_PATH`` (unsafe name or
    parent, symlinked parent), ``PATH_NOT_FOUND`` (missing parent),
    ``CONFLICT`` (the name exists), ``LOCKED`` or ``RUNTIME``.
    """
    collection = engine.collection(collection_name)
    folder = single_name(name, "name")
    parents = path_segments(parent_path, "parentPath") if parent_path is not None else []
    rel_path = "/".join([*parents, folder])
    with engine.writing(lease, should_stop=should_stop):
        parent = real_folder(collection_root(collection, engine.location.dirs), parents)
        try:
            (parent / folder).mkdir()
        except FileExistsError as exc:
            raise GnoError("CONFLICT", f"{rel_path} already exists") from exc
        except OSError as exc:
            raise GnoError(
                "RUNTIME", f"Cannot create folder {rel_path}: {exc.strerror or exc}"
            ) from exc
    return {"created": True, "collection": collection.name, "folderPath": rel_path}


def _copy_name(source_rel: str, name: str | None) -> str:
    """The copy's file name: ``name`` (keeping the source extension when it has none)."""
    source = PurePosixPath(source_rel)
    if name is None:
        return f"{source.stem}{COPY_SUFFIX}{source.suffix}"
    chosen = single_name(name, "name")
    return chosen if PurePosixPath(chosen).suffix else chosen + source.suffix


def duplicate_note(
    engine: IndexingKernel,
    conn: Connection,
    ref: str,
    *,
    folder_path: str | None = None,
    name: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    lease: HeldLease | None = None,
) -> dict[str, Any]:
    """Copy a note's source file to a new name in its collection and index the copy.

    ``folder_path`` (relative to the collection root, ``""`` for the root)
    defaults to the note's own folder; ``name`` defaults to the note's name
    with ``-copy`` added. Raises ``NOT_FOUND``/``INVALID_INPUT`` (ref),
    ``INVALID_PATH``, ``PATH_NOT_FOUND``, ``INVALID_INPUT`` (not a text note),
    ``CONFLICT`` (the name is taken on disk or in the index), ``LOCKED``.
    """
    row = resolve(conn, parse_ref(ref))
    collection = engine.collection(str(row["collection"]))
    source_rel = str(row["rel_path"])
    if folder_path is None:
        folders = source_rel.split("/")[:-1]
    else:
        folders = path_segments(folder_path, "folderPath")
    target_rel = "/".join([*folders, _copy_name(source_rel, name)])
    reason = unindexable_reason(collection, target_rel)
    if reason is not None:
        raise GnoError("INVALID_PATH", f"{target_rel} would not be indexed: {reason}")
    with engine.writing(lease, should_stop=should_stop) as held:
        root = collection_root(collection, engine.location.dirs)
        folder = real_folder(root, folders)
        text = note_text(root / source_rel, source_rel, action="duplicated")
        target = folder / target_rel.rsplit("/", 1)[-1]
        taken = (
            lstat_or_none(target) is not None
            or indexed_document(conn, collection.name, target_rel) is not None
        )
        try:
            if taken or not create_new(target, text):
                raise GnoError("CONFLICT", f"{target_rel} already exists")
        except OSError as exc:
            raise GnoError("RUNTIME", f"Cannot write {target_rel}: {exc.strerror or exc}") from exc
        indexed = index_written(engine, collection.name, target_rel, conn, held)
    copied = indexed.row
    docid = str(copied["docid"]) if copied is not None else docid_for(text.encode("utf-8"))
    return {
        "duplicated": True,
        "source": {"docid": str(row["docid"]), "uri": str(row["uri"])},
        "docid": docid,
        "uri": make_uri(collection.name, target_rel),
        "collection": collection.name,
        "relPath": target_rel,
        "sync": indexed.status,
    }


__all__ = ["COPY_SUFFIX", "create_folder", "duplicate_note"]
