"""Planning a reference-safe rename or move of one note (``file-refactor-preview@1.0``).

The plan names the note's new path and every reference to it that the index
knows (wiki links by path, file name or title, Markdown links relative,
rooted or ``gno://``), read again from the files on disk so each proposed
edit is an exact span of the text as it is now. Each reference is
classified: ``rewriteable`` (its destination is replaced and only that),
``unchanged`` (it still reaches the note, e.g. by title), or ``ambiguous``
(after the change it could name another note too). A move also recomputes
the note's own relative links, whose starting folder changes.

Anything that makes the change unsafe (the target is taken, the note is not
an editable text file, the destination is the same, another collection, an
ambiguous reference) is a blocking reason and ``canApply`` is false. The
``planDigest`` covers the operation, both paths, every edit and the
fingerprint of every file involved, so a plan applied later is applied only
to exactly the state it was computed from.
"""

from __future__ import annotations

import hashlib
import posixpath
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final
from urllib.parse import quote

from gno_trio.config import Collection
from gno_trio.dirs import Dirs
from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.graph.links import DocSummary, Resolver, backlinks, summary
from gno_trio.engine.ingest.filing import _lstat, _single_name, real_folder
from gno_trio.engine.ingest.markdown_links import LinkSite, link_sites
from gno_trio.engine.ingest.write_paths import collection_root, path_segments, unindexable_reason
from gno_trio.engine.lookup import resolve
from gno_trio.engine.uris import make_uri, parse_ref, parse_uri
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
EDITABLE_SUFFIXES: Final = frozenset({".md", ".markdown", ".mdx", ".txt"})
MUTATION_BOUNDARY: Final = {
    "filesystemCommit": "atomic_all_or_rollback",
    "indexConvergence": "post_commit_separate",
    "syncFailureDoesNotRollbackFilesystem": True,
}
_URL_SAFE: Final = "/-._~!$&'()*+,;=:@"


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def read_note(path: Path, rel_path: str) -> str:
    """A note's text exactly as stored (line endings kept)."""
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise GnoError("INVALID_INPUT", f"{rel_path} is not an editable text note") from exc
    except OSError as exc:
        raise GnoError(
            "PATH_NOT_FOUND", f"File of {rel_path} is not readable: {exc.strerror or exc}"
        ) from exc


def _stem(rel_path: str) -> str:
    return PurePosixPath(rel_path).stem


def _without_suffix(rel_path: str) -> str:
    suffix = PurePosixPath(rel_path).suffix
    return rel_path[: -len(suffix)] if suffix else rel_path


@dataclass(slots=True)
class Reference:
    """One examined reference, and its edit when it is rewritten."""

    document: DocSummary
    site: LinkSite
    original: str
    proposed: str | None
    classification: str
    reason: str | None = None


@dataclass(slots=True)
class Plan:
    """A computed plan: the preview object plus what applying it needs."""

    operation: str
    collection: Collection
    root: Path
    source_rel: str
    target_rel: str
    preview: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)
    """The file of every note involved, by URI (the source under its old path)."""
    texts: dict[str, str] = field(default_factory=dict)
    """Current text of every note involved, by URI."""
    rewritten: dict[str, str] = field(default_factory=dict)
    """New text of every note whose links change, by URI."""

    @property
    def source_uri(self) -> str:
        return str(self.preview["source"]["uri"])

    @property
    def digest(self) -> str:
        return str(self.preview["planDigest"])

    @property
    def can_apply(self) -> bool:
        return bool(self.preview["canApply"])

    @property
    def blocking(self) -> list[str]:
        return list(self.preview["safety"]["blockingReasonCodes"])


def _target_rel(
    operation: str,
    source_rel: str,
    collection: str,
    name: str | None,
    folder_path: str | None,
    blocking: list[str],
) -> str:
    suffix = PurePosixPath(source_rel).suffix
    base = source_rel.rsplit("/", 1)[-1]
    if name is not None:
        chosen = _single_name(name, "name")
        base = chosen if PurePosixPath(chosen).suffix else chosen + suffix
    if operation == "rename":
        if name is None:
            raise GnoError("INVALID_INPUT", "A rename needs the new name")
        folders = source_rel.split("/")[:-1]
    else:
        if folder_path is None:
            raise GnoError("INVALID_INPUT", "A move needs folderPath")
        raw = folder_path.strip()
        if raw.startswith("gno://"):
            named, inside, _ = parse_uri(raw.rstrip("/") + "/_")
            if named != collection:
                blocking.append("cross_collection_unsupported")
            raw = inside.rpartition("/")[0]
        folders = path_segments(raw, "folderPath") if raw.strip("/") else []
    return "/".join([*folders, base])


