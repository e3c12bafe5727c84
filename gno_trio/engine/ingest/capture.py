"""Capture: create one new document in a collection and index it before returning.

Every surface (the ``gno_capture`` MCP tool, ``gno-trio capture``) goes
through :func:`capture`, so path rules, collision handling, error codes and
the receipt are the same everywhere. The order of work is fixed:

1. validate everything that needs no disk or lock (collection, text, tags,
   provenance, path), so a rejected call costs nothing and leaves nothing;
2. take the shared write lease (``LOCKED`` when another writer keeps it);
3. settle a name collision against both the disk and the index;
4. write the file atomically (temporary file, then an exclusive hard link or
   a rename), creating missing folders and removing them again on failure;
5. index just that file, so it is keyword-searchable when the call returns.

A file that was written but could not be indexed is still a successful
capture: the receipt's ``sync`` block says what went wrong. Capture never
computes embeddings; ``embed.status`` is always ``not_requested``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import stat
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Final

import yaml

from gno_trio.config import Collection
from gno_trio.dirs import Dirs
from gno_trio.engine.ingest.convert import MARKDOWN, converter_for, extension_of
from gno_trio.engine.ingest.frontmatter import extract_meta, normalize_tag
from gno_trio.engine.ingest.roots import checked_root
from gno_trio.engine.ingest.walker import glob_regex
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.atomic import create_new, replace
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.store.lease import HeldLease
from gno_trio.engine.uris import docid_for, make_uri
from gno_trio.errors import GnoError

CAPTURE_MAX_TEXT_BYTES: Final = 1_048_576
"""Largest capture body accepted, in UTF-8 bytes (1 MiB)."""

SENSITIVE_SEGMENTS: Final = frozenset({".ssh", ".gnupg", ".aws", ".config", ".git", "node_modules"})
"""Path segments a capture may never write into (credentials, VCS, dependencies)."""

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
INBOX_FOLDER: Final = "inbox"
HASH_NAME_HEX: Final = 12
MAX_SUFFIX: Final = 999
SLUG_MAX_CHARS: Final = 80
MAX_SEGMENT_BYTES: Final = 255
MAX_TITLE_CHARS: Final = 1000
MAX_SOURCE_VALUE_CHARS: Final = 4096
MAX_TAGS: Final = 100
# Said to every surface alike, so it names no command or tool.
EMBED_REASON: Final = (
    "capture indexes keywords only; the note reaches vector search with the next embedding run"
)

# Paths under this prefix are reserved for records GNO derives from container
# files; the walker never indexes them, so a capture there could not be found.
_RESERVED_PREFIX: Final = ".gno/records/"
# C0 controls other than tab, newline, carriage return and form feed mark
# binary data (or terminal garbage), not prose.
_BINARY_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")
_ANY_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_LEADING_BLANK_LINES: Final = re.compile(r"\A(?:[ \t]*\n)+")
_SLUG_SEPARATORS: Final = re.compile(r"[\W_]+")
_ATX_HEADING: Final = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE: Final = re.compile(r"^ {0,3}(```|~~~)")
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
_DRIVE_PREFIX: Final = re.compile(r"^[A-Za-z]:")


# ---------------------------------------------------------------------------
# Request
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Presets: small scaffolds that give a new note its usual sections
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Text rules
# ---------------------------------------------------------------------------


def _utf8_size(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise GnoError("INVALID_INPUT", f"{what} is not valid Unicode text") from exc


def check_content(content: str) -> None:
    """Reject what cannot be a note: over 1 MiB, NUL or other binary control bytes."""
    size = _utf8_size(content, "content")
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


def _one_line(value: str, what: str, limit: int) -> str:
    """Whitespace runs folded to one space; other control characters refused."""
    _utf8_size(value, what)
    cleaned = " ".join(value.split())
    if _ANY_CONTROL.search(cleaned):
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
        cleaned = _one_line(value, f"source.{name}", MAX_SOURCE_VALUE_CHARS)
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


# ---------------------------------------------------------------------------
# Path rules
# ---------------------------------------------------------------------------


def path_segments(raw: str, what: str) -> list[str]:
    """Split a caller's relative path into safe segments, or raise ``INVALID_PATH``.

    Backslashes count as separators (Windows clients send them); empty and
    ``.`` segments vanish. Absolute paths, ``..``, control characters and the
    sensitive folders are refused.
    """
    if "\x00" in raw:
        raise GnoError("INVALID_PATH", f"{what} must not contain a NUL byte")
    if _ANY_CONTROL.search(raw):
        raise GnoError("INVALID_PATH", f"{what} must not contain control characters")
    _utf8_size(raw, what)
    text = raw.strip().replace("\\", "/")
    if text.startswith("/") or _DRIVE_PREFIX.match(text):
        raise GnoError("INVALID_PATH", f"{what} must be relative to the collection: {raw!r}")
    segments = [s for s in text.split("/") if s not in ("", ".")]
    for segment in segments:
        if segment == "..":
            raise GnoError("INVALID_PATH", f"{what} must not contain '..': {raw!r}")
        if segment.lower() in SENSITIVE_SEGMENTS:
            raise GnoError("INVALID_PATH", f"{what} enters a sensitive folder ({segment}): {raw!r}")
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise GnoError("INVALID_PATH", f"{what} has a name longer than 255 bytes")
    return segments


def explicit_rel_path(raw: str) -> str:
    """The caller's ``path``, checked, with ``.md`` added when it has no extension."""
    segments = path_segments(raw, "path")
    if not segments:
        raise GnoError("INVALID_PATH", "path names no file")
    if not PurePosixPath(segments[-1]).suffix:
        segments[-1] += ".md"
    return "/".join(segments)


