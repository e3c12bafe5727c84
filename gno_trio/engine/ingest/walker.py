"""Finding the files of a collection.

The walk never follows symbolic links (a link could lead out of the root or
into a loop) and prunes excluded directories before descending. It lists
every regular file the collection's pattern and filters admit: a file no
converter understands is still seen, so a sync can list it with its reason
instead of dropping it silently. So is a name the filters admit that is no
regular file (a link, a FIFO, a socket, a device node): it is handed to the
caller with its mode, never opened. A temporary file an atomic write left
behind (a process killed mid-write) is no note: it goes to the caller apart.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Final, NamedTuple

from gno_trio.config import DEFAULT_EXCLUDES
from gno_trio.engine.store.atomic import TEMP_SUFFIX, is_temporary
from gno_trio.engine.uris import indexed_path

# Reserved for logical records GNO derives from container files.
_RESERVED_PREFIX = ".gno/records/"
_ALL_FILES = "^(?:.*/)?[^/]*$"
"""The regex of ``**/*``, the default pattern: every path matches it."""


class FoundFile(NamedTuple):
    """A file a sync looks at, with the ``stat`` fields it compares.

    A full sync makes one only for a file that differs from its indexed
    document (see :class:`~gno_trio.engine.ingest.plan.Walked`).
    """

    rel_path: str  # POSIX separators, relative to the collection root
    abs_path: str
    size: int
    mtime_ns: int
    device: int | None = None
    inode: int | None = None
    """The file the walk saw (``st_dev``, ``st_ino``): a read indexes that file or none."""


def _class_end(pattern: str, start: int) -> int:
    """Where the ``[...]`` class opening at ``start`` closes (-1: a literal ``[``)."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a leading ] is one of the class's characters
    close = pattern.find("]", i)
    if close == -1 or "/" in pattern[start:close]:
        return -1
    return close


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a ``**``-aware glob into a regex over POSIX relative paths.

    ``**/`` matches zero or more directories, ``*`` and ``?`` never cross a
    ``/`` (as minimatch's do), ``[abc]``/``[!abc]`` match one character of a
    folder name, and ``{a,b}`` alternates. Collection patterns and excludes
    and ``multi-get`` globs all read a glob through this one translation.
    """
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and (close := _class_end(pattern, i)) != -1:
            body = pattern[i + 1 : close]
            negated = body[:1] in ("!", "^")
            chars = "".join("\\" + c if c in "\\[]^" else c for c in body[negated:])
            out.append(f"[^/{chars}]" if negated else f"(?!/)[{chars}]")
            i = close + 1
            continue
        elif ch == "{":
            close = pattern.find("}", i)
            if close == -1:
                out.append(re.escape(ch))
            else:
                options = pattern[i + 1 : close].split(",")
                out.append("(?:" + "|".join(re.escape(o) for o in options) + ")")
                i = close + 1
                continue
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("^" + "".join(out) + "$", re.DOTALL)


def _normalise_exts(include: Sequence[str]) -> frozenset[str]:
    exts = set()
    for item in include:
        item = item.strip().lower()
        if item:
            exts.add(item if item.startswith(".") else "." + item)
    return frozenset(exts)


def _exclusions(exclude: Sequence[str]) -> tuple[frozenset[str], list[re.Pattern[str]]]:
    """Excluded names (plain entries) and excluded globs (entries with wildcards or ``/``)."""
    names = frozenset(e for e in exclude if not any(c in e for c in "*?/{"))
    globs = [glob_regex(e) for e in exclude if any(c in e for c in "*?/{")]
    return names, globs


class PathRules:
    """A collection's pattern, extensions and exclusions, compiled once.

    Whoever asks about many paths under the same rules (a folder watch, one
    per change it hears; a sync of named files) builds these once per
    collection and configuration, not once per path.
    """

    __slots__ = ("exts", "globs", "matcher", "names", "supported")

    def __init__(
        self,
        *,
        pattern: str = "**/*",
        include: Sequence[str] = (),
        exclude: Sequence[str] = DEFAULT_EXCLUDES,
        supported: Callable[[str], bool] | None = None,
    ) -> None:
        self.names, self.globs = _exclusions(exclude)
        self.exts = _normalise_exts(include)
        matcher = glob_regex(pattern or "**/*")
        self.matcher = None if matcher.pattern == _ALL_FILES else matcher
        self.supported = supported

    def admits(self, rel_path: str) -> bool:
        """Whether ``walk`` would yield this relative path (ignoring the filesystem).

        Lets a caller that indexes named files (after a write through
        gno-trio, or as a watch reports them) apply exactly the collection's
        rules, so the next full sync agrees.
        """
        segments = rel_path.split("/")
        if not rel_path or any(s in ("", ".", "..") for s in segments) or "\x00" in rel_path:
            return False
        names, globs = self.names, self.globs
        for depth, name in enumerate(segments, 1):
            if name in names:
                return False
            if globs:
                prefix = "/".join(segments[:depth])
                if any(g.match(prefix) or g.match(name) for g in globs):
                    return False
        if rel_path.startswith(_RESERVED_PREFIX):
            return False
        if self.exts and os.path.splitext(segments[-1])[1].lower() not in self.exts:
            return False
        if self.matcher is not None and not self.matcher.match(rel_path):
            return False
        return self.supported is None or self.supported(rel_path)


def admits(
    rel_path: str,
    *,
    pattern: str = "**/*",
    include: Sequence[str] = (),
    exclude: Sequence[str] = DEFAULT_EXCLUDES,
    supported: Callable[[str], bool] | None = None,
) -> bool:
    """:meth:`PathRules.admits` for one path (a caller asking about many keeps the rules)."""
    rules = PathRules(pattern=pattern, include=include, exclude=exclude, supported=supported)
    return rules.admits(rel_path)


class Listed(NamedTuple):
    """The files of one folder that belong to the collection, in listing order.

    Four lists of the same length, made in the walk's own loop: a no-change
    sync of 100,000 files needs no object per file beyond these.
    """

    rel_paths: list[str]  # POSIX separators, relative to the collection root
    fingerprints: list[str]  # ``"size mtime_ns rel_path"`` of each (see :func:`fingerprint`)
    devices: list[int]  # ``st_dev`` of each: which file the walk saw ...
    inodes: list[int]  # ... with ``st_ino`` (a read indexes that file or none)


def fingerprint(size: int, mtime_ns: int, rel_path: str) -> str:
    """A file as a sync compares it with its indexed document: size, mtime, path.

    The walk spells it inline (the same f-string); the store spells it the
    same way in SQL for every indexed document.
    """
    return f"{size} {mtime_ns} {rel_path}"


def root_prefix(root: Path) -> str:
    """What a relative path is appended to for the file's path (the walk's own spelling)."""
    return os.path.join(os.fspath(root), "")


def listing(
    root: Path,
    *,
    pattern: str = "**/*",
    include: Sequence[str] = (),
    exclude: Sequence[str] = DEFAULT_EXCLUDES,
    supported: Callable[[str], bool] | None = None,
    on_error: Callable[[str, OSError], None] | None = None,
    on_other: Callable[[str, int], None] | None = None,
    on_leftover: Callable[[str], None] | None = None,
) -> Iterator[Listed]:
    """The collection's files under ``root``, folder by folder (depth first, sorted folders).

    One ``lstat`` per file and no sorting inside a folder: a no-change sync
    of 100,000 files spends most of its time here, and needs neither. A name
    that is neither a regular file nor a folder goes to ``on_other`` with its
    ``st_mode``, an atomic write's temporary file to ``on_leftover`` (it is never
    listed). A file's path is :func:`root_prefix` followed by its relative path.
    """
    compiled = PathRules(pattern=pattern, include=include, exclude=exclude)
    rules = _Rules(
        compiled.names,
        compiled.globs,
        compiled.exts,
        None if compiled.matcher is None else compiled.matcher.match,
        supported,
        on_error,
        on_other,
        on_leftover,
    )
    # Without filters on files every name needs its lstat anyway (which also
    # tells folders from files): a plain listing of names is cheaper than
    # scandir's entries. With them, scandir's file types spare the lstat of
    # the files they leave out.
    folder = _filtered_folder if rules.exts or rules.matches or supported else _plain_folder
    stack: list[tuple[str, str]] = [(os.fspath(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            files, subdirs = folder(directory, prefix, rules)
        except OSError as exc:
            if on_error is not None:
                on_error(prefix.rstrip("/") or ".", exc)
            continue
        if files.rel_paths:
            yield files
        subdirs.sort()
        stack.extend(reversed(subdirs))


class _Rules(NamedTuple):
    names: frozenset[str]  # excluded names
    globs: list[re.Pattern[str]]  # excluded globs
    exts: frozenset[str]  # included extensions (all when empty)
    matches: Callable[[str], object] | None  # the pattern (None: every path)
    supported: Callable[[str], bool] | None
    on_error: Callable[[str, OSError], None] | None
    on_other: Callable[[str, int], None] | None  # neither a file nor a folder: (rel, st_mode)
    on_leftover: Callable[[str], None] | None  # an atomic write's temporary file


_Folder = tuple[Listed, list[tuple[str, str]]]
"""A folder's files, and its sub-folders (path, prefix)."""


