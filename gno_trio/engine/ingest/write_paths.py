"""Where a writer may put a file inside a collection, and the folders it creates on the way.

Capture, filing (copy, move) and refactors all write into collection folders
named by a caller; one set of path rules (no absolute paths, no ``..``, no
sensitive folders, nothing a sync would never index) and one careful folder
creation (no symbolic links followed, created folders removed on failure)
keep every writer inside its collection.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from gno_trio.config import Collection
from gno_trio.config.dirs import Dirs
from gno_trio.engine.ingest.capture_request import ANY_CONTROL, utf8_size_of
from gno_trio.engine.ingest.convert import MARKDOWN, converter_for, extension_of
from gno_trio.engine.ingest.roots import checked_root
from gno_trio.engine.ingest.walker import glob_regex
from gno_trio.engine.uris import indexed_path
from gno_trio.errors import GnoError

SENSITIVE_SEGMENTS: Final = frozenset({".ssh", ".gnupg", ".aws", ".config", ".git", "node_modules"})
"""Path segments a capture may never write into (credentials, VCS, dependencies)."""
RUN_BY_TOOLS: Final = frozenset(
    {
        ".vscode",
        ".idea",
        ".devcontainer",
        ".github",
        ".gitlab",
        ".circleci",
        ".buildkite",
        ".husky",
        ".envrc",
        ".gitlab-ci.yml",
        ".travis.yml",
        ".pre-commit-config.yaml",
        "makefile",
        "justfile",
        "package.json",
    }
)
"""Names (of folders or files, compared case-insensitively) whose files other programs run:
editor tasks, CI workflows, git hooks, build and shell environment files. A note
written there by an agent would be a command someone else's tool executes."""
RESERVED_SEGMENT: Final = ".gno"
"""gno-trio's own folder name (records derived from container files), at any depth."""

SLUG_MAX_CHARS: Final = 80
MAX_SEGMENT_BYTES: Final = 255

# Paths under this prefix are reserved for records GNO derives from container
# files; the walker never indexes them, so a capture there could not be found.
_RESERVED_PREFIX: Final = ".gno/records/"

_SLUG_SEPARATORS: Final = re.compile(r"[\W_]+")

_DRIVE_PREFIX: Final = re.compile(r"^[A-Za-z]:")


def path_segments(raw: str, what: str) -> list[str]:
    """Split a caller's relative path into safe segments, or raise ``INVALID_PATH``.

    Backslashes count as separators (Windows clients send them); empty and
    ``.`` segments vanish. Absolute paths, ``..``, control characters, the
    sensitive folders, what other tools run and ``.gno`` are refused.
    """
    if "\x00" in raw:
        raise GnoError("INVALID_PATH", f"{what} must not contain a NUL byte")
    if ANY_CONTROL.search(raw):
        raise GnoError("INVALID_PATH", f"{what} must not contain control characters")
    utf8_size_of(raw, what)
    text = raw.strip().replace("\\", "/")
    if text.startswith("/") or _DRIVE_PREFIX.match(text):
        raise GnoError("INVALID_PATH", f"{what} must be relative to the collection: {raw!r}")
    segments = [s for s in text.split("/") if s not in ("", ".")]
    for segment in segments:
        if segment == "..":
            raise GnoError("INVALID_PATH", f"{what} must not contain '..': {raw!r}")
        folded = segment.lower()
        if folded in SENSITIVE_SEGMENTS:
            raise GnoError("INVALID_PATH", f"{what} enters a sensitive folder ({segment}): {raw!r}")
        if folded in RUN_BY_TOOLS:
            raise GnoError(
                "INVALID_PATH",
                f"{what} names {segment}, whose files other tools run (tasks, workflows, "
                f"hooks); notes are not written there: {raw!r}",
            )
        if folded == RESERVED_SEGMENT:
            raise GnoError("INVALID_PATH", f"{what} enters the reserved folder .gno: {raw!r}")
        if indexed_path(segment) != segment:  # the index's spelling of stray bytes
            raise GnoError(
                "INVALID_PATH", f"{what} holds characters U+F700-U+F7FF, kept for names: {raw!r}"
            )
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise GnoError("INVALID_PATH", f"{what} has a name longer than 255 bytes")
    return segments


def explicit_rel_path(raw: str) -> str:
    """The caller's ``path``, checked, with ``.md`` added when it has no extension."""
    segments = path_segments(raw, "path")
    if not segments:
        raise GnoError("INVALID_PATH", "path names no file")
    if not PurePosixPath(segments[-1]).suffix:
        segments[-1] += ".md"
    return "/".join(segments)


def slugify(text: str) -> str | None:
    """A file-name stem from a title: lower case, words joined by ``-``, any script."""
    words = _SLUG_SEPARATORS.sub("-", unicodedata.normalize("NFC", text).lower()).strip("-")
    if len(words) > SLUG_MAX_CHARS:
        words = words[:SLUG_MAX_CHARS].rstrip("-")
    while len(words.encode("utf-8")) > MAX_SEGMENT_BYTES - len(".md") - 8:
        words = words[:-1].rstrip("-")
    return words or None


