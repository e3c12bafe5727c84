"""Outgoing links and backlinks, resolved against the index when they are read.

Sync stores each link as written (``doc_links``: kind, target, optional
collection prefix, heading, display text, position) and never a target id,
so renames and new files are picked up without re-parsing the linking
document. Resolution happens here, by one rule set used in both directions:
a backlink of ``T`` is exactly a link whose forward resolution is ``T``.

Wiki links (``[[Target]]``, ``[[coll:Target#Heading|text]]``) resolve within
the prefixed collection, else the linking document's own, by comparing
case-insensitively with, in order: the relative path (with or without its
extension), the file stem, the document title. Markdown links resolve as
paths: relative to the linking file's folder, or to the collection root when
they start with ``/``; ``gno://`` targets name their document directly. A
path without an extension also matches ``<path>.md`` and ``<path>/index.md``,
the way static-site generators link pages. Several documents matching at the
same rank are settled by the smallest relative path, so answers are stable.
Only active documents take part, as sources and as targets.
"""

from __future__ import annotations

import dataclasses
import hashlib
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.engine.store.database import RowView
from gno_trio.engine.store.links import LinkStore
from gno_trio.engine.uris import parse_uri
from gno_trio.errors import GnoError

MARKDOWN_SUFFIX: Final = ".md"


@dataclass(frozen=True, slots=True)
class DocSummary:
    """The fields of an active document that resolution and answers need."""

    id: int
    docid: str
    uri: str
    title: str | None
    collection: str
    rel_path: str
    node_id: str | None = None
    """Its node id in a graph answer, when that cannot be its docid (see :func:`with_node_ids`)."""

    @property
    def node(self) -> str:
        """The id graph answers give this document's node (and its edges' ends)."""
        return self.node_id or self.docid

    def identity(self) -> dict[str, Any]:
        """How the graph answers name a document: its node ``id``, uri, title, place.

        The ``id`` is the docid, except for a document whose bytes are the
        same as another's in the answer: it gets its own id, and its docid
        is given as ``docid``.
        """
        entry: dict[str, Any] = {
            "id": self.node,
            "uri": self.uri,
            "title": self.title,
            "collection": self.collection,
            "relPath": self.rel_path,
        }
        if self.node != self.docid:
            entry["docid"] = self.docid
        return entry


def with_node_ids(docs: Sequence[DocSummary]) -> list[DocSummary]:
    """``docs`` with a distinct node id each, so a graph never merges two documents.

    A docid is a hash of the source bytes, so byte-identical files (a copy,
    a template, an empty note) share it. In URI order the first document of
    a docid keeps it as its node id; each further one gets ``#`` plus the
    first 8 hex digits of sha256 over its docid and URI: stable, and as
    short as a docid.
    """
    taken = {doc.docid for doc in docs}
    seen: set[str] = set()
    out: list[DocSummary] = []
    for doc in sorted(docs, key=lambda d: d.uri):
        if doc.docid not in seen:
            seen.add(doc.docid)
            out.append(doc)
            continue
        salt = 0
        while True:
            digest = hashlib.sha256(f"{doc.docid}\n{doc.uri}\n{salt}".encode()).hexdigest()
            node = "#" + digest[:8]
            if node not in taken:
                break
            salt += 1
        taken.add(node)
        out.append(dataclasses.replace(doc, node_id=node))
    order = {doc.id: position for position, doc in enumerate(docs)}
    return sorted(out, key=lambda d: order[d.id])


def summary(row: RowView) -> DocSummary:
    """A document row as the small summary the link and graph tools report."""
    return DocSummary(
        id=int(row["id"]),
        docid=str(row["docid"]),
        uri=str(row["uri"]),
        title=row["title"],
        collection=str(row["collection"]),
        rel_path=str(row["rel_path"]),
    )


def fold_text(text: str) -> str:
    return text.strip().casefold()


def _without_suffix(rel_path: str) -> str:
    """``rel_path`` minus the extension of its last segment (``.env`` has none)."""
    folder, slash, name = rel_path.rpartition("/")
    base, dot, _ = name.rpartition(".")
    return folder + slash + base if dot and base else rel_path


def _stem(rel_path: str) -> str:
    return _without_suffix(rel_path.rpartition("/")[2])


def wiki_keys(doc: DocSummary) -> tuple[tuple[str, ...], ...]:
    """What a wiki target may equal to name ``doc``, one tuple per rank."""
    path_keys = (fold_text(doc.rel_path), fold_text(_without_suffix(doc.rel_path)))
    title_keys = (fold_text(doc.title),) if doc.title else ()
    return path_keys, (fold_text(_stem(doc.rel_path)),), title_keys


@dataclass(slots=True)
class CollectionIndex:
    """Lookup tables over one collection's active documents."""

    exact: dict[str, DocSummary] = field(default_factory=dict)
    folded_paths: dict[str, list[DocSummary]] = field(default_factory=dict)
    # Wiki ranks: path (with or without extension), stem, title.
    wiki: tuple[dict[str, list[DocSummary]], ...] = field(
        default_factory=lambda: ({}, {}, {}),
    )

    def add(self, doc: DocSummary) -> None:
        self.exact[doc.rel_path] = doc
        self.folded_paths.setdefault(fold_text(doc.rel_path), []).append(doc)
        for table, keys in zip(self.wiki, wiki_keys(doc), strict=True):
            for key in set(keys):
                table.setdefault(key, []).append(doc)