def _reserved(prefix: str) -> bool:
    """Only folders on the way to (or inside) the reserved records folder can hold its files."""
    return prefix.startswith(_RESERVED_PREFIX) or _RESERVED_PREFIX.startswith(prefix)


def _kept(prefix: str, names: Iterable[str], rules: _Rules) -> list[tuple[str, str]]:
    """Each name no exclusion leaves out, with its relative path (as the index spells it)."""
    excluded, globs = rules.names, rules.globs
    kept = []
    for name in names:
        if name in excluded:
            continue
        rel = prefix + (name if name.isascii() else indexed_path(name))
        if name.endswith(TEMP_SUFFIX) and is_temporary(name):
            if rules.on_leftover is not None:
                rules.on_leftover(rel)
            continue
        if globs and any(g.match(rel) or g.match(name) for g in globs):
            continue
        kept.append((name, rel))
    return kept


_FOLDER_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_BY_FOLDER: Final = os.stat in os.supports_dir_fd and os.listdir in os.supports_fd
"""Whether a folder's names are listed and looked at through one descriptor of it.

``fstatat`` on a name resolves one path component where ``lstat`` of the whole
path resolves them all: a tenth or more of the listing's CPU at 100,000 files.
"""
_REGULAR: Final = stat.S_IFREG
_FOLDER: Final = stat.S_IFDIR
_TYPE: Final = 0o170000  # the file type bits of st_mode (stat.S_IFMT)


