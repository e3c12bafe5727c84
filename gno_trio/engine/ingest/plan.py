"""Deciding what a sync must do, before it writes anything.

A sync is two steps. This module is the first: from the files a walk found
and a narrow view of the stored rows it works out which files are unchanged
(same size and mtime as indexed, nothing to do), which must be read (new,
changed on disk, failed last time, or coming back), and which indexed
documents vanished. It reads the database only through
:func:`stored_documents` and writes nothing, so it can be tested and
reasoned about on its own; :mod:`gno_trio.engine.ingest.sync` applies the plan in
bounded batches.

Rename detection needs to know every vanished document before the first new
file is written (the new file's bytes may be a vanished document's), which
is why the plan is complete before any write: a plan holds a small record
per changed file, never file contents.
"""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from gno_trio.engine.ingest.walker import FoundFile


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


_STORED_SQL = (
    "SELECT id, rel_path, source_size, source_mtime_ns, active, "
    "last_error_code IS NOT NULL, source_hash, mirror_hash IS NOT NULL FROM documents "
    "WHERE collection = ?"
)


def stored_documents(
    conn: sqlite3.Connection, collection: str, only: Sequence[str] | None = None
) -> dict[str, StoredDoc]:
    """The stored rows of a collection (or of just the ``only`` paths), by relative path."""
    if only is None:
        cursor = conn.execute(_STORED_SQL, (collection,))
    else:
        cursor = conn.execute(
            _STORED_SQL + " AND rel_path IN (SELECT value FROM json_each(?))",
            (collection, json.dumps(sorted(only))),
        )
    return {
        row[1]: StoredDoc(
            int(row[0]),
            row[1],
            int(row[2]),
            int(row[3]),
            bool(row[4]),
            bool(row[5]),
            row[6],
            bool(row[7]),
        )
        for row in cursor
    }


Fingerprint = tuple[str, int, int]
"""``(relative path, size, mtime_ns)``: a file a sync may skip when the walk sees it so again."""

_FINGERPRINTS_SQL = (
    "SELECT rel_path, source_size, source_mtime_ns FROM documents "
    "WHERE collection = ? AND active = 1 AND last_error_code IS NULL"
)


fingerprint: Final[Callable[[FoundFile], Fingerprint]] = operator.itemgetter(0, 2, 3)
"""A found file's :data:`Fingerprint` (its path, size and mtime fields)."""


def indexed_fingerprints(conn: sqlite3.Connection, collection: str) -> set[Fingerprint]:
    """The fingerprint of every document a sync need not read if its file is unchanged."""
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples, whatever the connection's row factory
    return set(cursor.execute(_FINGERPRINTS_SQL, (collection,)))


def walk_is_known(files: Sequence[FoundFile], known: set[Fingerprint]) -> bool:
    """Whether every file the walk found is an indexed document, unchanged."""
    return known.issuperset(map(fingerprint, files))


def stored_for_walk(
    conn: sqlite3.Connection,
    collection: str,
    files: Sequence[FoundFile],
    known: set[Fingerprint] | None = None,
    *,
    all_known: bool | None = None,
) -> tuple[set[Fingerprint], dict[str, StoredDoc]]:
    """What deciding a full sync needs of the stored rows, read in proportion to the changes.

    A no-change sync of a large collection is a walk and one set comparison:
    the fingerprints of the indexed documents (``known``, read here unless
    given) come in one statement, and full rows only for the files whose
    fingerprint differs and, when some active document was not seen, for
    the active documents the walk did not see (the vanished).
    """
    if known is None:
        known = indexed_fingerprints(conn, collection)
    if all_known is None:
        all_known = walk_is_known(files, known)
    if all_known:
        others = []
    else:
        others = [found.rel_path for found in files if fingerprint(found) not in known]
    rows = stored_documents(conn, collection, others) if others else {}
    active_seen = len(files) - len(others) + sum(1 for row in rows.values() if row.active)
    (active,) = conn.execute(
        "SELECT COUNT(*) FROM documents WHERE collection = ? AND active = 1", (collection,)
    ).fetchone()
    if int(active) > active_seen:
        seen = {found.rel_path for found in files}
        unseen = [
            rel
            for (rel,) in conn.execute(
                "SELECT rel_path FROM documents WHERE collection = ? AND active = 1", (collection,)
            )
            if rel not in seen
        ]
        rows.update(stored_documents(conn, collection, unseen))
    return known, rows


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """The outcome of deciding: counts, the files to read, the documents that vanished."""

    scanned: int
    unchanged: int
    # Files to read, with their stored row when they have one. A file whose
    # bytes turn out to hash as before costs a stat update, not a re-index.
    to_read: tuple[tuple[FoundFile, StoredDoc | None], ...]
    # Active documents the walk did not see (outside unlisted folders), in
    # path order; a new file with the same bytes as one of them is a rename.
    vanished: tuple[StoredDoc, ...]
    # Every path the walk saw (ingest errors of other paths are dropped).
    seen: frozenset[str]


def unchanged(found: FoundFile, row: StoredDoc | None) -> bool:
    """Indexed, active, no error last time, and the same size and mtime on disk."""
    return (
        row is not None
        and row.active
        and not row.errored
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
    unlisted: Iterable[str] = (),
    partial: bool = False,
    unchanged_keys: set[Fingerprint] | frozenset[Fingerprint] = frozenset(),
    all_unchanged: bool | None = None,
) -> SyncPlan:
    """What to do with each found file, and which stored documents vanished.

    ``stored`` holds the rows of the files that may have changed and of
    every active document the walk may not have seen; a file whose
    fingerprint is in ``unchanged_keys`` (see :func:`stored_for_walk`) is
    unchanged without a row (``all_unchanged``: every file's is, when the
    caller knows it already). ``partial`` (a sync of named files only) never
    reports anything as vanished: files that were not named were not looked
    at.
    """
    files = list(files)
    seen = frozenset(found.rel_path for found in files)
    to_read: list[tuple[FoundFile, StoredDoc | None]] = []
    kept = 0
    if all_unchanged is None:
        all_unchanged = bool(unchanged_keys) and unchanged_keys.issuperset(map(fingerprint, files))
    if all_unchanged:
        kept = len(files)  # nothing changed: no file needs a look at its row
        files = []
    for found in files:
        if unchanged_keys and fingerprint(found) in unchanged_keys:
            kept += 1
            continue
        row = stored.get(found.rel_path)
        if unchanged(found, row):
            kept += 1
        else:
            to_read.append((found, row))
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
        unchanged=kept,
        to_read=tuple(to_read),
        vanished=vanished,
        seen=seen,
    )


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
