"""One fact = one Markdown file: normalisation, hashing, naming, validation.

A fact file lives at ``facts/YYYY-MM-DD/<recordId>.md`` and carries a
``memory`` frontmatter block (recordId, scopes, caller, session, createdAt,
contentHash, optional source) and, when it replaces an earlier fact, a
``relations.supersedes`` list of that fact's URI. Fact files stay ordinary
documents: they are searched, read and journaled like any other note. The
validator here decides whether a file is a usable fact; a malformed one is
reported, never fatal.

The format is memory's (:mod:`gno_trio.engine.memory` writes and recalls
facts), but it stands low, on the store alone, because indexing reads it
too: every fact file a sync writes is projected into the memory tables
(:mod:`gno_trio.engine.ingest.memory_projection`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from gno_trio.engine.store.atomic import create_new, sweep
from gno_trio.errors import GnoError

MAX_TEXT_BYTES = 4096
MAX_SOURCE_BYTES = 4096
MAX_SCOPES = 8
MAX_SCOPE_CHARS = 64
TITLE_CHARS = 80
_RECORD_ID_RE = re.compile(r"^mem-[0-9a-f]{16}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_GNO_URI_RE = re.compile(r"^gno://[^/]+/.+")
_SCOPE_PUNCT = frozenset("._:/@-")
_WHITESPACE_RE = re.compile(r"\s+")
_RFC3339_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$", re.ASCII
)


def normalize_text(text: str) -> str:
    """NFC, every whitespace run folded to one space, trimmed."""
    return _WHITESPACE_RE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def record_id_for(content_hash_hex: str, created_at: str, caller: str, session: str) -> str:
    seed = f"{content_hash_hex}\n{created_at}\n{caller}\n{session}".encode()
    return "mem-" + hashlib.sha256(seed).hexdigest()[:16]


def _scope_ok(scope: str) -> bool:
    return (
        0 < len(scope) <= MAX_SCOPE_CHARS
        and scope[0].isalnum()
        and all(ch.isalnum() or ch in _SCOPE_PUNCT for ch in scope)
    )


def normalize_scopes(raw: Sequence[str] | None) -> list[str]:
    """NFC, trim, lower-case and de-duplicate; ``MEMORY_SCOPES_*`` on bad input.

    Blank entries are not scopes and are skipped; a list with nothing else is
    ``MEMORY_SCOPES_REQUIRED`` (there is no implicit global scope). More than
    :data:`MAX_SCOPES` distinct scopes is refused; entries that fold together
    (``Team`` and ``team``) count once.
    """
    if isinstance(raw, str) or (raw is not None and not isinstance(raw, Sequence)):
        raise GnoError("MEMORY_SCOPES_INVALID", "Scopes must be a list of strings")
    scopes: dict[str, None] = {}
    for item in raw or ():
        if not isinstance(item, str):
            raise GnoError("MEMORY_SCOPES_INVALID", f"Scope must be a string: {item!r}")
        scope = unicodedata.normalize("NFC", item).strip().lower()
        if not scope:
            continue
        if not _scope_ok(scope):
            raise GnoError(
                "MEMORY_SCOPES_INVALID",
                f"Invalid scope {item!r}: 1-{MAX_SCOPE_CHARS} characters, a letter or digit "
                "first, then letters, digits or . _ : / @ -",
            )
        scopes[scope] = None
    if not scopes:
        raise GnoError(
            "MEMORY_SCOPES_REQUIRED", "At least one scope is required (there is no global scope)"
        )
    if len(scopes) > MAX_SCOPES:
        raise GnoError("MEMORY_SCOPES_INVALID", f"At most {MAX_SCOPES} scopes are allowed")
    return list(scopes)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, e.g. from undecodable argv bytes
        return False
    return True


def validate_text(text: str | None) -> str:
    """The normalised fact text, or ``MEMORY_TEXT_*``.

    NUL bytes and lone surrogates are refused as not being text; the size
    limit applies to the normalised form, which is what gets stored.
    """
    if not isinstance(text, str) or not normalize_text(text):
        raise GnoError("MEMORY_TEXT_REQUIRED", "Fact text is required")
    if "\x00" in text:
        raise GnoError("MEMORY_TEXT_REQUIRED", "Fact text must be plain text (it has a NUL byte)")
    if not _encodable(text):
        raise GnoError("MEMORY_TEXT_REQUIRED", "Fact text must be valid Unicode text")
    normalized = normalize_text(text)
    size = len(normalized.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise GnoError(
            "MEMORY_TEXT_TOO_LARGE", f"Fact text is {size} bytes; the limit is {MAX_TEXT_BYTES}"
        )
    return normalized


def validate_source(source: str | None) -> str | None:
    """Free-text evidence, normalised like fact text; None when blank.

    It is stored in the fact's frontmatter, so it obeys the same rules as the
    text: no NUL (the file would no longer be text), valid Unicode, at most
    :data:`MAX_SOURCE_BYTES` bytes.
    """
    if source is None:
        return None
    if not isinstance(source, str):
        raise GnoError("MEMORY_TEXT_REQUIRED", "source must be a string")
    if "\x00" in source or not _encodable(source):
        raise GnoError("MEMORY_TEXT_REQUIRED", "source must be plain, valid Unicode text")
    normalized = normalize_text(source)
    size = len(normalized.encode("utf-8"))
    if size > MAX_SOURCE_BYTES:
        raise GnoError(
            "MEMORY_TEXT_TOO_LARGE", f"source is {size} bytes; the limit is {MAX_SOURCE_BYTES}"
        )
    return normalized or None


@dataclass(frozen=True, slots=True)
class FactRecord:
    """A validated fact as stored in its file."""

    record_id: str
    text: str
    scopes: tuple[str, ...]
    caller: str
    session: str
    created_at: str
    content_hash: str
    supersedes: tuple[str, ...]
    source: str | None = None

    def as_dict(self, *, uri: str, docid: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "uri": uri,
            "docid": docid,
            "recordId": self.record_id,
            "text": self.text,
            "scopes": list(self.scopes),
            "caller": self.caller,
            "session": self.session,
            "createdAt": self.created_at,
            "contentHash": self.content_hash,
            "supersedes": list(self.supersedes),
        }
        if self.source:
            data["source"] = self.source
        return data


class RecordProblem(Exception):
    """Why a file in a memory collection is not a usable fact (validator codes)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def parse_instant(value: object) -> datetime | None:
    """An RFC 3339 date-time with an offset (what JSON Schema calls date-time), or None."""
    if not isinstance(value, str) or not _RFC3339_RE.match(value):
        return None
    try:
        return datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_record(frontmatter: Mapping[str, Any], body: str) -> FactRecord:
    """Validate a fact file's frontmatter and body; raises :class:`RecordProblem`."""
    block = frontmatter.get("memory")
    if block is None:
        raise RecordProblem("MEMORY_FRONTMATTER_MISSING", "no memory frontmatter block")
    if not isinstance(block, Mapping):
        raise RecordProblem("MEMORY_FRONTMATTER_INVALID", "memory frontmatter is not a mapping")
    record_id = block.get("recordId")
    if not isinstance(record_id, str) or not _RECORD_ID_RE.match(record_id):
        raise RecordProblem("MEMORY_RECORD_ID_INVALID", f"bad recordId {record_id!r}")
    scopes = block.get("scopes")
    if scopes is None or scopes == []:
        raise RecordProblem("MEMORY_SCOPES_EMPTY", "memory.scopes is missing or empty")
    if not isinstance(scopes, list):
        raise RecordProblem("MEMORY_SCOPES_INVALID", "memory.scopes must be a list")
    try:
        # YAML reads a bare 2024 or true as a number or boolean: take the text.
        clean_scopes = normalize_scopes(
            [s if isinstance(s, str) else str(s).lower() for s in scopes]
        )
    except GnoError as error:
        raise RecordProblem("MEMORY_SCOPES_INVALID", error.message) from error
    caller, session = block.get("caller"), block.get("session")
    if not isinstance(caller, str) or not caller.strip():
        raise RecordProblem("MEMORY_IDENTITY_MISSING", "memory.caller is missing")
    if not isinstance(session, str) or not session.strip():
        raise RecordProblem("MEMORY_IDENTITY_MISSING", "memory.session is missing")
    created_at = block.get("createdAt")
    if not isinstance(created_at, str) or parse_instant(created_at) is None:
        raise RecordProblem(
            "MEMORY_CREATED_AT_INVALID", "memory.createdAt is not an RFC 3339 date-time"
        )
    stated = block.get("contentHash")
    if not isinstance(stated, str) or not _SHA256_RE.match(stated):
        raise RecordProblem("MEMORY_CONTENT_HASH_INVALID", "memory.contentHash is not sha256 hex")
    text = normalize_text(body)
    if not text:
        raise RecordProblem("MEMORY_BODY_EMPTY", "the fact body is empty")
    if content_hash(text) != stated:
        raise RecordProblem("MEMORY_CONTENT_HASH_MISMATCH", "body does not match contentHash")
    relations = frontmatter.get("relations") or {}
    supersedes: list[str] = []
    if relations:
        raw = relations.get("supersedes", []) if isinstance(relations, Mapping) else None
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not all(
            isinstance(u, str) and _GNO_URI_RE.match(u) for u in raw
        ):
            raise RecordProblem(
                "MEMORY_SUPERSEDES_INVALID", "relations.supersedes must list gno:// document URIs"
            )
        supersedes = list(raw)
    source = block.get("source")
    return FactRecord(
        record_id=record_id,
        text=text,
        scopes=tuple(clean_scopes),
        caller=caller,
        session=session,
        created_at=created_at,
        content_hash=stated,
        supersedes=tuple(supersedes),
        source=source if isinstance(source, str) and source else None,
    )


