"""Reading documents back: ``get``, ``multi_get``, ``ls`` and tag listing.

Lines are 1-based over the stored mirror split on ``\\n``; this is the same
numbering as search line anchors, so an agent can go straight from a hit to
``get(ref, fromLine=line)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from gno_trio.engine.ingest.documents.records import conversion_block
from gno_trio.engine.ingest.walker import glob_regex
from gno_trio.engine.lookup import resolve
from gno_trio.engine.search.results import collection_roots, source_block, tags_by_doc
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.store.documents import DocumentStore
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

DEFAULT_MAX_BYTES = 10_240
MAX_TOTAL_BYTES = 1024 * 1024
"""The most content one ``multi_get`` answer carries, whatever ``maxBytes`` and the batch.

Per-document ``maxBytes`` alone does not bound an answer: a glob can match
thousands of documents. Past this budget the document that crosses it is
truncated and the rest are skipped with reason ``exceeds_maxBytes``;
``meta.truncated`` says the budget was reached.
"""
_EDITABLE_MIMES = frozenset({"text/markdown", "text/plain"})


def mirror_text(conn: Connection, row: RowView, ref: str) -> str:
    if not row["mirror_hash"]:
        raise GnoError("NOT_FOUND", f"Document has no indexed content: {ref}")
    found = SQLITE_STORES.documents(conn).mirror(row["mirror_hash"])
    if found is None:
        raise GnoError("NOT_FOUND", f"Document has no indexed content: {ref}")
    return found


def number_lines(lines: Sequence[str], first: int) -> str:
    return "\n".join(f"{first + i}: {line}" for i, line in enumerate(lines))


def _not_editable_because(row: RowView) -> str | None:
    """Why writing the mirror back would not be an edit of the source, if it would not."""
    if not str(row["converter_id"] or "").startswith("native/"):
        return "converted from a non-text source"
    if row["conversion_warnings_json"] not in (None, "", "[]"):
        return "decoded from a legacy text encoding; writing it back would change the bytes"
    return None


def capabilities(row: RowView) -> dict[str, Any]:
    reason = _not_editable_because(row)
    if reason is not None:
        return {
            "editable": False,
            "tagsEditable": True,
            "tagsWriteback": False,
            "canCreateEditableCopy": True,
            "mode": "read_only",
            "reason": reason,
        }
    if row["source_mime"] == "text/markdown":
        return {
            "editable": True,
            "tagsEditable": True,
            "tagsWriteback": True,
            "canCreateEditableCopy": False,
            "mode": "editable",
        }
    editable = row["source_mime"] in _EDITABLE_MIMES or str(row["source_mime"]).startswith("text/")
    return {
        "editable": editable,
        "tagsEditable": True,
        "tagsWriteback": False,
        "canCreateEditableCopy": not editable,
        "mode": "editable" if editable else "read_only",
        **({} if editable else {"reason": "converted from a non-text source"}),
    }


def get(
    conn: Connection,
    ref: str,
    *,
    from_line: int | None = None,
    line_count: int | None = None,
    line_numbers: bool = True,
) -> dict[str, Any]:
    """``get@1.0``: one document, optionally a line range of it."""
    if from_line is not None and from_line < 1:
        raise GnoError("INVALID_INPUT", "fromLine must be at least 1")
    if line_count is not None and line_count < 1:
        raise GnoError("INVALID_INPUT", "lineCount must be at least 1")
    parsed = parse_ref(ref)
    if from_line is None and parsed.line is not None:
        # ``gno://c/p.md:52`` (what a search hit prints) reads from line 52;
        # an explicit fromLine wins over the suffix.
        from_line = parsed.line
    row = resolve(conn, parsed)
    text = mirror_text(conn, row, ref)
    lines = text.split("\n")
    total = len(lines)
    ranged = from_line is not None or line_count is not None
    start = from_line or 1
    end = total if line_count is None else min(total, start + line_count - 1)
    result: dict[str, Any] = {"docid": row["docid"], "uri": row["uri"]}
    if row["title"]:
        result["title"] = row["title"]
    if start > total:
        selected: list[str] = []
    else:
        selected = lines[start - 1 : end]
    result["content"] = number_lines(selected, start) if line_numbers else "\n".join(selected)
    result["totalLines"] = total
    if ranged and selected:
        result["returnedLines"] = {"start": start, "end": start + len(selected) - 1}
    if row["language_hint"]:
        result["language"] = row["language_hint"]
    roots = collection_roots(conn)
    result["source"] = source_block(row, roots.get(row["collection"]))
    result["source"].pop("documentDate", None)
    result["conversion"] = conversion_block(row)
    result["capabilities"] = capabilities(row)
    tags = tags_by_doc(conn, [int(row["id"])]).get(int(row["id"]))
    if tags:
        result["tags"] = tags
    return result


def _glob_rows(conn: Connection, pattern: str) -> list[RowView]:
    """Active documents whose URI, path or ``collection/path`` the glob matches (minimatch's
    ``*`` and ``?`` stay in one folder; ``**`` crosses)."""
    regex = glob_regex(pattern)
    return [
        row
        for row in SQLITE_STORES.documents(conn).active()
        if regex.match(row["uri"])
        or regex.match(row["rel_path"])
        or regex.match(f"{row['collection']}/{row['rel_path']}")
    ]


def _truncate_utf8(text: str, max_bytes: int) -> tuple[str, bool, int]:
    """``text`` cut to at most ``max_bytes`` of UTF-8: (text, whether cut, its byte size)."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text, False, len(raw)
    kept = raw[:max_bytes].decode("utf-8", "ignore")
    return kept, True, len(kept.encode("utf-8"))


