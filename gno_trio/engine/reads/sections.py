"""Durable section targets (``SectionTargetV1``): create one for a heading, resolve it later.

A target names a section of one indexed document by what it says, not by
where it sits: its heading path (the titles from the top-level heading down
to the section's own), which occurrence of that path it is, its anchor, a
short exact quote with a little context either side, and the fingerprint of
the whole document it was taken from. Line and offset hints help, but are
never identity.

Resolving answers ``exact`` (same document bytes, same section), ``recovered``
(the document changed, but exactly one section still has the path or anchor
and still holds the quote), ``ambiguous`` (several sections could be it),
``stale`` (the section is there but no longer holds the quote) or
``missing`` (no section has its path or anchor). Only the first two carry a
citation; the others are not safe to cite or navigate to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from gno_trio.engine.ingest.outline import Heading, outline
from gno_trio.engine.lookup import resolve
from gno_trio.engine.reads.documents import mirror_text
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
TARGET_VERSION: Final = "1"
QUOTE_CHARS: Final = 96
CONTEXT_CHARS: Final = 32
MAX_CANDIDATES: Final = 32


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def _line_offsets(lines: Sequence[str]) -> list[int]:
    offsets, position = [], 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    return offsets


def _quote(text: str, lines: Sequence[str], heading: Heading) -> tuple[dict[str, str], int, int]:
    """The exact quote of a section (its first body text, else its title) and its span."""
    offsets = _line_offsets(lines)
    start = end = -1
    for number in range(heading.line + 1, heading.end_line + 1):
        body = lines[number - 1]
        if body.strip():
            start = offsets[number - 1] + (len(body) - len(body.lstrip()))
            limit = offsets[heading.end_line - 1] + len(lines[heading.end_line - 1])
            end = min(start + QUOTE_CHARS, limit)
            break
    if start < 0:
        heading_line = lines[heading.line - 1]
        start = offsets[heading.line - 1] + heading_line.find(heading.title)
        end = start + min(len(heading.title), QUOTE_CHARS)
    exact = text[start:end].rstrip()
    end = start + len(exact)
    quote = {
        "exact": exact,
        "prefix": text[max(0, start - CONTEXT_CHARS) : start],
        "suffix": text[end : end + CONTEXT_CHARS],
    }
    return quote, start, end


def _document(conn: Connection, ref: str) -> tuple[RowView, str, list[str]]:
    row = resolve(conn, parse_ref(ref))
    text = mirror_text(conn, row, ref)
    return row, text, text.split("\n")


def _target(row: RowView, text: str, lines: Sequence[str], heading: Heading) -> dict[str, Any]:
    quote, start, end = _quote(text, lines, heading)
    return {
        "schemaVersion": TARGET_VERSION,
        "document": {"uri": row["uri"]},
        "anchor": heading.anchor,
        "headingPath": list(heading.path),
        "occurrence": heading.occurrence,
        "quote": quote,
        "sourceFingerprint": row["mirror_hash"],
        "hints": {
            "line": heading.line,
            "startOffset": _utf16(text, start),
            "endOffset": _utf16(text, end),
        },
    }


def create(conn: Connection, ref: str, *, anchor: str | None, line: int | None) -> dict[str, Any]:
    """``section@1.0`` (create): the target of the heading named by ``anchor`` or ``line``."""
    if (anchor is None) == (line is None):
        raise GnoError("INVALID_INPUT", "action=create takes exactly one of anchor or line")
    row, text, lines = _document(conn, ref)
    headings = outline(lines)
    if anchor is not None:
        wanted = anchor.strip().lstrip("#").lower()
        found = [h for h in headings if h.anchor == wanted]
        if not found:
            raise GnoError("NOT_FOUND", f"No heading with anchor {anchor} in {row['uri']}")
    else:
        found = [h for h in headings if h.line == line]
        if not found:
            raise GnoError("NOT_FOUND", f"Line {line} of {row['uri']} is not a heading")
    return {
        "schemaVersion": SCHEMA_VERSION,
        "action": "create",
        "uri": row["uri"],
        "target": _target(row, text, lines, found[0]),
    }


def _section_text(lines: Sequence[str], heading: Heading) -> str:
    return "\n".join(lines[heading.line - 1 : heading.end_line])


def _candidate(heading: Heading) -> dict[str, Any]:
    return {
        "anchor": heading.anchor,
        "line": heading.line,
        "title": heading.title,
        "headingPath": list(heading.path),
        "occurrence": heading.occurrence,
    }


def _diagnostics(reason: str, candidates: Sequence[Heading]) -> dict[str, Any]:
    shown = candidates[:MAX_CANDIDATES]
    found: dict[str, Any] = {"reason": reason}
    if candidates:
        found.update(
            {
                "candidates": [_candidate(h) for h in shown],
                "candidateCount": len(candidates),
                "candidatesTruncated": len(shown) < len(candidates),
            }
        )
    return found


def _citation(row: RowView, heading: Heading) -> dict[str, Any]:
    return {
        "uri": row["uri"],
        "anchor": heading.anchor,
        "title": heading.title,
        "lineStart": heading.line,
        "lineEnd": heading.end_line,
        "sourceFingerprint": row["mirror_hash"],
    }


def _judge(
    target: Mapping[str, Any], lines: Sequence[str], headings: Sequence[Heading], same_bytes: bool
) -> tuple[str, Heading | None, str, list[Heading]]:
    """(status, the section it resolves to, the reason, the candidates weighed)."""
    path = tuple(target["headingPath"])
    occurrence = int(target["occurrence"])
    exact_quote = str(target["quote"]["exact"])
    if same_bytes:
        for heading in headings:
            if heading.path == path and heading.occurrence == occurrence:
                return "exact", heading, "document unchanged since the target was made", []
    by_path = [h for h in headings if h.path == path]
    candidates = by_path or [h for h in headings if h.anchor == target["anchor"]]
    if not candidates:
        return "missing", None, "no section has the target's heading path or anchor", []
    holding = [h for h in candidates if exact_quote in _section_text(lines, h)]
    if len(holding) == 1:
        return "recovered", holding[0], "one section still holds the quoted text", candidates
    if len(holding) > 1:
        same = [h for h in holding if h.occurrence == occurrence]
        if len(same) == 1:
            return (
                "recovered",
                same[0],
                "the same occurrence still holds the quoted text",
                candidates,
            )
        return "ambiguous", None, "several sections hold the quoted text", holding
    return "stale", None, "the section no longer holds the quoted text", candidates


def resolve_target(conn: Connection, ref: str, target: Mapping[str, Any]) -> dict[str, Any]:
    """``section@1.0`` (resolve): where the target's section is now, and whether to cite it."""
    row, _text, lines = _document(conn, ref)
    if target["document"]["uri"] != row["uri"]:
        raise GnoError(
            "INVALID_INPUT",
            f"The target names {target['document']['uri']}, not {row['uri']}",
        )
    headings = outline(lines)
    same_bytes = target["sourceFingerprint"] == row["mirror_hash"]
    status, found, reason, candidates = _judge(target, lines, headings, same_bytes)
    result: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "action": "resolve",
        "uri": row["uri"],
        "status": status,
        "currentFingerprint": row["mirror_hash"],
        "target": dict(target),
        "diagnostics": _diagnostics(reason, candidates if status != "exact" else []),
    }
    if found is not None:
        result["citation"] = _citation(row, found)
    return result


__all__ = ["SCHEMA_VERSION", "create", "resolve_target"]
