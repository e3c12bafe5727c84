"""What a capture may ask for: the request, its limits and presets, and the text rules.

Everything here is judged before any disk or lock is touched, so a rejected
capture costs nothing and leaves nothing; the same rules clean the tags and
the ``source:`` provenance block that filing and audits read back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Final

from gno_trio.engine.ingest.meta_fields import normalize_tag
from gno_trio.errors import GnoError

CAPTURE_MAX_TEXT_BYTES: Final = 1_048_576
"""Largest capture body accepted, in UTF-8 bytes (1 MiB)."""

COLLISION_POLICIES: Final = ("error", "open_existing", "create_with_suffix")
SOURCE_KINDS: Final = ("direct", "web", "email", "meeting", "chat", "file", "api", "unknown")
SOURCE_FIELDS: Final = (
    "kind",
    "capturedAt",
    "title",
    "url",
    "uri",
    "docid",
    "mime",
    "ext",
    "author",
    "observedAt",
    "externalId",
)
DEFAULT_SOURCE_KIND: Final = "direct"

MAX_TITLE_CHARS: Final = 1000
MAX_SOURCE_VALUE_CHARS: Final = 4096
MAX_TAGS: Final = 100

# C0 controls other than tab, newline, carriage return and form feed mark
# binary data (or terminal garbage), not prose.
_BINARY_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")
ANY_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_LEADING_BLANK_LINES: Final = re.compile(r"\A(?:[ \t]*\n)+")

_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """One capture, as every surface hands it to :func:`capture`.

    ``source`` uses the wire names (``observedAt``, ``externalId`` ...);
    ``None`` anywhere means "not given".
    """

    collection: str
    content: str | None = None
    title: str | None = None
    path: str | None = None
    folder_path: str | None = None
    collision_policy: str | None = None
    preset_id: str | None = None
    overwrite: bool = False
    tags: Sequence[str] = ()
    source: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Preset:
    heading: str  # the note's heading when the caller gives no title
    content_type: str | None  # written as frontmatter ``type`` unless already set
    sections: tuple[str, ...]


PRESETS: Final[Mapping[str, Preset]] = {
    "blank": Preset("", None, ()),  # nothing to scaffold but the caller's title
    "project-note": Preset("Project", "project", ("Goal", "Current state", "Next steps", "Links")),
    "research-note": Preset(
        "Research", "research", ("Question", "What I found", "Sources", "Open questions")
    ),
    "decision-note": Preset(
        "Decision", "decision", ("Context", "Options considered", "Decision", "Consequences")
    ),
    "prompt-pattern": Preset(
        "Prompt pattern", "prompt-pattern", ("Use it when", "Prompt", "Example result", "Caveats")
    ),
    "source-summary": Preset(
        "Source summary",
        "source-summary",
        ("Where it comes from", "Summary", "Key points", "Quotes worth keeping"),
    ),
    "idea-original": Preset("Idea", "idea", ("The idea", "Why it matters", "First step")),
    "person": Preset("Person", "person", ("Role", "How we met", "Notes")),
    "company-project": Preset(
        "Company project", "company-project", ("Overview", "People", "Timeline", "Notes")
    ),
    "meeting": Preset("Meeting", "meeting", ("Attendees", "Agenda", "Notes", "Action items")),
}


def utf8_size_of(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise GnoError("INVALID_INPUT", f"{what} is not valid Unicode text") from exc


def check_content(content: str) -> None:
    """Reject what cannot be a note: over 1 MiB, NUL or other binary control bytes."""
    size = utf8_size_of(content, "content")
    if size > CAPTURE_MAX_TEXT_BYTES:
        raise GnoError(
            "INVALID_INPUT",
            f"content is {size} bytes; the limit is {CAPTURE_MAX_TEXT_BYTES} bytes (1 MiB)",
        )
    found = _BINARY_CONTROLS.search(content)
    if found is not None:
        what = (
            "a NUL byte" if found.group() == "\x00" else f"control byte {ord(found.group()):#04x}"
        )
        raise GnoError("INVALID_INPUT", f"content must be text, but it contains {what}")


def normalize_body(text: str) -> str:
    """Line endings to ``\\n``, leading blank lines and trailing whitespace dropped.

    The result (with one final newline) is what gets hashed, so the same note
    pasted from Windows or with an extra blank line has the same hash.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _LEADING_BLANK_LINES.sub("", text).rstrip()
    return text + "\n" if text else ""