def _wiki_replacement(
    written: str, source: DocSummary, target_rel: str, counts: Counter[str], collection: str
) -> tuple[str | None, str, str | None]:
    """(new destination or None, classification, reason) for a wiki link to the note."""
    prefix, sep, bare = written.partition(":")
    if not sep or "/" in prefix or not prefix or bare.startswith("//"):
        prefix, bare = "", written
    else:
        prefix += ":"
    stripped = bare.strip()
    key = stripped.casefold()
    written_suffix = PurePosixPath(stripped).suffix
    kept_suffix = bool(written_suffix) and (
        written_suffix.casefold() == PurePosixPath(source.rel_path).suffix.casefold()
    )
    if "/" in stripped:
        # A path from the collection root: it follows the note wherever it goes.
        new = target_rel if kept_suffix else _without_suffix(target_rel)
    elif key in (_stem(source.rel_path).casefold(), source.rel_path.rsplit("/", 1)[-1].casefold()):
        # A bare file name keeps working after a move; a rename changes it.
        new = _stem(target_rel) + (PurePosixPath(target_rel).suffix if kept_suffix else "")
        if counts[_stem(target_rel).casefold()] > 0 and new.casefold() != key:
            return None, "ambiguous", "duplicate_basename_ambiguity"
    else:
        return None, "unchanged", None  # reached by title, which a file change keeps
    proposed = prefix + new
    if proposed == written:
        return None, "unchanged", "destination_unchanged"
    return proposed, "rewriteable", None


def _encode(path: str, written: str, angle: bool) -> str:
    if angle:
        return path
    if "%" in written or any(ch in path for ch in " <>()"):
        return quote(path, safe=_URL_SAFE)
    return path


def _markdown_replacement(
    written: str,
    angle: bool,
    linker_rel: str,
    collection: str,
    target_rel: str,
    dropped_suffix: bool,
) -> str:
    if written.startswith("gno://"):
        return make_uri(collection, target_rel)
    new_path = target_rel if not dropped_suffix else _without_suffix(target_rel)
    if written.startswith("/"):
        return "/" + _encode(new_path, written, angle)
    relative = posixpath.relpath(new_path, posixpath.dirname(linker_rel) or ".")
    if written.startswith("./") and not relative.startswith("."):
        relative = "./" + relative
    return _encode(relative, written, angle)


def _recalculated(written: str, angle: bool, source_rel: str, target_rel: str) -> str | None:
    """A relative link of the moved note itself, pointing at the same place from its new folder."""
    from urllib.parse import unquote

    if written.startswith(("/", "gno://")) or "://" in written or not written:
        return None
    decoded = written if angle else unquote(written)
    place = posixpath.normpath(posixpath.join(posixpath.dirname(source_rel), decoded))
    if place.startswith("../") or place == "..":
        return None
    relative = posixpath.relpath(place, posixpath.dirname(target_rel) or ".")
    if written.startswith("./") and not relative.startswith("."):
        relative = "./" + relative
    return _encode(relative, written, angle)


