"""Planning a reference-safe rename or move of one note (``file-refactor-preview@1.0``).

The plan names the note's new path and every reference to it that the index
knows (wiki links by path, file name or title, Markdown links relative,
rooted or ``gno://``), read again from the files on disk so each proposed
edit is an exact span of the text as it is now. Each reference is
classified: ``rewriteable`` (its destination is replaced and only that),
``unchanged`` (it still reaches the note, e.g. by title), or ``ambiguous``
(after the change it could name another note too). A move also recomputes
the note's own relative links, whose starting folder changes.

Anything that makes the change unsafe (the target is taken, the note is not
an editable text file, the destination is the same, another collection, an
ambiguous reference) is a blocking reason and ``canApply`` is false. The
``planDigest`` covers the operation, both paths, every edit and the
fingerprint of every file involved, so a plan applied later is applied only
to exactly the state it was computed from.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

from gno_trio.config import Collection
from gno_trio.config.dirs import Dirs
from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.graph.link_lists import backlinks
from gno_trio.engine.graph.links import DocSummary, summary
from gno_trio.engine.ingest.reading import note_text
from gno_trio.engine.ingest.refactor_refs import (
    Reference,
    ReferenceExaminer,
    edit_span,
    reference_entry,
    rewrite_links,
)
from gno_trio.engine.ingest.write_paths import (
    collection_root,
    lstat_or_none,
    path_segments,
    real_folder,
    single_name,
    unindexable_reason,
)
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.uris import disk_path, make_uri, parse_ref, parse_uri
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
EDITABLE_SUFFIXES: Final = frozenset({".md", ".markdown", ".mdx", ".txt"})
MUTATION_BOUNDARY: Final = {
    "filesystemCommit": "atomic_all_or_rollback",
    "indexConvergence": "post_commit_separate",
    "syncFailureDoesNotRollbackFilesystem": True,
}


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_note(path: Path, rel_path: str) -> str:
    """A note's text exactly as stored (line endings kept); a link, FIFO or device is not read."""
    return note_text(path, rel_path, action="renamed or moved")


@dataclass(slots=True)
class Plan:
    """A computed plan: the preview object plus what applying it needs."""

    operation: str
    collection: Collection
    root: Path
    source_rel: str
    target_rel: str
    preview: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)
    """The file of every note involved, by URI (the source under its old path)."""
    texts: dict[str, str] = field(default_factory=dict)
    """Current text of every note involved, by URI."""
    rewritten: dict[str, str] = field(default_factory=dict)
    """New text of every note whose links change, by URI."""

    @property
    def source_uri(self) -> str:
        return str(self.preview["source"]["uri"])

    @property
    def digest(self) -> str:
        return str(self.preview["planDigest"])

    @property
    def can_apply(self) -> bool:
        return bool(self.preview["canApply"])

    @property
    def blocking(self) -> list[str]:
        return list(self.preview["safety"]["blockingReasonCodes"])


def _target_rel(
    operation: str,
    source_rel: str,
    collection: str,
    name: str | None,
    folder_path: str | None,
    blocking: list[str],
) -> str:
    suffix = PurePosixPath(source_rel).suffix
    base = source_rel.rsplit("/", 1)[-1]
    if name is not None:
        chosen = single_name(name, "name")
        base = chosen if PurePosixPath(chosen).suffix else chosen + suffix
    if operation == "rename":
        if name is None:
            raise GnoError("INVALID_INPUT", "A rename needs the new name")
        folders = source_rel.split("/")[:-1]
    else:
        if folder_path is None:
            raise GnoError("INVALID_INPUT", "A move needs folderPath")
        raw = folder_path.strip()
        if raw.startswith("gno://"):
            named, inside, _ = parse_uri(raw.rstrip("/") + "/_")
            if named != collection:
                blocking.append("cross_collection_unsupported")
            raw = inside.rpartition("/")[0]
        folders = path_segments(raw, "folderPath") if raw.strip("/") else []
    return "/".join([*folders, base])


def _document_ref(collection: str, rel_path: str) -> dict[str, str]:
    return {"uri": make_uri(collection, rel_path), "relPath": rel_path, "collection": collection}


