"""What ``update`` and ``index`` print after a sync, and how a file's error reads on a line.

A no-change ``update`` must not scroll every old error past again: errors
whose verdict still holds (the file and the conversion policy unchanged) are
counted with a pointer to ``status``, and only new ones are listed. An error
message usually starts with the file's path; the line names the path once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from gno_trio.cli.render.primitives import plural

LISTED: Final = 20
"""New errors and warnings listed per collection; the rest are counted."""


def file_line(mark: str, item: Mapping[str, Any]) -> str:
    """``! path: CODE: message``, the message's own leading ``path:`` taken off."""
    path, message = str(item["relPath"]), str(item["message"])
    message = message.removeprefix(f"{path}: ")
    return f"{mark} {path}: {item['code']}: {message}"


def listed(mark: str, items: Sequence[Mapping[str, Any]], total: int, limit: int) -> list[str]:
    """Up to ``limit`` items as :func:`file_line`, then ``... N more`` when ``total`` is more."""
    lines = [file_line(mark, item) for item in items[:limit]]
    if total > limit:
        lines.append(f"{mark} ... {total - limit} more (gno-trio status --json lists them)")
    return lines


def sync_lines(reports: Iterable[Any], *, indent: str = "  ") -> list[str]:
    """One summary line per collection, its new errors and warnings, and the standing count."""
    lines: list[str] = []
    for r in reports:
        lines.append(
            f"{r.collection}: {r.scanned} files, {r.added} added, {r.updated} updated, "
            f"{r.renamed} renamed, {r.removed} removed, {r.reactivated} restored, "
            f"{r.unchanged} unchanged, {r.skipped} skipped, {plural(len(r.errors), 'error')} "
            f"({r.duration_ms:.0f} ms)"
        )
        fresh = [e for e in r.errors if e["relPath"] not in r.standing]
        standing = len(r.errors) - len(fresh)
        lines += [indent + ln for ln in listed("!", fresh, len(fresh), LISTED)]
        if standing:
            lines.append(
                f"{indent}! {plural(standing, 'earlier error')} unchanged "
                "(gno-trio status lists them)"
            )
        lines += [indent + ln for ln in listed("?", r.warnings, len(r.warnings), LISTED)]
    return lines
