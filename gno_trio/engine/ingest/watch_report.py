"""Who follows the folders of a data directory, and what it last said about it.

Several residents may serve one data directory (an editor's stdio child
beside a ``serve``). One of them watches and syncs: the one holding the
watch lease, an ``flock`` on ``watch.lock`` held for as long as it watches
(the kernel drops it when that process dies, and another resident takes
over). The others serve what it indexed through the shared store.

The watching resident publishes its state to ``watch-state.json`` beside
the lease, so ``status`` answers the same from every process and from the
command line: a report is believed only while the lease is held, so a
crashed watcher's last words are never shown as current.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from gno_trio.engine.store.atomic import replace as write_file_atomically
from gno_trio.engine.store.lease import HeldLease, is_held, write_lease

WATCH_LOCK_NAME: Final = "watch.lock"
WATCH_STATE_NAME: Final = "watch-state.json"
WATCH_BUSY: Final = "LOCKED"


@contextlib.contextmanager
def watch_lease(data_dir: Path) -> Iterator[HeldLease]:
    """Hold the data directory's watch lease for the block, or ``LOCKED`` at once."""
    with write_lease(
        data_dir / WATCH_LOCK_NAME,
        wait_seconds=0,
        busy_code=WATCH_BUSY,
        busy_message="Another gno-trio resident watches the folders of this data directory",
    ) as held:
        yield held


def publish(data_dir: Path, report: dict[str, Any]) -> None:
    """Write the watching resident's report where every process can read it."""
    # Other residents write beside it (a pid-file): their temporaries are not ours to sweep.
    write_file_atomically(data_dir / WATCH_STATE_NAME, json.dumps(report) + "\n", clean=False)


def published(data_dir: Path) -> dict[str, Any] | None:
    """The report of the resident that watches now, or None when none does."""
    if not is_held(data_dir / WATCH_LOCK_NAME):
        return None
    try:
        report = json.loads((data_dir / WATCH_STATE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


__all__ = ["WATCH_BUSY", "publish", "published", "watch_lease"]