def _plain_folder(directory: str, prefix: str, rules: _Rules) -> _Folder:
    """One folder of a collection without file filters (the listing raises if it cannot list)."""
    base = os.path.join(directory, "")
    if not _BY_FOLDER:
        return _plain_names(base, prefix, os.listdir(directory), None, rules)
    handle = os.open(directory, _FOLDER_FLAGS)
    try:
        return _plain_names(base, prefix, os.listdir(handle), handle, rules)
    finally:
        os.close(handle)


def _plain_names(
    base: str, prefix: str, names: list[str], handle: int | None, rules: _Rules
) -> _Folder:
    """The files and folders among the ``names`` of the folder at ``base`` (its descriptor
    ``handle``, if open: each name is looked at through it)."""
    on_error, reserved = rules.on_error, _reserved(prefix)
    at = base if handle is None else ""
    look = os.stat
    regular, folder, kind = _REGULAR, _FOLDER, _TYPE
    files = Listed([], [], [], [])
    found, keys, devices, inodes = files
    subdirs: list[tuple[str, str]] = []
    for name, rel in _kept(prefix, names, rules):
        try:
            st = look(at + name, dir_fd=handle, follow_symlinks=False)
        except OSError as exc:  # gone meanwhile, or cannot be looked at
            if on_error is not None:
                on_error(rel, exc)
            continue
        mode = st.st_mode & kind
        if mode == regular:  # a symbolic link is neither a file nor a folder
            if reserved and rel.startswith(_RESERVED_PREFIX):
                continue
            found.append(rel)
            keys.append(f"{st.st_size} {st.st_mtime_ns} {rel}")  # fingerprint()
            devices.append(st.st_dev)
            inodes.append(st.st_ino)
        elif mode == folder:
            subdirs.append((base + name, rel + "/"))
        elif rules.on_other is not None and not (reserved and rel.startswith(_RESERVED_PREFIX)):
            rules.on_other(rel, st.st_mode)
    return files, subdirs


def _filtered_folder(directory: str, prefix: str, rules: _Rules) -> _Folder:
    """One folder of a collection with file filters (the listing raises if it cannot list)."""
    with os.scandir(directory) as it:
        entries = {entry.name: entry for entry in it}
    on_error, reserved = rules.on_error, _reserved(prefix)
    exts, matches, supported = rules.exts, rules.matches, rules.supported
    lstat, is_regular = os.lstat, stat.S_ISREG
    files = Listed([], [], [], [])
    subdirs: list[tuple[str, str]] = []
    for name, rel in _kept(prefix, entries, rules):
        entry = entries[name]
        try:
            # Without following links, a symbolic link is neither a folder nor a file.
            if entry.is_dir(follow_symlinks=False):
                subdirs.append((entry.path, rel + "/"))
                continue
            regular = entry.is_file(follow_symlinks=False)
        except OSError as exc:
            if on_error is not None:
                on_error(rel, exc)
            continue
        if reserved and rel.startswith(_RESERVED_PREFIX):
            continue
        if exts and os.path.splitext(name)[1].lower() not in exts:
            continue
        if (matches is not None and not matches(rel)) or (
            regular and supported is not None and not supported(rel)
        ):
            continue
        try:
            st = lstat(entry.path)
        except OSError as exc:  # gone meanwhile, or cannot be looked at
            if on_error is not None:
                on_error(rel, exc)
            continue
        if is_regular(st.st_mode):
            files.rel_paths.append(rel)
            files.fingerprints.append(fingerprint(st.st_size, st.st_mtime_ns, rel))
            files.devices.append(st.st_dev)
            files.inodes.append(st.st_ino)
        elif not stat.S_ISDIR(st.st_mode) and rules.on_other is not None:
            rules.on_other(rel, st.st_mode)
    return files, subdirs