def slugify(text: str) -> str | None:
    """A file-name stem from a title: lower case, words joined by ``-``, any script."""
    words = _SLUG_SEPARATORS.sub("-", unicodedata.normalize("NFC", text).lower()).strip("-")
    if len(words) > SLUG_MAX_CHARS:
        words = words[:SLUG_MAX_CHARS].rstrip("-")
    while len(words.encode("utf-8")) > MAX_SEGMENT_BYTES - len(".md") - 8:
        words = words[:-1].rstrip("-")
    return words or None


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


def _excluded(exclude: Sequence[str], rel_path: str) -> bool:
    """Mirror of the walker's exclusion test, applied to each step of the path."""
    names = {e for e in exclude if not any(c in e for c in "*?/{")}
    globs = [glob_regex(e) for e in exclude if any(c in e for c in "*?/{")]
    parts = rel_path.split("/")
    for depth, name in enumerate(parts, start=1):
        prefix = "/".join(parts[:depth])
        if name in names or any(g.match(prefix) or g.match(name) for g in globs):
            return True
    return False


def unindexable_reason(collection: Collection, rel_path: str) -> str | None:
    """Why a sync of this collection would never pick up ``rel_path`` (None: it would)."""
    if converter_for(rel_path) is None:
        ext = extension_of(rel_path) or "(none)"
        return f"file type {ext} is not indexed"
    if rel_path.startswith(_RESERVED_PREFIX):
        return f"{_RESERVED_PREFIX} is reserved"
    if _excluded(collection.exclude, rel_path):
        return "it is excluded by the collection's exclude list"
    includes = {e.strip().lower() for e in collection.include if e.strip()}
    exts = {e if e.startswith(".") else "." + e for e in includes}
    if exts and extension_of(rel_path) not in exts:
        return "its extension is not in the collection's include list"
    if not glob_regex(collection.pattern or "**/*").match(rel_path):
        return f"it does not match the collection's pattern {collection.pattern}"
    return None


def suffixed(rel_path: str, number: int) -> str:
    path = PurePosixPath(rel_path)
    return str(path.with_name(f"{path.stem}-{number}{path.suffix}"))


def is_markdown(rel_path: str) -> bool:
    return converter_for(rel_path) is MARKDOWN


# ---------------------------------------------------------------------------
# Composing the file
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Disk
# ---------------------------------------------------------------------------


def collection_root(collection: Collection, dirs: Dirs) -> Path:
    """The folder gno-trio may write notes into for ``collection``, judged at every write.

    ``PATH_NOT_FOUND`` when it is gone, ``FORBIDDEN_ROOT`` when ``index.yml``
    (edited by hand) points it at a folder no collection may have.
    """
    root = Path(collection.path)
    try:
        st = os.stat(root)
    except OSError as exc:
        raise GnoError(
            "PATH_NOT_FOUND", f"Collection folder {root} is not available: {exc.strerror or exc}"
        ) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise GnoError("PATH_NOT_FOUND", f"Collection folder {root} is not a directory")
    checked_root(root, dirs)
    return root