def _excluded(exclude: Sequence[str], rel_path: str) -> bool:
    """Mirror of the walker's exclusion test, applied to each step of the path."""
    names = {e for e in exclude if not any(c in e for c in "*?/{")}
    globs = [glob_regex(e) for e in exclude if any(c in e for c in "*?/{")]
    parts = rel_path.split("/")
    for depth, name in enumerate(parts, start=1):
        prefix = "/".join(parts[:depth])
        if name in names or any(g.match(prefix) or g.match(name) for g in globs):
            return True
    return False


def unindexable_reason(collection: Collection, rel_path: str) -> str | None:
    """Why a sync of this collection would never pick up ``rel_path`` (None: it would)."""
    if converter_for(rel_path) is None:
        ext = extension_of(rel_path) or "(none)"
        return f"file type {ext} is not indexed"
    if rel_path.startswith(_RESERVED_PREFIX):
        return f"{_RESERVED_PREFIX} is reserved"
    if _excluded(collection.exclude, rel_path):
        return "it is excluded by the collection's exclude list"
    includes = {e.strip().lower() for e in collection.include if e.strip()}
    exts = {e if e.startswith(".") else "." + e for e in includes}
    if exts and extension_of(rel_path) not in exts:
        return "its extension is not in the collection's include list"
    if not glob_regex(collection.pattern or "**/*").match(rel_path):
        return f"it does not match the collection's pattern {collection.pattern}"
    return None


def suffixed(rel_path: str, number: int) -> str:
    path = PurePosixPath(rel_path)
    return str(path.with_name(f"{path.stem}-{number}{path.suffix}"))


def is_markdown(rel_path: str) -> bool:
    return converter_for(rel_path) is MARKDOWN


def collection_root(collection: Collection, dirs: Dirs) -> Path:
    """The folder gno-trio may write notes into for ``collection``, judged at every write.

    ``PATH_NOT_FOUND`` when it is gone, ``FORBIDDEN_ROOT`` when ``index.yml``
    (edited by hand) points it at a folder no collection may have.
    """
    root = Path(collection.path)
    try:
        st = os.stat(root)
    except OSError as exc:
        raise GnoError(
            "PATH_NOT_FOUND", f"Collection folder {root} is not available: {exc.strerror or exc}"
        ) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise GnoError("PATH_NOT_FOUND", f"Collection folder {root} is not a directory")
    checked_root(root, dirs)
    return root


def lstat_or_none(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


@contextlib.contextmanager
def parent_folders(root: Path, rel_path: str) -> Iterator[None]:
    """Create the missing folders of ``rel_path``; remove them again if the block fails.

    An existing step must be a real folder: a symbolic link could lead the
    write out of the collection, so it is refused.
    """
    created: list[Path] = []
    current = root
    try:
        for segment in rel_path.split("/")[:-1]:
            current = current / segment
            st = lstat_or_none(current)
            if st is None:
                try:
                    current.mkdir()
                    created.append(current)
                    continue
                except FileExistsError:
                    st = current.lstat()
                except OSError as exc:
                    raise GnoError(
                        "RUNTIME", f"Cannot create folder {current}: {exc.strerror or exc}"
                    ) from exc
            if stat.S_ISLNK(st.st_mode):
                raise GnoError(
                    "INVALID_PATH", f"{current} is a symbolic link; capture will not follow it"
                )
            if not stat.S_ISDIR(st.st_mode):
                raise GnoError("INVALID_PATH", f"{current} exists and is not a folder")
        yield
    except BaseException:
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def single_name(raw: str, what: str) -> str:
    """A caller's file or folder name: exactly one safe path segment."""
    if "/" in raw or "\\" in raw:
        raise GnoError("INVALID_PATH", f"{what} must be a single name without separators: {raw!r}")
    segments = path_segments(raw, what)
    if len(segments) != 1:
        raise GnoError("INVALID_PATH", f"{what} must name something: {raw!r}")
    return segments[0]


def real_folder(root: Path, segments: list[str]) -> Path:
    """``root`` joined with ``segments``, every step an existing folder and no link."""
    current = root
    for segment in segments:
        current = current / segment
        st = lstat_or_none(current)
        if st is None:
            raise GnoError(
                "PATH_NOT_FOUND", f"Folder {'/'.join(segments)} does not exist in the collection"
            )
        if stat.S_ISLNK(st.st_mode):
            raise GnoError(
                "INVALID_PATH",
                f"{current.relative_to(root)} is a symbolic link; it is not followed",
            )
        if not stat.S_ISDIR(st.st_mode):
            raise GnoError("INVALID_PATH", f"{current.relative_to(root)} is not a folder")
    return current
