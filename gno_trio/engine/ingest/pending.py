"""Writes a crash may leave unindexed: marked before, cleared after, finished at the next open.

Capture and remember write a note and then index it, under the write lease.
A process killed between the two (``kill -9``, a power cut) leaves a note on
disk that search does not know until someone runs a sync. So each such
write first leaves a marker beside the index naming its collection, and
removes it once the note is indexed (or the write failed and took its note
back). An open that finds a marker while the write lease is free, so that no
writer is at work, syncs the marker's collection and removes the marker.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from gno_trio.engine.kernel import IndexLocation
from gno_trio.engine.store.atomic import create_new
from gno_trio.errors import GnoError

MARKER_SUFFIX: Final = ".json"


def _folder(location: IndexLocation) -> Path:
    """``index-<name>.pending`` beside the index database."""
    database = location.db_path
    return database.with_name(f"{database.stem}.pending")


@contextlib.contextmanager
def marked(location: IndexLocation, collection: str) -> Iterator[None]:
    """The block writes and indexes a note of ``collection``; a crash inside is finished later."""
    folder = _folder(location)
    marker = folder / f"{secrets.token_hex(8)}{MARKER_SUFFIX}"
    try:
        folder.mkdir(exist_ok=True)
        create_new(marker, json.dumps({"collection": collection}) + "\n")
    except OSError as exc:
        raise GnoError(
            "RUNTIME", f"Cannot mark the write in {folder}: {exc.strerror or exc}"
        ) from exc
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()


def left_behind(location: IndexLocation) -> list[tuple[Path, str | None]]:
    """Markers of writes a killed process did not finish, with their collection (None: unreadable).

    Only meaningful to a holder of the write lease, or while it is free.
    """
    try:
        entries = [e for e in os.scandir(_folder(location)) if e.name.endswith(MARKER_SUFFIX)]
    except FileNotFoundError:
        return []
    found: list[tuple[Path, str | None]] = []
    for entry in entries:
        collection: str | None = None
        with contextlib.suppress(OSError, ValueError, AttributeError):
            named = json.loads(Path(entry.path).read_text("utf-8")).get("collection")
            collection = named if isinstance(named, str) else None
        found.append((Path(entry.path), collection))
    return found
