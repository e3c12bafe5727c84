"""Where file-change events come from: ``watchfiles`` on the operating system's watch API.

``watchfiles.awatch`` (inotify, FSEvents, ReadDirectoryChangesW through
Rust's ``notify``) runs on anyio, so under trio. It already groups a burst:
after the first change it waits until :data:`QUIET_MS` pass with no new one
(at most :data:`GROUP_MS`), and yields the set. Where the operating system
cannot watch (the inotify watch limit reached, or a network file system
whose changes made elsewhere raise no local event) the same call polls the
tree every :data:`POLL_MS` instead; :func:`polling_reason` names the file
systems known not to deliver events.

A source is any callable with :data:`Source`'s shape, so tests can feed a
watcher their own events (an overflow, a restart) without a file system.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final

import trio

Changes = set[tuple[int, str]]
"""One group of changes: ``(kind, absolute path)`` pairs (kinds as ``watchfiles.Change``)."""
Source = Callable[[Path, bool, trio.Event], AsyncIterator[Changes]]
"""``(root, polling, stop)`` to the groups of changes under ``root`` until ``stop`` is set;
an empty group now and then (at least once the watch is up) says it is still watching."""

QUIET_MS: Final = 50
"""A group ends once no change came for this long."""
GROUP_MS: Final = 800
"""A group never waits longer than this from its first change (a steady stream of writes)."""
POLL_MS: Final = 500
"""How often a polling watch lists the tree."""
WAKE_MS: Final = 1_000
"""How long a quiet watch waits before it yields an empty group (the watch is up)."""

NETWORK_FILE_SYSTEMS: Final = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "fuse.sshfs"}
)
"""File systems whose changes made on another machine raise no event here."""


def _mount_type(path: Path, mounts_file: Path) -> str | None:
    """The file system type of the mount holding ``path`` (longest mount point), if known."""
    try:
        lines = mounts_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = os.fspath(path)
    best, kind = "", None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def polling_reason(
    root: Path, *, forced: bool, mounts_file: Path = Path("/proc/mounts")
) -> str | None:
    """Why ``root`` must be polled rather than watched, or None when the OS can watch it."""
    if forced:
        return "watch.polling is set in the config"
    kind = _mount_type(root, mounts_file)
    if kind in NETWORK_FILE_SYSTEMS:
        return f"network file system ({kind}): changes made elsewhere raise no event here"
    return None


async def watchfiles_source(root: Path, polling: bool, stop: trio.Event) -> AsyncIterator[Changes]:
    """Groups of changes under ``root`` from ``watchfiles``, every path kept (we filter)."""
    from watchfiles import awatch  # the watch library loads with the first watch

    async for changes in awatch(
        root,
        watch_filter=None,
        debounce=GROUP_MS,
        step=QUIET_MS,
        stop_event=stop,
        rust_timeout=WAKE_MS,
        yield_on_timeout=True,
        force_polling=polling,
        poll_delay_ms=POLL_MS,
        ignore_permission_denied=True,
    ):
        yield {(int(kind), path) for kind, path in changes}


__all__ = ["Changes", "Source", "polling_reason", "watchfiles_source"]