def body_hash(body: str) -> str:
    """SHA-256 (hex) of the normalised body; the receipt's ``contentHash``."""
    return hashlib.sha256(normalize_body(body).encode("utf-8")).hexdigest()


def one_line(value: str, what: str, limit: int) -> str:
    """Whitespace runs folded to one space; other control characters refused."""
    utf8_size_of(value, what)
    cleaned = " ".join(value.split())
    if ANY_CONTROL.search(cleaned):
        raise GnoError("INVALID_INPUT", f"{what} must not contain control characters")
    if len(cleaned) > limit:
        raise GnoError("INVALID_INPUT", f"{what} is longer than {limit} characters")
    return cleaned


def clean_tags(raw: Sequence[str]) -> list[str]:
    """Normalised, de-duplicated tags; a tag with nothing valid left is an error."""
    if len(raw) > MAX_TAGS:
        raise GnoError("INVALID_INPUT", f"at most {MAX_TAGS} tags are allowed")
    tags: dict[str, None] = {}
    for item in raw:
        tag = normalize_tag(item) if isinstance(item, str) else None
        if tag is None:
            raise GnoError(
                "INVALID_INPUT",
                f"invalid tag {item!r}: use letters, digits, '-', '.' and '/' between segments",
            )
        tags[tag] = None
    return list(tags)


def _instant(value: str, what: str) -> str:
    """An RFC 3339 date-time; a bare date means midnight UTC, no offset means UTC."""
    text = value.strip()
    try:
        if len(text) == 10:
            parsed = datetime.combine(date.fromisoformat(text), datetime.min.time())
        else:
            parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise GnoError(
            "INVALID_INPUT", f"{what} must be an ISO 8601 date or date-time, not {value!r}"
        ) from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    stamp = parsed.isoformat()
    return stamp[:-6] + "Z" if stamp.endswith("+00:00") else stamp


def now_instant(now: datetime | None = None) -> str:
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def clean_source(raw: Mapping[str, str] | None, now: datetime | None = None) -> dict[str, str]:
    """The ``source:`` provenance block: kind (default direct), capturedAt, then the rest."""
    given = dict(raw or {})
    unknown = sorted(set(given) - set(SOURCE_FIELDS))
    if unknown:
        raise GnoError("INVALID_INPUT", f"unknown source field(s): {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name in SOURCE_FIELDS:
        value = given.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise GnoError("INVALID_INPUT", f"source.{name} must be a string")
        cleaned = one_line(value, f"source.{name}", MAX_SOURCE_VALUE_CHARS)
        if cleaned:
            values[name] = cleaned
    kind = values.get("kind", DEFAULT_SOURCE_KIND)
    if kind not in SOURCE_KINDS:
        raise GnoError(
            "INVALID_INPUT", f"source.kind must be one of {', '.join(SOURCE_KINDS)}, not {kind!r}"
        )
    for name in ("capturedAt", "observedAt"):
        if name in values:
            values[name] = _instant(values[name], f"source.{name}")
    if "url" in values and not _URL.match(values["url"]):
        raise GnoError("INVALID_INPUT", f"source.url is not an absolute URL: {values['url']!r}")
    block = {"kind": kind, "capturedAt": values.get("capturedAt") or now_instant(now)}
    block.update((k, v) for k, v in values.items() if k not in block)
    return block
