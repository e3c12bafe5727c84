"""Writing a file so that readers see the old bytes or the new ones, never a mix.

The one helper every writer of user-visible files uses (``index.yml``,
captured and copied notes, memory facts). The text goes to a hidden
temporary file next to its destination, is flushed to disk, and then takes
its place: by ``rename`` when replacing is wanted, by ``link`` when it is
not (a name that appears meanwhile is never overwritten). The directory is
flushed afterwards so the new name survives a crash.

A process killed mid-write leaves its temporary file behind. Every write
first sweeps the temporary files of this helper (and of the helpers it
replaced) out of the folder it writes to: writers hold the write lease, so
no temporary file there belongs to a write in progress.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

TEMP_PREFIX: Final = ".gno-tmp-"
TEMP_SUFFIX: Final = ".tmp"
# Temporary names used before this helper existed; swept the same way.
_LEGACY_PREFIXES: Final = (".gno-capture-", ".fact-", ".index.yml.")
_NO_HARD_LINKS: Final = frozenset(
    {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}
)
NEW_FILE_MODE: Final = 0o666
"""New files get 0666 less the umask, like a file an editor creates."""


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary file this helper (or an older one) leaves behind."""
    return name.endswith(TEMP_SUFFIX) and name.startswith((TEMP_PREFIX, *_LEGACY_PREFIXES))


def sweep(folder: Path) -> int:
    """Remove stale temporary files from ``folder``; returns how many went.

    Only regular files with a temporary name are touched; a missing folder
    is nothing to sweep.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    return sum(remove_temporary(entry.path) for entry in entries if is_temporary(entry.name))


def remove_temporary(path: str | Path) -> bool:
    """Remove one temporary file left behind, if it is still a regular file; whether it went.

    Only a holder of the write lease may call this: no write is then in progress.
    """
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
            return True
    return False


def _write_exclusive(path: Path, text: str, mode: int) -> None:
    """Create ``path`` (never an existing one) with ``text``, flushed to disk.

    A partly written file is removed before the error propagates.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def temporary_name(folder: Path) -> Path:
    """A fresh temporary name in ``folder`` that :func:`sweep` removes if it is left behind."""
    return folder / f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"


@contextlib.contextmanager
def staged(
    folder: Path, text: str, mode: int = NEW_FILE_MODE, *, clean: bool = True
) -> Iterator[Path]:
    """A flushed temporary file with ``text`` next to its destination; always removed.

    For writers that move several files into place as one unit (a note
    refactor): each text is staged first, and only then does anything
    visible change. Such a writer sweeps each folder once itself and passes
    ``clean=False``, so staging a second file does not sweep the first.
    """
    if clean:
        sweep(folder)
    while True:
        temp = temporary_name(folder)
        try:
            _write_exclusive(temp, text, mode)
            break
        except FileExistsError:
            continue
    try:
        yield temp
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def fsync_directory(directory: Path) -> None:
    """Persist a rename or link in ``directory``; best effort where that cannot be done."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def create_new(path: Path, text: str, *, mode: int = NEW_FILE_MODE) -> bool:
    """Write ``path`` atomically unless it exists; False (nothing written) when it does.

    A hard link cannot replace an existing name, so a file that appears
    between planning and writing is never overwritten, and readers never see
    a half-written file. On filesystems without hard links the file is
    created in place with ``O_EXCL``: still never an overwrite.
    """
    with staged(path.parent, text, mode) as temp:
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            try:
                _write_exclusive(path, text, mode)
            except FileExistsError:
                return False
    fsync_directory(path.parent)
    return True


def replace(path: Path, text: str, *, new_mode: int = NEW_FILE_MODE, clean: bool = True) -> None:
    """Atomically replace (or create) ``path`` with ``text``.

    An existing file keeps its permission bits; a new one gets ``new_mode``
    less the umask. ``clean=False`` leaves the folder's temporaries alone:
    for a writer that does not hold the write lease in a folder other
    processes write to at the same time (the data directory's pid-file and
    watch report), whose sweep would remove their files half-way through.
    """
    try:
        keep: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        keep = None
    with staged(path.parent, text, new_mode, clean=clean) as temp:
        if keep is not None:
            os.chmod(temp, keep)
        os.replace(temp, path)
    fsync_directory(path.parent)


__all__ = [
    "NEW_FILE_MODE",
    "TEMP_PREFIX",
    "TEMP_SUFFIX",
    "create_new",
    "fsync_directory",
    "is_temporary",
    "remove_temporary",
    "replace",
    "staged",
    "sweep",
    "temporary_name",
]
