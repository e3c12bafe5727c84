"""What a sync works on and what it reports: the collection spec and the sync report.

Shared by every step of a sync (decide, prepare, apply) and by the
collection rows kept in line with ``index.yml``, so it sits below them all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gno_trio.config import DEFAULT_EXCLUDES
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView

ProgressFn = Callable[[int, int, str], None]
"""``(files done, files in the collection, what is being worked on)``."""


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    """What sync needs to know about a collection (mirrors the config entry)."""

    name: str
    path: Path
    pattern: str = "**/*"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    language_hint: str | None = None
    egress_policy: str = "local_only"
    memory_managed: bool = False


@dataclass(slots=True)
class SyncReport:
    collection: str
    scanned: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    renamed: int = 0
    removed: int = 0
    reactivated: int = 0
    # Files not indexed because of their type (listed in status as "skipped").
    skipped: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    # Paths among ``errors`` whose earlier verdict still holds (the file and the
    # conversion policy are unchanged): a summary counts them instead of listing them.
    standing: set[str] = field(default_factory=set)
    # Indexed anyway, but something in the file deserves the user's attention
    # (today: frontmatter that could not be parsed).
    warnings: list[dict[str, str]] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def changed(self) -> int:
        """Documents whose indexed content or presence this sync changed."""
        return self.added + self.updated + self.renamed + self.removed + self.reactivated

    @property
    def written(self) -> int:
        """Documents this sync wrote (new, changed, moved or back)."""
        return self.added + self.updated + self.renamed + self.reactivated

    def as_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "scanned": self.scanned,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "renamed": self.renamed,
            "removed": self.removed,
            "reactivated": self.reactivated,
            "skipped": self.skipped,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "durationMs": round(self.duration_ms, 1),
        }


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def mtime_iso(mtime_ns: int) -> str:
    """``mtime_ns`` in ISO 8601 to the millisecond (UTC, ``Z``): once per file a sync writes,
    so the fields are formatted directly (``isoformat(timespec=...)`` costs twice as much)."""
    s = datetime.fromtimestamp(mtime_ns / 1e9, UTC)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (  # noqa: UP031 (the fastest formatting)
        s.year,
        s.month,
        s.day,
        s.hour,
        s.minute,
        s.second,
        s.microsecond // 1000,
    )


def collection_columns(spec: CollectionSpec) -> dict[str, Any]:
    """The ``collections`` row a spec should have (besides name and timestamps)."""
    return {
        "path": os.fspath(spec.path),
        "pattern": spec.pattern,
        "include_json": json.dumps(list(spec.include)),
        "exclude_json": json.dumps(list(spec.exclude)),
        "language_hint": spec.language_hint,
        "egress_policy": spec.egress_policy,
        "memory_managed": int(spec.memory_managed),
    }


def collection_row_matches(row: RowView, spec: CollectionSpec) -> bool:
    return all(row[k] == v for k, v in collection_columns(spec).items())


def upsert_collection(conn: Connection, spec: CollectionSpec) -> None:
    SQLITE_STORES.collections(conn).upsert(spec.name, collection_columns(spec), now_iso())