def render(record: FactRecord) -> str:
    """The file text of a fact (YAML via safe_dump, so any text is escaped)."""
    memory: dict[str, Any] = {
        "recordId": record.record_id,
        "scopes": list(record.scopes),
        "caller": record.caller,
        "session": record.session,
        "createdAt": record.created_at,
        "contentHash": record.content_hash,
    }
    if record.source:
        memory["source"] = record.source
    front: dict[str, Any] = {"title": record.text[:TITLE_CHARS], "memory": memory}
    if record.supersedes:
        front["relations"] = {"supersedes": list(record.supersedes)}
    block = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1_000_000)
    return f"---\n{block}---\n{record.text}\n"


def rel_path_for(record: FactRecord) -> str:
    return f"{FACTS_FOLDER}/{record.created_at[:10]}/{record.record_id}.md"


FACTS_FOLDER = "facts"


def sweep_facts(root: Path) -> int:
    """Remove temporary files a killed writer left anywhere in a collection's fact folders."""
    removed = 0
    folder = root / FACTS_FOLDER
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                removed += sweep(Path(entry.path))
    return removed


def write_new_file(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` atomically; never replaces an existing file.

    A reader never sees a partial fact and no crash leaves one behind (see
    :mod:`gno_trio.engine.store.atomic`); the umask decides the fact's
    permissions, as for any file the user creates.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if not create_new(path, text):
        raise GnoError("RUNTIME", f"Fact file already exists: {path}")
