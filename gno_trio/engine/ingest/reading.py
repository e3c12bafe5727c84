"""Opening a file of a collection to read it: the regular file it is, or why it is not read.

A name the walk or the index knows may hold something else by the time it is
opened: a link to a file outside the collection, a FIFO whose open or read
would wait for a writer for good (while the write lease is held), a device
node. Every read of a collection's file (a sync's, a refactor's) opens it
here: without following a link, without waiting, and only a regular file
gets past.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO, Final

from gno_trio.engine.ingest.documents.reasons import SPECIAL_FILE, SYMLINK
from gno_trio.errors import GnoError

_READ_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a link is refused, not followed
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def not_a_file(rel_path: str, mode: int) -> GnoError:
    """Why a name that is no regular file is not read (``SYMLINK`` or ``SPECIAL_FILE``)."""
    if stat.S_ISLNK(mode):
        return GnoError(SYMLINK, f"{rel_path}: a symbolic link (links are never followed)")
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return GnoError(SPECIAL_FILE, f"{rel_path}: {kind}, not a regular file")


@contextlib.contextmanager
def opened_regular(
    path: str | os.PathLike[str], rel_path: str
) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """``path`` open for reading, with its ``fstat``; ``SYMLINK``, ``SPECIAL_FILE`` or
    ``READ_ERROR`` when it is no regular file or cannot be opened."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
            raise not_a_file(rel_path, stat.S_IFLNK) from exc
        raise GnoError("READ_ERROR", f"Cannot read {rel_path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode):
            raise not_a_file(rel_path, seen.st_mode)
        yield handle, seen


def note_text(path: str | os.PathLike[str], rel_path: str, *, action: str) -> str:
    """A note's text exactly as stored (line endings kept), for a writer that rewrites or copies
    it (``action``: what it does with the note), or why it cannot be: ``PATH_NOT_FOUND`` when no
    regular file can be read there, ``INVALID_INPUT`` when it is not UTF-8 text."""
    try:
        with opened_regular(path, rel_path) as (handle, _):
            data = handle.read()
    except GnoError as error:
        raise GnoError(
            "PATH_NOT_FOUND", f"File of {rel_path} is not readable: {error.message}"
        ) from error
    except OSError as exc:
        raise GnoError(
            "PATH_NOT_FOUND", f"File of {rel_path} is not readable: {exc.strerror or exc}"
        ) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GnoError(
            "INVALID_INPUT", f"{rel_path} is not an editable text note and cannot be {action}"
        ) from exc
