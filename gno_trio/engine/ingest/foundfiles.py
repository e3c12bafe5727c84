"""The files a full sync must look at, held as compactly as the walk spelled them.

A first sync of 100,000 files reads every one of them, and its plan lives as
long as the sync: as :class:`~.walker.FoundFile` records (a tuple, two paths
and four integers each) it held 55 MB of the writer's memory from the first
batch to the last. Here each file is its fingerprint (one string: size,
mtime and relative path, as the walk made it) and two integers in arrays,
about 11 MB for the same files; a :class:`~.walker.FoundFile` is made of one
only when it is asked for, and dropped with the batch that wrote it.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import overload

from gno_trio.engine.ingest.walker import FoundFile
from gno_trio.engine.uris import disk_path


class FoundFiles(Sequence[FoundFile]):
    """Files under one root, in the order added (each folder's in path order)."""

    __slots__ = ("_base", "_devices", "_inodes", "_keys")

    def __init__(self, base: str) -> None:
        self._base = base  # the root's path with its separator (walker.root_prefix)
        self._keys: list[str] = []  # fingerprints: "size mtime_ns rel_path" (walker.fingerprint)
        self._devices = array("Q")
        self._inodes = array("Q")

    def add(
        self, fingerprints: Sequence[str], devices: Sequence[int], inodes: Sequence[int]
    ) -> None:
        """Files the walk saw, in order: their fingerprints, devices and inodes."""
        self._keys.extend(fingerprints)
        self._devices.extend(devices)
        self._inodes.extend(inodes)

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, at: int) -> FoundFile: ...

    @overload
    def __getitem__(self, at: slice) -> list[FoundFile]: ...

    def __getitem__(self, at: int | slice) -> FoundFile | list[FoundFile]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        size, mtime_ns, rel = self._keys[at].split(" ", 2)
        path = self._base + disk_path(rel)
        return FoundFile(rel, path, int(size), int(mtime_ns), self._devices[at], self._inodes[at])


def rel_path_of(fingerprint: str) -> str:
    """The relative path a fingerprint ends with."""
    return fingerprint.split(" ", 2)[2]


__all__ = ["FoundFiles", "rel_path_of"]