def multi_get(
    conn: Connection,
    *,
    refs: Sequence[str] | None = None,
    pattern: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    line_numbers: bool = True,
) -> dict[str, Any]:
    """``multi-get@1.0``: many documents by refs or by a glob, each bounded."""
    if (refs is None) == (pattern is None) or (refs is not None and not refs):
        raise GnoError("INVALID_INPUT", "Provide either refs (at least one) or pattern, not both")
    if max_bytes < 1:
        raise GnoError("INVALID_INPUT", "maxBytes must be at least 1")
    roots = collection_roots(conn)
    documents: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    targets: list[tuple[str, RowView | None]] = []
    if pattern is not None:
        if not pattern.strip():
            raise GnoError("INVALID_INPUT", "pattern is empty")
        targets = [(row["uri"], row) for row in _glob_rows(conn, pattern.strip())]
    else:
        for ref in refs or ():
            try:
                targets.append((ref, resolve(conn, parse_ref(ref))))
            except GnoError as error:
                reason = "invalid_ref" if error.code == "INVALID_INPUT" else "not_found"
                skipped.append({"ref": ref, "reason": reason})
    budget = MAX_TOTAL_BYTES
    over_budget = False
    for ref, row in targets:
        assert row is not None
        if over_budget or budget == 0:
            over_budget = True
            skipped.append({"ref": ref, "reason": "exceeds_maxBytes"})
            continue
        try:
            text = mirror_text(conn, row, ref)
        except GnoError:
            skipped.append({"ref": ref, "reason": "conversion_error"})
            continue
        lines = text.split("\n")
        body = number_lines(lines, 1) if line_numbers else text
        limit = min(max_bytes, budget)
        body, truncated, size = _truncate_utf8(body, limit)
        budget -= size
        over_budget = truncated and limit < max_bytes
        document: dict[str, Any] = {"docid": row["docid"], "uri": row["uri"]}
        if row["title"]:
            document["title"] = row["title"]
        source = source_block(row, roots.get(row["collection"]))
        document["content"] = body
        if truncated:
            document["truncated"] = True
        document["totalLines"] = len(lines)
        document["source"] = {
            k: source[k] for k in ("absPath", "relPath", "mime", "ext") if k in source
        }
        documents.append(document)
    requested = len(refs) if refs is not None else len(targets)
    meta: dict[str, Any] = {
        "requested": requested,
        "returned": len(documents),
        "skipped": len(skipped),
        "maxBytes": max_bytes,
        "maxTotalBytes": MAX_TOTAL_BYTES,
    }
    if over_budget:
        meta["truncated"] = True
    return {"documents": documents, "skipped": skipped, "meta": meta}


