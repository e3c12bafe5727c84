"""Deciding what a sync must do, before it writes anything.

A sync is two steps. This module is the first: from the files a walk found
and a narrow view of the stored rows it works out which files are unchanged
(same path, size and mtime as indexed, nothing to do), which must be read
(new, changed on disk, failed last time, or coming back), and which indexed
documents vanished. It reads the database only through
:func:`indexed_fingerprints` and :func:`stored_documents` (a full row only
for a file whose fingerprint differs, or a document the walk did not see)
and writes nothing, so it can be tested and reasoned about on its own;
:mod:`gno_trio.engine.ingest.sync` applies the plan in bounded batches.

Rename detection needs to know every vanished document before the first new
file is written (the new file's bytes may be a vanished document's), which
is why the plan is complete before any write: a plan holds a small record
per changed file, never file contents.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from gno_trio.engine.ingest.foundfiles import FoundFiles, rel_path_of
from gno_trio.engine.ingest.walker import FoundFile, Listed, root_prefix
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection


@dataclass(frozen=True, slots=True)
class StoredDoc:
    """What deciding needs of one indexed document (one narrow row)."""

    id: int
    rel_path: str
    size: int
    mtime_ns: int
    active: bool
    errored: bool
    source_hash: str
    has_mirror: bool
    # Converted by a converter version other than today's (see :func:`stale_conversion`).
    stale: bool = False

    @property
    def reusable_hash(self) -> str | None:
        """The source hash whose bytes need no new conversion (None: convert whatever is read).

        A file that hashes as this document's source and was converted by
        today's converter costs a stat update; a stale conversion is redone.
        """
        return self.source_hash if self.has_mirror and not self.stale else None


def _current_stamps() -> list[str]:
    """Today's ``"converter id\x01version"`` stamps, as the stored fingerprints spell them."""
    from gno_trio.engine.ingest.documents.registry import converter_versions

    return [f"{cid}\x01{version}" for cid, version in converter_versions().items()]


def stale_conversion(converter_id: str | None, converter_version: str | None) -> bool:
    """Whether a document was converted by a converter or version that today's code lacks."""
    from gno_trio.engine.ingest.documents.registry import converter_versions

    if converter_id is None:  # never converted (a refused file): its error decides
        return False
    return converter_versions().get(converter_id) != converter_version


def stored_documents(
    conn: Connection, collection: str, only: Sequence[str] | None = None
) -> dict[str, StoredDoc]:
    """The stored rows of a collection (or of just the ``only`` paths), by relative path."""
    # A row is StoredDoc's fields in order, then the converter id and version it was
    # converted by, from which whether its conversion is stale is decided here.
    return {
        row[1]: StoredDoc(*row[:8], stale_conversion(row[8], row[9]))
        for row in SQLITE_STORES.document_rows(conn).sync_rows(collection, only)
    }


_FINGERPRINT_PIECE = 65_536
"""Fingerprints read per statement (each piece arrives as one string)."""


def indexed_fingerprints(conn: Connection, collection: str) -> set[str]:
    """The fingerprint of every document a sync need not read if its file is unchanged.

    A fingerprint is ``"size mtime_ns rel_path"``, the same text the walk
    makes of a file it finds (:func:`~.walker.fingerprint`): a file whose fingerprint is an indexed
    document's is unchanged. A document converted by another converter
    version than today's has none, so its file is read and converted again.
    The store builds each piece without holding the GIL, so this reads while
    the walk runs.
    """
    known: set[str] = set()
    rows = SQLITE_STORES.document_rows(conn)
    for piece in rows.fresh_fingerprints(collection, _current_stamps(), _FINGERPRINT_PIECE):
        known.update(piece)
    return known


class Walked:
    """What a full walk found, as fingerprints, until the indexed ones are known.

    Only the files whose fingerprint no indexed document has become
    :class:`FoundFile` records (see :meth:`changed`); a no-change sync of
    100,000 files makes none.
    """

    def __init__(self, root: Path, folders: Iterable[Listed]) -> None:
        self._base = root_prefix(root)
        self._folders: list[tuple[list[str], list[int], list[int]]] = []
        paths: list[str] = []
        for rels, fingerprints, devices, inodes in folders:
            paths.extend(rels)
            self._folders.append((fingerprints, devices, inodes))
        self.seen = frozenset(paths)

    def changed(self, known: Set[str]) -> FoundFiles:
        """The files whose fingerprint is not in ``known``, in walk order."""
        changed = FoundFiles(self._base)
        for keys, devices, inodes in self._folders:
            odd = [at for at, key in enumerate(keys) if key not in known]
            if not odd:
                continue
            odd = [at for _, at in sorted((rel_path_of(keys[at]), at) for at in odd)]
            changed.add(
                [keys[at] for at in odd], [devices[at] for at in odd], [inodes[at] for at in odd]
            )
        return changed