def _node(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


@contextlib.contextmanager
def _parent_folders(root: Path, rel_path: str) -> Iterator[None]:
    """Create the missing folders of ``rel_path``; remove them again if the block fails.

    An existing step must be a real folder: a symbolic link could lead the
    write out of the collection, so it is refused.
    """
    created: list[Path] = []
    current = root
    try:
        for segment in rel_path.split("/")[:-1]:
            current = current / segment
            st = _node(current)
            if st is None:
                try:
                    current.mkdir()
                    created.append(current)
                    continue
                except FileExistsError:
                    st = current.lstat()
                except OSError as exc:
                    raise GnoError(
                        "RUNTIME", f"Cannot create folder {current}: {exc.strerror or exc}"
                    ) from exc
            if stat.S_ISLNK(st.st_mode):
                raise GnoError(
                    "INVALID_PATH", f"{current} is a symbolic link; capture will not follow it"
                )
            if not stat.S_ISDIR(st.st_mode):
                raise GnoError("INVALID_PATH", f"{current} exists and is not a folder")
        yield
    except BaseException:
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


# ---------------------------------------------------------------------------
# Index
# ---------------------------------------------------------------------------


def indexed_document(
    conn: sqlite3.Connection, collection: str, rel_path: str
) -> sqlite3.Row | None:
    """The id and docid of the active document at this path, if one is indexed."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT id, docid FROM documents WHERE collection = ? AND rel_path = ? AND active = 1",
        (collection, rel_path),
    ).fetchone()
    return row


def _taken(conn: sqlite3.Connection, root: Path, collection: str, rel_path: str) -> bool:
    return (
        _node(root / rel_path) is not None
        or indexed_document(conn, collection, rel_path) is not None
    )


@dataclass(slots=True)
class SyncOutcome:
    status: dict[str, Any]
    row: sqlite3.Row | None = None


def index_written(
    engine: EngineKernel,
    collection: str,
    rel_path: str,
    conn: sqlite3.Connection,
    lease: HeldLease,
) -> SyncOutcome:
    """Index one file just written; a failure becomes the ``sync`` block, never an error.

    The file stays on disk either way: the next sync picks it up.
    """
    try:
        report = engine.sync_paths(collection, [rel_path], conn=conn, lease=lease)
        row = indexed_document(conn, collection, rel_path)
    except GnoError as error:
        return SyncOutcome({"status": "failed", "error": f"{error.code}: {error.message}"})
    except (sqlite3.Error, OSError) as exc:
        return SyncOutcome({"status": "failed", "error": f"RUNTIME: {exc}"})
    if report.errors:
        first = report.errors[0]
        return SyncOutcome({"status": "failed", "error": f"{first['code']}: {first['message']}"})
    if row is None:
        return SyncOutcome({"status": "failed", "error": "RUNTIME: the file was not indexed"})
    return SyncOutcome({"status": "completed"}, row)


def _add_index_tags(conn: sqlite3.Connection, doc_id: int, tags: Sequence[str]) -> None:
    """Tags of a non-Markdown file have no frontmatter to live in: store them as user tags."""
    if not tags:
        return
    with write_transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO doc_tags(doc_id, tag, source) VALUES (?, ?, 'user')",
            [(doc_id, tag) for tag in tags],
        )
        fulltext.refresh_metadata(conn, doc_id)


def _doc_tags(conn: sqlite3.Connection, doc_id: int) -> list[str]:
    rows = conn.execute(
        "SELECT lower(tag) FROM doc_tags WHERE doc_id = ? ORDER BY tag", (doc_id,)
    ).fetchall()
    return [str(r[0]) for r in rows]


# ---------------------------------------------------------------------------
# The capture itself
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    collection: Collection
    root: Path
    rel_path: str
    policy: str
    composed: Composed
    source: dict[str, str]
    markdown: bool


@dataclass(frozen=True, slots=True)
class _Outcome:
    """Where the note ended up and how the collision policy got it there."""

    rel_path: str
    result: str  # the receipt's collisionPolicyResult
    wrote: bool  # False only when an existing note was opened

    def flags(self) -> dict[str, bool]:
        return {
            "created": self.result in ("created", "created_with_suffix"),
            "openedExisting": self.result == "opened_existing",
            "createdWithSuffix": self.result == "created_with_suffix",
            "overwritten": self.result == "overwritten",
        }


def _plan(engine: EngineKernel, request: CaptureRequest, now: datetime | None) -> _Plan:
    name = request.collection.strip() if isinstance(request.collection, str) else ""
    if not name:
        raise GnoError("INVALID_INPUT", "collection is required")
    collection = engine.collection(name)
    root = collection_root(collection, engine.location.dirs)  # a forbidden root refuses first
    if request.collision_policy is not None and request.collision_policy not in COLLISION_POLICIES:
        raise GnoError(
            "INVALID_INPUT",
            f"collisionPolicy must be one of {', '.join(COLLISION_POLICIES)}, "
            f"not {request.collision_policy!r}",
        )
    if request.preset_id is not None and request.preset_id not in PRESETS:
        raise GnoError("INVALID_INPUT", f"unknown presetId {request.preset_id!r}")
    content = request.content or ""
    check_content(content)
    title = _one_line(request.title, "title", MAX_TITLE_CHARS) if request.title else None
    title = title or None  # a title of only spaces is no title
    tags = clean_tags(request.tags)
    source = clean_source(request.source, now)

    explicit = explicit_rel_path(request.path) if request.path is not None else None
    markdown = explicit is None or is_markdown(explicit)
    if markdown:
        composed = compose_markdown(
            content, title=title, tags=tags, source=source, preset_id=request.preset_id
        )
    else:
        composed = compose_plain(content, tags=tags, preset_id=request.preset_id)
    hash_name = f"capture-{composed.content_hash[:HASH_NAME_HEX]}"
    if explicit is not None:
        rel_path, named_by_hash = explicit, False
    elif request.folder_path is not None or title:
        folder = path_segments(request.folder_path or "", "folderPath")
        named = composed.title or next(iter(headings(composed.body)), "")
        stem = slugify(named) or hash_name
        rel_path = "/".join([*folder, f"{stem}.md"])
        named_by_hash = stem == hash_name
    else:
        day = datetime.fromisoformat(source["capturedAt"]).astimezone(UTC).date().isoformat()
        rel_path = f"{INBOX_FOLDER}/{day}/{hash_name}.md"
        named_by_hash = True
    reason = unindexable_reason(collection, rel_path)
    if reason is not None:
        raise GnoError(
            "INVALID_PATH", f"{rel_path} would never be indexed in {collection.name}: {reason}"
        )
    # Same text, same generated name: opening the existing note makes a
    # repeated capture idempotent. A chosen name that is taken is a conflict.
    policy = request.collision_policy or ("open_existing" if named_by_hash else "error")
    return _Plan(
        collection=collection,
        root=root,
        rel_path=rel_path,
        policy=policy,
        composed=composed,
        source=source,
        markdown=markdown,
    )


def _conflict(plan: _Plan, rel_path: str) -> GnoError:
    return GnoError(
        "CONFLICT",
        f"{rel_path} already exists in collection {plan.collection.name} "
        "(collisionPolicy error; use open_existing or create_with_suffix)",
    )


def _settle(plan: _Plan, conn: sqlite3.Connection, overwrite: bool) -> _Outcome:
    """Under the lease: decide the final path and write the file (or not)."""
    name, root, text = plan.collection.name, plan.root, plan.composed.text
    rel_path = plan.rel_path
    target = root / rel_path
    if overwrite and _taken(conn, root, name, rel_path):
        st = _node(target)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise GnoError("CONFLICT", f"{rel_path} exists and is not a regular file")
        with _parent_folders(root, rel_path):
            replace(target, text)
        return _Outcome(rel_path, "overwritten", wrote=True)
    if plan.policy == "create_with_suffix":
        for number in range(1, MAX_SUFFIX + 1):
            candidate = rel_path if number == 1 else suffixed(rel_path, number)
            if _taken(conn, root, name, candidate):
                continue
            with _parent_folders(root, candidate):
                if create_new(root / candidate, text):
                    result = "created" if number == 1 else "created_with_suffix"
                    return _Outcome(candidate, result, wrote=True)
        raise GnoError("CONFLICT", f"{rel_path} and its first {MAX_SUFFIX} suffixes are taken")
    if not _taken(conn, root, name, rel_path):
        with _parent_folders(root, rel_path):
            if create_new(target, text):
                return _Outcome(rel_path, "created", wrote=True)
    if plan.policy == "error":
        raise _conflict(plan, rel_path)
    st = _node(target)
    if st is None or not stat.S_ISREG(st.st_mode):
        raise GnoError(
            "CONFLICT",
            f"{rel_path} is taken but cannot be opened (it is "
            f"{'indexed but missing on disk' if st is None else 'not a regular file'})",
        )
    return _Outcome(rel_path, "opened_existing", wrote=False)


def _existing_receipt_facts(
    path: Path, markdown: bool, fallback_source: dict[str, str]
) -> tuple[bytes, str, dict[str, str]]:
    """Bytes, body hash and provenance of a note opened instead of written."""
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    if not markdown:
        return data, body_hash(text), fallback_source
    meta = extract_meta(text, path.name)
    stored = meta.frontmatter.get("source")
    source = fallback_source
    if (
        isinstance(stored, Mapping)
        and stored.get("kind") in SOURCE_KINDS
        and isinstance(stored.get("capturedAt"), str)
    ):
        source = {str(k): str(v) for k, v in stored.items() if k in SOURCE_FIELDS}
    return data, body_hash(meta.body), source


def _index_tags_safely(
    conn: sqlite3.Connection, synced: SyncOutcome, tags: Sequence[str]
) -> dict[str, Any]:
    """Store a plain file's tags; a failure downgrades the sync block, the file stays."""
    if synced.row is None:
        return synced.status
    try:
        _add_index_tags(conn, int(synced.row["id"]), tags)
    except sqlite3.Error as exc:
        return {"status": "failed", "error": f"RUNTIME: tags were not stored: {exc}"}
    return synced.status


def capture(
    engine: EngineKernel,
    request: CaptureRequest,
    *,
    server_instance_id: str | None = None,
    conn: sqlite3.Connection | None = None,
    lease_wait_seconds: float | None = None,
    now: datetime | None = None,
    lease: HeldLease | None = None,
) -> dict[str, Any]:
    """Create (or open, per the collision policy) one note and index it, under the lease.

    Returns the ``mcp-capture-result@1.0`` receipt; ``serverInstanceId`` is
    included when given (the MCP server passes its own, the CLI has none).
    Raises :class:`GnoError` with ``NOT_FOUND``, ``INVALID_INPUT``,
    ``INVALID_PATH``, ``PATH_NOT_FOUND``, ``CONFLICT``, ``LOCKED`` or
    ``RUNTIME``; when it raises, nothing was written.
    """
    plan = _plan(engine, request, now)
    try:
        with (
            engine.writing(lease, wait_seconds=lease_wait_seconds) as held,
            engine.connection(conn) as c,
        ):
            return _capture_under_lease(
                engine, plan, c, held, request.overwrite, server_instance_id
            )
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise GnoError("RUNTIME", f"Cannot capture {plan.rel_path}: {reason}") from exc


def _capture_under_lease(
    engine: EngineKernel,
    plan: _Plan,
    conn: sqlite3.Connection,
    lease: HeldLease,
    overwrite: bool,
    server_instance_id: str | None,
) -> dict[str, Any]:
    """Settle the name, write, index, and build the receipt (the lease is held)."""
    outcome = _settle(plan, conn, overwrite)
    abs_path = plan.root / outcome.rel_path
    synced = index_written(engine, plan.collection.name, outcome.rel_path, conn, lease)
    sync_status = synced.status
    if outcome.wrote:
        data = plan.composed.text.encode("utf-8")
        content_hash, source, tags = plan.composed.content_hash, plan.source, plan.composed.tags
        if not plan.markdown:
            sync_status = _index_tags_safely(conn, synced, tags)
    else:
        data, content_hash, source = _existing_receipt_facts(abs_path, plan.markdown, plan.source)
        tags = _doc_tags(conn, int(synced.row["id"])) if synced.row is not None else []
    receipt: dict[str, Any] = {
        "docid": str(synced.row["docid"]) if synced.row is not None else docid_for(data),
        "uri": make_uri(plan.collection.name, outcome.rel_path),
        "absPath": str(abs_path),
        "collection": plan.collection.name,
        "relPath": outcome.rel_path,
        **outcome.flags(),
        "contentHash": content_hash,
        "source": source,
        "tags": tags,
        "sync": sync_status,
        "embed": {"status": "not_requested", "reason": EMBED_REASON},
        "collisionPolicyResult": outcome.result,
    }
    if server_instance_id is not None:
        receipt["serverInstanceId"] = server_instance_id
    return receipt


__all__ = [
    "CAPTURE_MAX_TEXT_BYTES",
    "COLLISION_POLICIES",
    "PRESETS",
    "SENSITIVE_SEGMENTS",
    "SOURCE_KINDS",
    "CaptureRequest",
    "body_hash",
    "capture",
    "normalize_body",
]