class _Examiner:
    """Finds and classifies the references of one note in one index."""

    def __init__(
        self, conn: sqlite3.Connection, source: DocSummary, target_rel: str, operation: str
    ) -> None:
        self.conn = conn
        self.source = source
        self.target_rel = target_rel
        self.operation = operation
        self.resolver = Resolver(conn)
        self.stems: Counter[str] = Counter(
            _stem(row["rel_path"]).casefold()
            for row in conn.execute(
                "SELECT rel_path FROM documents WHERE active = 1 AND collection = ? AND id != ?",
                (source.collection, source.id),
            )
        )

    def examine(self, document: DocSummary, text: str) -> list[Reference]:
        found: list[Reference] = []
        moved = self.operation == "move" and document.id == self.source.id
        for site in link_sites(text):
            written = text[site.start : site.end]
            link = site.link
            resolved = self.resolver.resolve(link.kind, link.target, link.collection, document)
            if resolved is not None and resolved.id == self.source.id:
                found.append(self._to_note(document, site, written))
            elif moved and link.kind == "markdown":
                proposed = _recalculated(
                    written, site.angle_brackets, document.rel_path, self.target_rel
                )
                if proposed is not None and proposed != written:
                    found.append(
                        Reference(
                            document,
                            site,
                            written,
                            proposed,
                            "rewriteable",
                            "relative_path_recalculated",
                        )
                    )
        return found

    def _to_note(self, document: DocSummary, site: LinkSite, written: str) -> Reference:
        if site.link.kind == "wiki":
            proposed, classification, reason = _wiki_replacement(
                written, self.source, self.target_rel, self.stems, self.source.collection
            )
        else:
            dropped = not PurePosixPath(site.link.target).suffix
            # A link from the moving note to itself is written from its new folder.
            linker = self.target_rel if document.id == self.source.id else document.rel_path
            proposed = _markdown_replacement(
                written,
                site.angle_brackets,
                linker,
                self.source.collection,
                self.target_rel,
                dropped,
            )
            classification, reason = "rewriteable", None
            if proposed == written:
                proposed, classification, reason = None, "unchanged", "destination_unchanged"
        return Reference(document, site, written, proposed, classification, reason)


def _reference_entry(ref: Reference, text: str) -> dict[str, Any]:
    start_line, start_col = _position(text, ref.site.start)
    end_line, end_col = _position(text, ref.site.end)
    entry: dict[str, Any] = {
        "documentUri": ref.document.uri,
        "documentRelPath": ref.document.rel_path,
        "kind": ref.site.link.kind,
        "classification": ref.classification,
    }
    if ref.reason is not None:
        entry["reasonCode"] = ref.reason
    entry["originalDestination"] = ref.original
    if ref.proposed is not None:
        entry["proposedDestination"] = ref.proposed
        entry["edit"] = _span(ref, text)
    entry.update(startLine=start_line, startCol=start_col, endLine=end_line, endCol=end_col)
    return entry


def _span(ref: Reference, text: str) -> dict[str, Any]:
    return {
        "coordinateSpace": "utf16_code_units",
        "startOffset": _utf16(text, ref.site.start),
        "endOffset": _utf16(text, ref.site.end),
        "originalDestination": ref.original,
        "replacementDestination": ref.proposed or ref.original,
    }


def _rewrite(text: str, refs: list[Reference]) -> str:
    for ref in sorted(refs, key=lambda r: r.site.start, reverse=True):
        if ref.proposed is not None:
            text = text[: ref.site.start] + ref.proposed + text[ref.site.end :]
    return text


def _document_ref(collection: str, rel_path: str) -> dict[str, str]:
    return {"uri": make_uri(collection, rel_path), "relPath": rel_path, "collection": collection}


