"""The file a capture writes: frontmatter merged with the caller's own, preset sections, the body.

Kept apart from the write itself so the exact bytes (and the content hash
the receipt reports) follow from the request alone, with no disk involved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import yaml

from gno_trio.engine.ingest.capture_request import PRESETS, Preset, body_hash, normalize_body
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.meta_fields import normalize_tag
from gno_trio.errors import GnoError

_ATX_HEADING: Final = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE: Final = re.compile(r"^ {0,3}(```|~~~)")


def headings(body: str) -> list[str]:
    """Texts of the ATX headings outside fenced code, in order."""
    found = []
    fence: str | None = None
    for line in body.splitlines():
        marker = _FENCE.match(line)
        if marker is not None:
            fence = None if fence == marker.group(1) else fence or marker.group(1)
        elif fence is None and (heading := _ATX_HEADING.match(line)) is not None:
            found.append(heading.group(1).strip())
    return found


@dataclass(frozen=True, slots=True)
class Composed:
    """The file to write and the facts the receipt reports about it."""

    text: str
    body: str
    title: str | None
    tags: list[str]
    content_hash: str


def _existing_tags(value: Any) -> list[str]:
    """Tags already in the content's own frontmatter (a list or a comma/space string)."""
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = value
    else:
        return []
    tags = (normalize_tag(str(item)) for item in items if isinstance(item, str | int | float))
    return [t for t in tags if t]


def _scaffold(body: str, preset: Preset, heading: str) -> str:
    """The preset's sections: a whole note for an empty body, else the missing ones."""
    if not body.strip():
        if not heading:
            return ""
        return "\n\n".join([f"# {heading}", *(f"## {s}" for s in preset.sections)]) + "\n"
    present = {h.lower() for h in headings(body)}
    missing = [f"## {s}" for s in preset.sections if s.lower() not in present]
    return body.rstrip() + "\n\n" + "\n\n".join(missing) + "\n" if missing else body


def compose_markdown(
    content: str,
    *,
    title: str | None,
    tags: list[str],
    source: dict[str, str],
    preset_id: str | None,
) -> Composed:
    """Frontmatter (title, type, the caller's own keys, tags, source) plus the body.

    Content that starts with its own frontmatter block is merged, not
    nested: its keys are kept, its tags joined with the requested ones, and
    only ``source`` is replaced by this capture's provenance.
    """
    meta = extract_meta(content, "capture.md")
    own = dict(meta.frontmatter) if meta.frontmatter_error is None else {}
    body = meta.body if meta.frontmatter_error is None else content
    own_keys = {k.lower(): k for k in own}
    own_title = own.get(own_keys.get("title", ""))
    if isinstance(own_title, str | int | float) and not isinstance(own_title, bool):
        chosen_title = title or " ".join(str(own_title).split()) or None
    else:
        chosen_title = title
    merged_tags = list(
        dict.fromkeys(
            [
                *_existing_tags(own.get(own_keys.get("tags", ""))),
                *_existing_tags(own.get(own_keys.get("tag", ""))),
                *tags,
            ]
        )
    )
    preset = PRESETS[preset_id] if preset_id is not None else None
    if preset is not None:
        body = _scaffold(body, preset, chosen_title or preset.heading)
    body = normalize_body(body)
    if not body:
        raise GnoError(
            "INVALID_INPUT",
            "content is required (or a presetId that scaffolds a note, with a title for blank)",
        )
    front: dict[str, Any] = {}
    if chosen_title:
        front["title"] = chosen_title
    if preset is not None and preset.content_type and "type" not in own_keys:
        front["type"] = preset.content_type
    for key, value in own.items():
        if key.lower() not in ("title", "tags", "tag", "source"):
            front[key] = value
    if merged_tags:
        front["tags"] = merged_tags
    front["source"] = dict(source)
    block = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1_000_000)
    return Composed(
        text=f"---\n{block}---\n{body}",
        body=body,
        title=chosen_title,
        tags=merged_tags,
        content_hash=body_hash(body),
    )


def compose_plain(content: str, *, tags: list[str], preset_id: str | None) -> Composed:
    """A non-Markdown file holds exactly the content; its tags live in the index."""
    if preset_id is not None:
        raise GnoError("INVALID_INPUT", "presetId scaffolds Markdown notes only (use a .md path)")
    body = normalize_body(content)
    if not body:
        raise GnoError("INVALID_INPUT", "content is required")
    return Composed(text=body, body=body, title=None, tags=tags, content_hash=body_hash(body))