def _listed(r: RowView) -> dict[str, Any]:
    """One document as a listing (``ls``, the browse tree) shows it."""
    return {
        "docid": r["docid"],
        "uri": r["uri"],
        "title": r["title"],
        "collection": r["collection"],
        "relPath": r["rel_path"],
        "mime": r["source_mime"],
        "sizeBytes": r["source_size"],
        "modifiedAt": r["source_mtime"],
    }


def _known(documents: DocumentStore, collection: str) -> str:
    """The collection name as stored; ``NOT_FOUND`` for one the index does not know."""
    name = collection.strip().lower()
    if not documents.collection_exists(name):
        raise GnoError("NOT_FOUND", f"Collection not found: {collection}")
    return name


def ls(
    conn: Connection,
    *,
    collection: str | None = None,
    prefix: str | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> dict[str, Any]:
    """Active documents, optionally of one collection and under a path prefix."""
    if limit < 1:
        raise GnoError("INVALID_INPUT", "limit must be at least 1")
    if offset < 0:
        raise GnoError("INVALID_INPUT", "offset must not be negative")
    documents = SQLITE_STORES.documents(conn)
    name = _known(documents, collection) if collection else None
    total = documents.listed_count(name, prefix)
    rows = documents.listed(name, prefix, limit, offset)
    return {
        "documents": [_listed(r) for r in rows],
        "meta": {"total": total, "returned": len(rows), "offset": offset},
    }


BROWSE_MAX_DOCUMENTS: Final = 1000
"""Documents one folder listing returns at most (the rest are counted, not listed)."""


def browse(conn: Connection, *, collection: str | None = None, path: str = "") -> dict[str, Any]:
    """One level of the browse tree: the collections, or one folder's subfolders and documents.

    Without ``collection`` the folders are the collections (with their active
    document counts). ``path`` is a folder relative to the collection root
    (``""`` for the root); each subfolder counts the documents beneath it.
    """
    folder = path.strip("/")
    if collection is None:
        if folder:
            raise GnoError("INVALID_INPUT", "path needs a collection")
        folders = [
            {"name": name, "path": "", "documents": n}
            for name, n in SQLITE_STORES.documents(conn).collection_counts()
        ]
        return {"collection": None, "path": "", "folders": folders, "documents": [], "meta": {}}
    documents_of = SQLITE_STORES.documents(conn)
    name = _known(documents_of, collection)
    prefix = folder + "/" if folder else ""
    rows = documents_of.under(name, prefix)
    if folder and not rows:
        raise GnoError("PATH_NOT_FOUND", f"No documents under {folder} in {name}")
    counts: dict[str, int] = {}
    documents: list[dict[str, Any]] = []
    direct = 0
    for r in rows:
        rest = r["rel_path"][len(prefix) :]
        head, slash, _ = rest.partition("/")
        if slash:
            counts[head] = counts.get(head, 0) + 1
            continue
        direct += 1
        if len(documents) < BROWSE_MAX_DOCUMENTS:
            documents.append(_listed(r))
    return {
        "collection": name,
        "path": folder,
        "folders": [
            {"name": head, "path": prefix + head, "documents": n}
            for head, n in sorted(counts.items())
        ],
        "documents": documents,
        "meta": {"documents": direct, "truncated": direct > len(documents)},
    }


def list_tags(
    conn: Connection, *, collection: str | None = None, prefix: str | None = None
) -> dict[str, Any]:
    """``tags-list@1.0``: tags of active documents with document counts."""
    documents = SQLITE_STORES.documents(conn)
    name = _known(documents, collection) if collection else None
    rows = documents.tag_counts(name, prefix or None)
    meta: dict[str, Any] = {"totalTags": len(rows)}
    if collection:
        meta["collection"] = collection.strip().lower()
    if prefix:
        meta["prefix"] = prefix
    return {"tags": [{"tag": tag, "count": n} for tag, n in rows], "meta": meta}