def plan_refactor(
    conn: sqlite3.Connection,
    dirs: Dirs,
    collection_of: Any,
    operation: str,
    ref: str,
    *,
    name: str | None = None,
    folder_path: str | None = None,
) -> Plan:
    """The plan of renaming (``name``) or moving (``folder_path``) the note ``ref``.

    ``collection_of`` maps a collection name to its configuration (the
    engine's lookup). Raises ``NOT_FOUND`` for an unknown note,
    ``INVALID_PATH``/``INVALID_INPUT`` for an unusable name or folder and
    ``PATH_NOT_FOUND`` for a folder that does not exist; every other obstacle
    is reported in the plan.
    """
    row = resolve(conn, parse_ref(ref))
    source = summary(row)
    collection: Collection = collection_of(source.collection)
    blocking: list[str] = []
    warnings: list[str] = []
    target_rel = _target_rel(
        operation, source.rel_path, collection.name, name, folder_path, blocking
    )
    root = collection_root(collection, dirs)
    if "cross_collection_unsupported" not in blocking:
        real_folder(root, target_rel.split("/")[:-1])
    if PurePosixPath(source.rel_path).suffix.casefold() not in EDITABLE_SUFFIXES:
        blocking.append("read_only_document")
    if target_rel == source.rel_path:
        blocking.append("destination_unchanged")
    elif target_rel.casefold() != source.rel_path.casefold() and (
        _lstat(root / target_rel) is not None
        or conn.execute(
            "SELECT 1 FROM documents WHERE active = 1 AND collection = ? AND rel_path = ?",
            (collection.name, target_rel),
        ).fetchone()
        is not None
    ):
        blocking.append("occupied_target")
    reason = unindexable_reason(collection, target_rel)
    if reason is not None:
        blocking.append("unsafe_target")
        warnings.append(f"{target_rel} would not be indexed: {reason}"[:512])

    paths = {source.uri: root / source.rel_path}
    texts = {source.uri: read_note(paths[source.uri], source.rel_path)}
    documents: dict[str, DocSummary] = {source.uri: source}
    incoming = backlinks(conn, source.uri)["backlinks"]
    linkers = sorted({entry["sourceUri"] for entry in incoming} - {source.uri})
    for uri in linkers:
        other = summary(resolve(conn, parse_ref(uri)))
        if other.collection != collection.name:
            other_root = collection_root(collection_of(other.collection), dirs)
        else:
            other_root = root
        try:
            texts[other.uri] = read_note(other_root / other.rel_path, other.rel_path)
            paths[other.uri] = other_root / other.rel_path
        except GnoError:
            warnings.append(f"{other.uri} could not be read; its links are left as they are")
            continue
        documents[other.uri] = other
    examiner = _Examiner(conn, source, target_rel, operation)
    by_document: dict[str, list[Reference]] = {}
    for key, document in documents.items():
        by_document[key] = examiner.examine(document, texts[key])

    counts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    affected: list[dict[str, Any]] = []
    examined: list[dict[str, Any]] = []
    rewritten: dict[str, str] = {}
    for key in sorted(by_document, key=lambda k: documents[k].uri):
        refs = by_document[key]
        text = texts[key]
        entries = [_reference_entry(r, text) for r in refs]
        examined.extend(entries)
        for r in refs:
            counts[r.classification] += 1
            if r.reason != "relative_path_recalculated":
                kinds[r.site.link.kind] += 1
            if r.classification == "ambiguous" and r.reason and r.reason not in blocking:
                blocking.append(r.reason)
        edits = [_span(r, text) for r in refs if r.proposed is not None]
        if edits:
            document = documents[key]
            affected.append(
                {
                    "uri": document.uri,
                    "relPath": document.rel_path,
                    "contentFingerprint": fingerprint(text),
                    "edits": edits,
                    "examined": entries,
                }
            )
            rewritten[key] = _rewrite(text, refs)
    source_fp = fingerprint(texts[source.uri])
    preconditions = {
        "sourceContentFingerprint": source_fp,
        "affectedContentFingerprints": [
            {"uri": doc["uri"], "fingerprint": doc["contentFingerprint"]} for doc in affected
        ],
        "targetPathFingerprint": hash_canonical(
            {
                "collection": collection.name,
                "relPath": target_rel,
                "occupied": "occupied_target" in blocking,
            }
        ),
    }
    safety = {
        "rewriteableCount": counts["rewriteable"],
        "unchangedCount": counts["unchanged"],
        "ambiguousCount": counts["ambiguous"],
        "unsupportedCount": counts["unsupported"],
        "malformedCount": counts["malformed"],
        "invalidCount": counts["invalid"],
        "blockingReasonCodes": sorted(set(blocking)),
        "warnings": warnings[:64],
        "backlinkCount": sum(1 for entry in incoming if entry["sourceUri"] != source.uri),
        "wikiLinkCount": kinds["wiki"],
        "markdownLinkCount": kinds["markdown"],
    }
    preview: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "operation": operation,
        "conflictPolicy": "fail",
        "source": _document_ref(collection.name, source.rel_path),
        "target": _document_ref(collection.name, target_rel),
        "affectedDocuments": affected,
        "examinedReferences": examined,
        "preconditions": preconditions,
    }
    preview["planDigest"] = hash_canonical({**preview, "blocking": safety["blockingReasonCodes"]})
    preview["safety"] = safety
    preview["canApply"] = not safety["blockingReasonCodes"]
    preview["mutationBoundary"] = dict(MUTATION_BOUNDARY)
    return Plan(
        operation, collection, root, source.rel_path, target_rel, preview, paths, texts, rewritten
    )


__all__ = ["EDITABLE_SUFFIXES", "Plan", "fingerprint", "plan_refactor", "read_note"]
