"""Which file changes matter to an index that follows its folders.

A resident server watches every collection root and hands each change it
sees to this module before any work is done. Editors and tools write far
more than the documents themselves: swap and backup files (``.x.swp``,
``x~``, ``.#x``, vim's ``4913`` probe), our own atomic-write temporaries
(``.gno-tmp-*``), version-control internals (``.git/``), and anything the
collection's own rules leave out. None of those may cost a sync.

What remains is one of two kinds: a path that names a file the collection
would index (a targeted sync of just those paths handles it, deletes and
renames included), or a path that may be a folder (created, moved or
removed as a whole), which only a walk of the collection can settle.
:func:`settle` makes that call against the disk and the stored rows.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from gno_trio.engine.ingest.spec import CollectionSpec
from gno_trio.engine.ingest.walker import PathRules
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection

SCRATCH_PREFIXES: Final = (".#", ".gno-tmp-", ".~lock.", "~$")
"""Names editors and our own writers give files that are never notes (Emacs locks,
gno-trio's atomic temporaries, LibreOffice locks, Office owner files)."""
SCRATCH_SUFFIXES: Final = ("~", ".swp", ".swo", ".swx", ".swpx", ".tmp", ".crswap", ".part")
"""Backup, swap and part-written files (vim, Emacs, Chrome, download tools)."""
SCRATCH_NAMES: Final = frozenset({"4913", ".DS_Store", "Thumbs.db"})
"""vim's write-permission probe and the file browsers' folder caches."""
IGNORED_FOLDERS: Final = frozenset({".git", ".hg", ".svn", ".jj"})
"""Version-control internals: never documents, whatever the collection's rules."""


def scratch_name(name: str) -> bool:
    """Whether a file name is an editor's or a tool's scratch file, never a document."""
    return (
        name in SCRATCH_NAMES
        or name.startswith(SCRATCH_PREFIXES)
        or name.endswith(SCRATCH_SUFFIXES)
    )


@dataclass(frozen=True, slots=True)
class WatchedRoot:
    """One collection root as the watcher sees it, with the rules its changes pass.

    The rules are compiled with it, once per collection and configuration (a
    changed configuration makes a new one), never per change heard.
    """

    collection: str
    root: Path
    spec: CollectionSpec
    skipped: tuple[Path, ...] = ()
    """Folders inside the root never to look at (gno-trio's own directories)."""
    files: PathRules = field(init=False, compare=False, repr=False)
    """The collection's rules for its documents (pattern, extensions, exclusions)."""
    folders: PathRules = field(init=False, compare=False, repr=False)
    """Its exclusions alone, which every segment of a path passes, folders included."""

    def __post_init__(self) -> None:
        spec = self.spec
        files = PathRules(pattern=spec.pattern, include=spec.include, exclude=spec.exclude)
        object.__setattr__(self, "files", files)
        object.__setattr__(self, "folders", PathRules(exclude=spec.exclude))

    def relevant(self, path: str) -> str | None:
        """The path of a change relative to the root, or None when it can never matter.

        The root itself (``"."``) stands for "something changed, look again":
        an event queue that overflowed, or a root that came back.
        """
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return None
        if any(Path(path).is_relative_to(skip) for skip in self.skipped):
            return None
        parts = rel.parts
        if not parts:
            return "."
        if any(part in IGNORED_FOLDERS for part in parts) or scratch_name(parts[-1]):
            return None
        posix = "/".join(parts)
        # The collection's exclude rules apply to every segment, folders included;
        # its pattern and extensions only to files, so a folder is kept for now.
        if not self.folders.admits(posix):
            return None
        return posix

    def indexes(self, rel: str) -> bool:
        """Whether a file at ``rel`` would be one of the collection's documents."""
        return self.files.admits(rel)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _holds_documents(conn: Connection, collection: str, rel: str) -> bool:
    """Whether an indexed document lies under the folder ``rel`` (``"/"`` sorts before ``"0"``)."""
    return SQLITE_STORES.documents(conn).holds_under(collection, rel)


@dataclass(frozen=True, slots=True)
class Settled:
    """What a batch of changed paths needs: a walk of the collection, or just these files."""

    walk: bool
    files: frozenset[str]


def settle(conn: Connection, watched: WatchedRoot, paths: Iterable[str]) -> Settled:
    """Decide what the changed ``paths`` (relative, from :meth:`WatchedRoot.relevant`) need.

    A folder on disk, a folder that held documents, or the root itself needs a
    walk (its files were never named one by one); every other path is a file
    the collection would index, or nothing at all.
    """
    files: set[str] = set()
    for rel in paths:
        if rel == ".":
            return Settled(walk=True, files=frozenset())
        if _is_folder(watched.root / rel) or _holds_documents(conn, watched.collection, rel):
            return Settled(walk=True, files=frozenset())
        if watched.indexes(rel):
            files.add(rel)
    return Settled(walk=False, files=frozenset(files))


def watched_root(spec: CollectionSpec, skipped: Iterable[Path]) -> WatchedRoot:
    """The watcher's view of one collection (its root resolved, as the events name it)."""
    root = Path(os.path.realpath(spec.path))
    return WatchedRoot(spec.name, root, spec, tuple(Path(os.path.realpath(p)) for p in skipped))


__all__ = ["Settled", "WatchedRoot", "scratch_name", "settle", "watched_root"]