def plan_refactor(
    conn: Connection,
    dirs: Dirs,
    collection_of: Any,
    operation: str,
    ref: str,
    *,
    name: str | None = None,
    folder_path: str | None = None,
) -> Plan:
    """The plan of renaming (``name``) or moving (``folder_path``) the note ``ref``.

    ``collection_of`` maps a collection name to its configuration (the
    engine's lookup). Raises ``NOT_FOUND`` for an unknown note,
    ``INVALID_PATH``/``INVALID_INPUT`` for an unusable name or folder and
    ``PATH_NOT_FOUND`` for a folder that does not exist; every other obstacle
    is reported in the plan.
    """
    row = resolve(conn, parse_ref(ref))
    source = summary(row)
    collection: Collection = collection_of(source.collection)
    blocking: list[str] = []
    warnings: list[str] = []
    target_rel = _target_rel(
        operation, source.rel_path, collection.name, name, folder_path, blocking
    )
    root = collection_root(collection, dirs)
    if "cross_collection_unsupported" not in blocking:
        real_folder(root, target_rel.split("/")[:-1])
    if PurePosixPath(source.rel_path).suffix.casefold() not in EDITABLE_SUFFIXES:
        blocking.append("read_only_document")
    if target_rel == source.rel_path:
        blocking.append("destination_unchanged")
    elif target_rel.casefold() != source.rel_path.casefold() and (
        lstat_or_none(root / target_rel) is not None
        or SQLITE_STORES.documents(conn).active_at(collection.name, target_rel) is not None
    ):
        blocking.append("occupied_target")
    reason = unindexable_reason(collection, target_rel)
    if reason is not None:
        blocking.append("unsafe_target")
        warnings.append(f"{target_rel} would not be indexed: {reason}"[:512])

    paths = {source.uri: root / disk_path(source.rel_path)}
    texts = {source.uri: read_note(paths[source.uri], source.rel_path)}
    documents: dict[str, DocSummary] = {source.uri: source}
    incoming = backlinks(conn, source.uri)["backlinks"]
    linkers = sorted({entry["sourceUri"] for entry in incoming} - {source.uri})
    for uri in linkers:
        other = summary(resolve(conn, parse_ref(uri)))
        if other.collection != collection.name:
            other_root = collection_root(collection_of(other.collection), dirs)
        else:
            other_root = root
        try:
            other_path = other_root / disk_path(other.rel_path)
            texts[other.uri] = read_note(other_path, other.rel_path)
            paths[other.uri] = other_path
        except GnoError:
            warnings.append(f"{other.uri} could not be read; its links are left as they are")
            continue
        documents[other.uri] = other
    examiner = ReferenceExaminer(conn, source, target_rel, operation)
    by_document: dict[str, list[Reference]] = {}
    for key, document in documents.items():
        by_document[key] = examiner.examine(document, texts[key])

    counts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    affected: list[dict[str, Any]] = []
    examined: list[dict[str, Any]] = []
    rewritten: dict[str, str] = {}
    for key in sorted(by_document, key=lambda k: documents[k].uri):
        refs = by_document[key]
        text = texts[key]
        entries = [reference_entry(r, text) for r in refs]
        examined.extend(entries)
        for r in refs:
            counts[r.classification] += 1
            if r.reason != "relative_path_recalculated":
                kinds[r.site.link.kind] += 1
            if r.classification == "ambiguous" and r.reason and r.reason not in blocking:
                blocking.append(r.reason)
        edits = [edit_span(r, text) for r in refs if r.proposed is not None]
        if edits:
            document = documents[key]
            affected.append(
                {
                    "uri": document.uri,
                    "relPath": document.rel_path,
                    "contentFingerprint": fingerprint(text),
                    "edits": edits,
                    "examined": entries,
                }
            )
            rewritten[key] = rewrite_links(text, refs)
    source_fp = fingerprint(texts[source.uri])
    preconditions = {
        "sourceContentFingerprint": source_fp,
        "affectedContentFingerprints": [
            {"uri": doc["uri"], "fingerprint": doc["contentFingerprint"]} for doc in affected
        ],
        "targetPathFingerprint": hash_canonical(
            {
                "collection": collection.name,
                "relPath": target_rel,
                "occupied": "occupied_target" in blocking,
            }
        ),
    }
    safety = {
        "rewriteableCount": counts["rewriteable"],
        "unchangedCount": counts["unchanged"],
        "ambiguousCount": counts["ambiguous"],
        "unsupportedCount": counts["unsupported"],
        "malformedCount": counts["malformed"],
        "invalidCount": counts["invalid"],
        "blockingReasonCodes": sorted(set(blocking)),
        "warnings": warnings[:64],
        "backlinkCount": sum(1 for entry in incoming if entry["sourceUri"] != source.uri),
        "wikiLinkCount": kinds["wiki"],
        "markdownLinkCount": kinds["markdown"],
    }
    preview: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "operation": operation,
        "conflictPolicy": "fail",
        "source": _document_ref(collection.name, source.rel_path),
        "target": _document_ref(collection.name, target_rel),
        "affectedDocuments": affected,
        "examinedReferences": examined,
        "preconditions": preconditions,
    }
    preview["planDigest"] = hash_canonical({**preview, "blocking": safety["blockingReasonCodes"]})
    preview["safety"] = safety
    preview["canApply"] = not safety["blockingReasonCodes"]
    preview["mutationBoundary"] = dict(MUTATION_BOUNDARY)
    return Plan(
        operation, collection, root, source.rel_path, target_rel, preview, paths, texts, rewritten
    )


__all__ = ["EDITABLE_SUFFIXES", "Plan", "fingerprint", "plan_refactor", "read_note"]
