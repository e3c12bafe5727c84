"""The references to one note that a rename or move must consider, and what each becomes.

Each link the index resolves to the note is read again from its file and
classified: ``rewriteable`` (only its destination is replaced, by the same
spelling rules it was written with: root path, bare name, relative or
``gno://``), ``unchanged`` (it still reaches the note) or ``ambiguous``;
the moved note's own relative links are recalculated for its new folder.
Kept apart from the plan so these spelling rules can be read and tested
without the plan's safety and digest bookkeeping.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final
from urllib.parse import quote

from gno_trio.engine.graph.links import DocSummary, Resolver
from gno_trio.engine.ingest.markdown_links import LinkSite, link_sites
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.uris import make_uri

_URL_SAFE: Final = "/-._~!$&'()*+,;=:@"


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


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


class ReferenceExaminer:
    """Finds and classifies the references of one note in one index."""

    def __init__(
        self, conn: Connection, source: DocSummary, target_rel: str, operation: str
    ) -> None:
        self.conn = conn
        self.source = source
        self.target_rel = target_rel
        self.operation = operation
        self.resolver = Resolver(SQLITE_STORES.links(conn))
        self.stems: Counter[str] = Counter(
            _stem(rel_path).casefold()
            for rel_path in SQLITE_STORES.documents(conn).active_paths(
                source.collection, except_id=source.id
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


def reference_entry(ref: Reference, text: str) -> dict[str, Any]:
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
        entry["edit"] = edit_span(ref, text)
    entry.update(startLine=start_line, startCol=start_col, endLine=end_line, endCol=end_col)
    return entry


def edit_span(ref: Reference, text: str) -> dict[str, Any]:
    return {
        "coordinateSpace": "utf16_code_units",
        "startOffset": _utf16(text, ref.site.start),
        "endOffset": _utf16(text, ref.site.end),
        "originalDestination": ref.original,
        "replacementDestination": ref.proposed or ref.original,
    }


def rewrite_links(text: str, refs: list[Reference]) -> str:
    for ref in sorted(refs, key=lambda r: r.site.start, reverse=True):
        if ref.proposed is not None:
            text = text[: ref.site.start] + ref.proposed + text[ref.site.end :]
    return text