def stored_for_walk(
    conn: Connection,
    collection: str,
    changed: Sequence[FoundFile],
    seen: Set[str],
) -> dict[str, StoredDoc]:
    """What deciding a full sync needs of the stored rows, read in proportion to the changes.

    A no-change sync of a large collection is a walk and one set comparison
    (see :class:`Walked`): full rows only for the ``changed`` files (whose
    fingerprint no indexed document has) and, when some active document was
    not ``seen``, for the active documents the walk did not see (the vanished).
    """
    rows = stored_documents(conn, collection, [f.rel_path for f in changed]) if changed else {}
    active_seen = len(seen) - len(changed) + sum(1 for row in rows.values() if row.active)
    if SQLITE_STORES.counts(conn).active_documents(collection) > active_seen:
        unseen = [
            rel
            for rel in SQLITE_STORES.document_rows(conn).active_paths_of(collection)
            if rel not in seen
        ]
        rows.update(stored_documents(conn, collection, unseen))
    return rows


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """The outcome of deciding: counts, the files to read, the documents that vanished."""

    scanned: int
    unchanged: int
    # Files to read, with their stored row when they have one. A file whose
    # bytes turn out to hash as before costs a stat update, not a re-index.
    to_read: PlannedReads
    # Active documents the walk did not see (outside unlisted folders), in
    # path order; a new file with the same bytes as one of them is a rename.
    vanished: tuple[StoredDoc, ...]
    # Every path the walk saw (ingest errors of other paths are dropped).
    seen: frozenset[str]

    @property
    def writes(self) -> bool:
        """Whether carrying the plan out reads or retires anything."""
        return bool(self.to_read or self.vanished)


def unchanged(found: FoundFile, row: StoredDoc | None) -> bool:
    """Indexed by today's converter, active, no error last time, same size and mtime on disk."""
    return (
        row is not None
        and row.active
        and not row.errored
        and not row.stale
        and row.size == found.size
        and row.mtime_ns == found.mtime_ns
    )


def shielded(rel_path: str, unlisted: Iterable[str]) -> bool:
    """Whether a path lies in (or is) an entry the walk could not list.

    Such files were not *seen*, but that does not mean they are gone: a
    permission glitch on one folder must not soft-delete everything in it.
    """
    for entry in unlisted:
        if entry == "." or rel_path == entry or rel_path.startswith(entry + "/"):
            return True
    return False


def decide(
    files: Iterable[FoundFile],
    stored: Mapping[str, StoredDoc],
    *,
    seen: Set[str] | None = None,
    unlisted: Iterable[str] = (),
    partial: bool = False,
) -> SyncPlan:
    """What to do with each found file, and which stored documents vanished.

    ``files`` are the files that may have changed; ``seen`` (by default
    their paths) is every path the walk saw, the others being unchanged
    (see :class:`Walked`). ``stored`` holds the rows of ``files`` and of
    every active document the walk may not have seen. ``partial`` (a sync
    of named files only) never reports anything as vanished: files that
    were not named were not looked at.
    """
    files = files if isinstance(files, Sequence) else list(files)
    if seen is None:
        seen = frozenset(found.rel_path for found in files)
    seen = seen if isinstance(seen, frozenset) else frozenset(seen)
    picked: Sequence[int] = range(len(files))  # nothing stored: every file is read
    if stored:
        picked = array("L", (at for at, found in enumerate(files) if not _kept(found, stored)))
    blocked = tuple(unlisted)
    vanished = (
        ()
        if partial
        else tuple(
            row
            for rel, row in sorted(stored.items())
            if row.active and rel not in seen and not shielded(rel, blocked)
        )
    )
    return SyncPlan(
        scanned=len(seen),
        unchanged=len(seen) - len(picked),
        to_read=PlannedReads(files, picked, stored),
        vanished=vanished,
        seen=seen,
    )


def _kept(found: FoundFile, stored: Mapping[str, StoredDoc]) -> bool:
    return unchanged(found, stored.get(found.rel_path))


class PlannedReads(Sequence[tuple[FoundFile, StoredDoc | None]]):
    """The files a plan reads, each with its stored row (None: a new file).

    Made from the plan's files as they are asked for (see :mod:`.foundfiles`):
    a sync holds one file's records at a time, not 100,000 of them.
    """

    __slots__ = ("_files", "_picked", "_stored")

    def __init__(
        self, files: Sequence[FoundFile], picked: Sequence[int], stored: Mapping[str, StoredDoc]
    ) -> None:
        self._files = files
        self._picked = picked
        self._stored = stored

    def __len__(self) -> int:
        return len(self._picked)

    @overload
    def __getitem__(self, at: int) -> tuple[FoundFile, StoredDoc | None]: ...

    @overload
    def __getitem__(self, at: slice) -> list[tuple[FoundFile, StoredDoc | None]]: ...

    def __getitem__(
        self, at: int | slice
    ) -> tuple[FoundFile, StoredDoc | None] | list[tuple[FoundFile, StoredDoc | None]]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        found = self._files[self._picked[at]]
        return found, self._stored.get(found.rel_path)

    def new_files(self) -> int:
        """How many of the files have no stored row (documents to create, or renames)."""
        if not self._stored:
            return len(self)
        return sum(1 for _, row in self if row is None)


class RenameBook:
    """Vanished documents by source hash, each claimable once (first vanished first)."""

    def __init__(self, vanished: Iterable[StoredDoc]) -> None:
        self._by_hash: dict[str, list[StoredDoc]] = {}
        self._left: dict[int, StoredDoc] = {}
        for row in vanished:
            self._by_hash.setdefault(row.source_hash, []).append(row)
            self._left[row.id] = row

    def claim(self, source_hash: str) -> StoredDoc | None:
        candidates = self._by_hash.get(source_hash)
        if not candidates:
            return None
        row = candidates.pop(0)
        del self._left[row.id]
        return row

    def unclaimed(self) -> list[StoredDoc]:
        return list(self._left.values())
