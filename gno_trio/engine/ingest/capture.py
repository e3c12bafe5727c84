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
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from gno_trio.config import Collection
from gno_trio.engine.ingest import pending
from gno_trio.engine.ingest.capture_compose import (
    Composed,
    compose_markdown,
    compose_plain,
    headings,
)
from gno_trio.engine.ingest.capture_request import (
    COLLISION_POLICIES,
    MAX_TITLE_CHARS,
    PRESETS,
    SOURCE_FIELDS,
    SOURCE_KINDS,
    CaptureRequest,
    body_hash,
    check_content,
    clean_source,
    clean_tags,
    one_line,
)
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.ingest.write_paths import (
    collection_root,
    explicit_rel_path,
    is_markdown,
    lstat_or_none,
    parent_folders,
    path_segments,
    slugify,
    suffixed,
    unindexable_reason,
)
from gno_trio.engine.ingest.written import SyncOutcome, index_written, indexed_document
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.atomic import create_new, replace
from gno_trio.engine.store.database import Connection, StoreError, write_transaction
from gno_trio.engine.store.lease import HeldLease
from gno_trio.engine.uris import docid_for, make_uri
from gno_trio.errors import GnoError

INBOX_FOLDER: Final = "inbox"
HASH_NAME_HEX: Final = 12
MAX_SUFFIX: Final = 999

# Said to every surface alike, so it names no command or tool.
EMBED_REASON: Final = (
    "capture indexes keywords only; the note reaches vector search with the next embedding run"
)


def _taken(conn: Connection, root: Path, collection: str, rel_path: str) -> bool:
    return (
        lstat_or_none(root / rel_path) is not None
        or indexed_document(conn, collection, rel_path) is not None
    )


def _add_index_tags(conn: Connection, doc_id: int, tags: Sequence[str]) -> None:
    """Tags of a non-Markdown file have no frontmatter to live in: store them as user tags."""
    if not tags:
        return
    with write_transaction(conn):
        SQLITE_STORES.tags(conn).add_user(doc_id, tags)
        fulltext.refresh_metadata(conn, doc_id)


def _doc_tags(conn: Connection, doc_id: int) -> list[str]:
    return SQLITE_STORES.tags(conn).of_document(doc_id)


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


def _plan(engine: IndexingKernel, request: CaptureRequest, now: datetime | None) -> _Plan:
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
    title = one_line(request.title, "title", MAX_TITLE_CHARS) if request.title else None
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


def _settle(plan: _Plan, conn: Connection, overwrite: bool) -> _Outcome:
    """Under the lease: decide the final path and write the file (or not)."""
    name, root, text = plan.collection.name, plan.root, plan.composed.text
    rel_path = plan.rel_path
    target = root / rel_path
    if overwrite and _taken(conn, root, name, rel_path):
        st = lstat_or_none(target)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise GnoError("CONFLICT", f"{rel_path} exists and is not a regular file")
        with parent_folders(root, rel_path):
            replace(target, text)
        return _Outcome(rel_path, "overwritten", wrote=True)
    if plan.policy == "create_with_suffix":
        for number in range(1, MAX_SUFFIX + 1):
            candidate = rel_path if number == 1 else suffixed(rel_path, number)
            if _taken(conn, root, name, candidate):
                continue
            with parent_folders(root, candidate):
                if create_new(root / candidate, text):
                    result = "created" if number == 1 else "created_with_suffix"
                    return _Outcome(candidate, result, wrote=True)
        raise GnoError("CONFLICT", f"{rel_path} and its first {MAX_SUFFIX} suffixes are taken")
    if not _taken(conn, root, name, rel_path):
        with parent_folders(root, rel_path):
            if create_new(target, text):
                return _Outcome(rel_path, "created", wrote=True)
    if plan.policy == "error":
        raise _conflict(plan, rel_path)
    st = lstat_or_none(target)
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
    conn: Connection, synced: SyncOutcome, tags: Sequence[str]
) -> dict[str, Any]:
    """Store a plain file's tags; a failure downgrades the sync block, the file stays."""
    if synced.row is None:
        return synced.status
    try:
        _add_index_tags(conn, int(synced.row["id"]), tags)
    except StoreError as exc:
        return {"status": "failed", "error": f"RUNTIME: tags were not stored: {exc}"}
    return synced.status


def capture(
    engine: IndexingKernel,
    request: CaptureRequest,
    *,
    server_instance_id: str | None = None,
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
            engine.connection() as c,
            pending.marked(engine.location, plan.collection.name),
        ):
            return _capture_under_lease(
                engine, plan, c, held, request.overwrite, server_instance_id
            )
    except (OSError, StoreError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise GnoError("RUNTIME", f"Cannot capture {plan.rel_path}: {reason}") from exc


def _capture_under_lease(
    engine: IndexingKernel,
    plan: _Plan,
    conn: Connection,
    lease: HeldLease,
    overwrite: bool,
    server_instance_id: str | None,
) -> dict[str, Any]:
    """Settle the name, write, index, and build the receipt (the lease is held).

    A note this call created is taken back if anything after the write fails:
    a capture that raises leaves nothing behind.
    """
    outcome = _settle(plan, conn, overwrite)
    try:
        return _receipt(engine, plan, conn, lease, outcome, server_instance_id)
    except BaseException:
        if outcome.wrote and outcome.result != "overwritten":
            with contextlib.suppress(OSError):
                (plan.root / outcome.rel_path).unlink()
        raise


def _receipt(
    engine: IndexingKernel,
    plan: _Plan,
    conn: Connection,
    lease: HeldLease,
    outcome: _Outcome,
    server_instance_id: str | None,
) -> dict[str, Any]:
    """Index the settled note and describe it."""
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
    "capture",
]