def _first(candidates: Iterable[DocSummary]) -> DocSummary:
    return min(candidates, key=lambda doc: doc.rel_path)


# How a wiki target matched, by rank: its path is exact, its stem a fallback, its title exact.
_WIKI_RANKS: Final = ("exact-path", "path-fallback", "exact-title")


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a link found its document (GNO's edge audit).

    ``resolution`` is ``exact-path`` or ``exact-title`` when the link names
    the document as written, ``path-fallback`` when only a looser reading
    matches (another letter case, an added ``.md`` or ``/index.md``, a bare
    file stem), and ``ambiguous-fallback`` when several documents matched
    equally and the smallest path was taken; ``match_count`` says how many.
    """

    document: DocSummary
    resolution: str
    match_count: int

    @classmethod
    def of(cls, candidates: list[DocSummary], resolution: str) -> Resolution:
        if len(candidates) > 1:
            return cls(_first(candidates), "ambiguous-fallback", len(candidates))
        return cls(candidates[0], resolution, 1)

    @property
    def confidence(self) -> str:
        """``explicit``, ``inferred`` or ``ambiguous``: how far an agent may trust the edge."""
        return {"ambiguous-fallback": "ambiguous", "path-fallback": "inferred"}.get(
            self.resolution, "explicit"
        )


class Resolver:
    """Resolves stored link targets to active documents, loading each collection once."""

    def __init__(self, links: LinkStore) -> None:
        self._links = links
        self._collections: dict[str, CollectionIndex] = {}

    def _index(self, collection: str) -> CollectionIndex:
        found = self._collections.get(collection)
        if found is None:
            found = CollectionIndex()
            for row in self._links.active_documents(collection):
                found.add(summary(row))
            self._collections[collection] = found
        return found

    def resolve(
        self, kind: str, target: str, link_collection: str | None, source: DocSummary
    ) -> DocSummary | None:
        found = self.resolve_audited(kind, target, link_collection, source)
        return None if found is None else found.document

    def resolve_audited(
        self, kind: str, target: str, link_collection: str | None, source: DocSummary
    ) -> Resolution | None:
        """The document a link names and how it was found (see :class:`Resolution`)."""
        if kind == "wiki":
            return self._wiki(target, link_collection or source.collection)
        if kind == "markdown":
            return self._markdown(target, source)
        return None

    def _wiki(self, target: str, collection: str) -> Resolution | None:
        key = fold_text(target)
        if not key:
            return None
        keys = [key]
        if key.endswith(MARKDOWN_SUFFIX) and len(key) > len(MARKDOWN_SUFFIX):
            keys.append(key[: -len(MARKDOWN_SUFFIX)])
        index = self._index(collection)
        for rank, table in zip(_WIKI_RANKS, index.wiki, strict=True):
            matches = {doc.id: doc for k in keys for doc in table.get(k, ())}
            if matches:
                return Resolution.of(list(matches.values()), rank)
        return None

    def _markdown(self, target: str, source: DocSummary) -> Resolution | None:
        if target.startswith("gno://"):
            try:
                collection, rel_path, _ = parse_uri(target)
            except GnoError:
                return None
            return self._path(collection, rel_path, "exact-path")
        if target.startswith("/"):
            joined = target.lstrip("/")
        else:
            joined = posixpath.join(posixpath.dirname(source.rel_path), target)
        path = posixpath.normpath(joined) if joined else ""
        if not path or path == "." or path == ".." or path.startswith("../"):
            return None
        found = self._path(source.collection, path, "exact-path")
        if found is not None or _without_suffix(path) != path:
            return found
        for candidate in (path + MARKDOWN_SUFFIX, path + "/index" + MARKDOWN_SUFFIX):
            found = self._path(source.collection, candidate, "path-fallback")
            if found is not None:
                return found
        return None

    def _path(self, collection: str, rel_path: str, resolution: str) -> Resolution | None:
        index = self._index(collection)
        exact = index.exact.get(rel_path)
        if exact is not None:
            return Resolution(exact, resolution, 1)
        folded = index.folded_paths.get(fold_text(rel_path))
        # Found only when letter case is ignored: a fallback, not what was written.
        return Resolution.of(folded, "path-fallback") if folded else None

    def by_path(self, collection: str, rel_path: str) -> DocSummary | None:
        """The active document at exactly this path, else one whose path differs only in case."""
        found = self._path(collection, rel_path, "exact-path")
        return None if found is None else found.document


def known_collection(links: LinkStore, name: str) -> str:
    """The collection name as stored; ``NOT_FOUND`` for one the index does not know."""
    wanted = name.strip().lower()
    if not links.collection_exists(wanted):
        raise GnoError("NOT_FOUND", f"Collection not found: {name}")
    return wanted


__all__ = [
    "DocSummary",
    "Resolver",
]
