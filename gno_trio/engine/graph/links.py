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
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from gno_trio.engine.lookup import resolve
from gno_trio.engine.uris import parse_ref, parse_uri
from gno_trio.errors import GnoError

LinkKind = Literal["wiki", "markdown"]
LINK_KINDS: Final = ("wiki", "markdown")
LINK_TEXT_MAX_CHARS: Final = 256
_MARKDOWN_SUFFIX: Final = ".md"


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


def summary(row: sqlite3.Row) -> DocSummary:
    """A document row as the small summary the link and graph tools report."""
    return DocSummary(
        id=int(row["id"]),
        docid=str(row["docid"]),
        uri=str(row["uri"]),
        title=row["title"],
        collection=str(row["collection"]),
        rel_path=str(row["rel_path"]),
    )


def _fold(text: str) -> str:
    return text.strip().casefold()


def _without_suffix(rel_path: str) -> str:
    """``rel_path`` minus the extension of its last segment (``.env`` has none)."""
    folder, slash, name = rel_path.rpartition("/")
    base, dot, _ = name.rpartition(".")
    return folder + slash + base if dot and base else rel_path


def _stem(rel_path: str) -> str:
    return _without_suffix(rel_path.rpartition("/")[2])


def _wiki_keys(doc: DocSummary) -> tuple[tuple[str, ...], ...]:
    """What a wiki target may equal to name ``doc``, one tuple per rank."""
    path_keys = (_fold(doc.rel_path), _fold(_without_suffix(doc.rel_path)))
    title_keys = (_fold(doc.title),) if doc.title else ()
    return path_keys, (_fold(_stem(doc.rel_path)),), title_keys


@dataclass(slots=True)
class _CollectionIndex:
    """Lookup tables over one collection's active documents."""

    exact: dict[str, DocSummary] = field(default_factory=dict)
    folded_paths: dict[str, list[DocSummary]] = field(default_factory=dict)
    # Wiki ranks: path (with or without extension), stem, title.
    wiki: tuple[dict[str, list[DocSummary]], ...] = field(
        default_factory=lambda: ({}, {}, {}),
    )

    def add(self, doc: DocSummary) -> None:
        self.exact[doc.rel_path] = doc
        self.folded_paths.setdefault(_fold(doc.rel_path), []).append(doc)
        for table, keys in zip(self.wiki, _wiki_keys(doc), strict=True):
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

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._collections: dict[str, _CollectionIndex] = {}

    def _index(self, collection: str) -> _CollectionIndex:
        found = self._collections.get(collection)
        if found is None:
            found = _CollectionIndex()
            for row in self._conn.execute(
                "SELECT id, docid, uri, title, collection, rel_path FROM documents "
                "WHERE collection = ? AND active = 1",
                (collection,),
            ):
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
        key = _fold(target)
        if not key:
            return None
        keys = [key]
        if key.endswith(_MARKDOWN_SUFFIX) and len(key) > len(_MARKDOWN_SUFFIX):
            keys.append(key[: -len(_MARKDOWN_SUFFIX)])
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
        for candidate in (path + _MARKDOWN_SUFFIX, path + "/index" + _MARKDOWN_SUFFIX):
            found = self._path(source.collection, candidate, "path-fallback")
            if found is not None:
                return found
        return None

    def _path(self, collection: str, rel_path: str, resolution: str) -> Resolution | None:
        index = self._index(collection)
        exact = index.exact.get(rel_path)
        if exact is not None:
            return Resolution(exact, resolution, 1)
        folded = index.folded_paths.get(_fold(rel_path))
        # Found only when letter case is ignored: a fallback, not what was written.
        return Resolution.of(folded, "path-fallback") if folded else None

    def by_path(self, collection: str, rel_path: str) -> DocSummary | None:
        """The active document at exactly this path, else one whose path differs only in case."""
        found = self._path(collection, rel_path, "exact-path")
        return None if found is None else found.document


def _link_text(kind: str, target: str, display: str | None) -> str | None:
    """What a reader sees: the alias or bracket text; a bare wiki link shows its target."""
    text = display or (target if kind == "wiki" else None)
    return text[:LINK_TEXT_MAX_CHARS] if text else None


def _document(conn: sqlite3.Connection, ref: str) -> DocSummary:
    return summary(resolve(conn, parse_ref(ref)))


def _meta_identity(doc: DocSummary) -> dict[str, Any]:
    identity: dict[str, Any] = {"docid": doc.docid, "uri": doc.uri}
    if doc.title:
        identity["title"] = doc.title
    return identity


def outgoing(
    conn: sqlite3.Connection, ref: str, *, link_type: LinkKind | None = None
) -> dict[str, Any]:
    """``links-list``: the links of one document in reading order, each resolved if possible.

    Raises ``INVALID_INPUT`` for a malformed ref or type, ``NOT_FOUND`` when
    the ref names no active document.
    """
    if link_type is not None and link_type not in LINK_KINDS:
        raise GnoError(
            "INVALID_INPUT", f"Unknown link type: {link_type} (expected wiki or markdown)"
        )
    source = _document(conn, ref)
    query = (
        "SELECT kind, target, collection, heading, display, line, col FROM doc_links "
        "WHERE doc_id = ?"
    )
    params: tuple[Any, ...] = (source.id,)
    if link_type is not None:
        query += " AND kind = ?"
        params += (link_type,)
    query += " ORDER BY line, col, rowid"
    resolver = Resolver(conn)
    links: list[dict[str, Any]] = []
    for row in conn.execute(query, params).fetchall():
        entry: dict[str, Any] = {"targetRef": row["target"]}
        if row["heading"]:
            entry["targetAnchor"] = row["heading"]
        if row["collection"]:
            entry["targetCollection"] = row["collection"]
        entry["linkType"] = row["kind"]
        text = _link_text(row["kind"], row["target"], row["display"])
        if text is not None:
            entry["linkText"] = text
        entry["startLine"] = max(1, int(row["line"]))
        entry["startCol"] = max(1, int(row["col"]))
        target = resolver.resolve(row["kind"], row["target"], row["collection"], source)
        entry["resolved"] = target is not None
        if target is not None:
            entry["resolvedDocid"] = target.docid
            entry["resolvedUri"] = target.uri
            if target.title:
                entry["resolvedTitle"] = target.title
        links.append(entry)
    meta: dict[str, Any] = {
        **_meta_identity(source),
        "totalLinks": len(links),
        "resolvedCount": sum(1 for link in links if link["resolved"]),
        "resolutionAvailable": True,
    }
    if link_type is not None:
        meta["typeFilter"] = link_type
    return {"links": links, "meta": meta}


def known_collection(conn: sqlite3.Connection, name: str) -> str:
    wanted = name.strip().lower()
    found = conn.execute("SELECT 1 FROM collections WHERE name = ?", (wanted,)).fetchone()
    if found is None:
        raise GnoError("NOT_FOUND", f"Collection not found: {name}")
    return wanted


def _wiki_names(doc: DocSummary) -> frozenset[str]:
    """Every folded text a wiki link may carry to reach ``doc`` (any rank)."""
    keys = {key for rank in _wiki_keys(doc) for key in rank}
    return frozenset(keys | {key + _MARKDOWN_SUFFIX for key in keys})


def backlinks(
    conn: sqlite3.Connection, ref: str, *, collection: str | None = None
) -> dict[str, Any]:
    """``backlinks``: every link in an active document that resolves to ``ref``.

    ``collection`` keeps only links written in that collection (``NOT_FOUND``
    when it does not exist). Sources are ordered by URI, then position.
    """
    target = _document(conn, ref)
    source_filter = known_collection(conn, collection) if collection is not None else None
    # Markdown links only reach their own collection unless they are gno:// URIs;
    # wiki links reach another collection only through an explicit prefix.
    query = """
        SELECT l.kind, l.target, l.collection AS link_collection, l.display, l.line, l.col,
               d.id, d.docid, d.uri, d.title, d.collection, d.rel_path
        FROM doc_links l JOIN documents d ON d.id = l.doc_id
        WHERE d.active = 1
          AND (d.collection = :target_collection
               OR l.collection = :target_collection
               OR (l.kind = 'markdown' AND l.target LIKE 'gno://%'))
    """
    params: dict[str, Any] = {"target_collection": target.collection}
    if source_filter is not None:
        query += " AND d.collection = :source_collection"
        params["source_collection"] = source_filter
    query += " ORDER BY d.uri, l.line, l.col, l.rowid"
    resolver = Resolver(conn)
    # A cheap pre-check before resolving: a wiki link can only reach the target
    # through one of its names; markdown paths are resolved in full.
    names = _wiki_names(target)
    found: list[dict[str, Any]] = []
    for row in conn.execute(query, params).fetchall():
        if row["kind"] == "wiki" and _fold(row["target"]) not in names:
            continue
        source = summary(row)
        resolved = resolver.resolve(row["kind"], row["target"], row["link_collection"], source)
        if resolved is None or resolved.id != target.id:
            continue
        entry: dict[str, Any] = {"sourceDocid": source.docid, "sourceUri": source.uri}
        if source.title:
            entry["sourceTitle"] = source.title
        text = _link_text(row["kind"], row["target"], row["display"])
        if text is not None:
            entry["linkText"] = text
        entry["startLine"] = max(1, int(row["line"]))
        entry["startCol"] = max(1, int(row["col"]))
        found.append(entry)
    meta: dict[str, Any] = {**_meta_identity(target), "totalBacklinks": len(found)}
    if source_filter is not None:
        meta["collection"] = source_filter
    return {"backlinks": found, "meta": meta}


__all__ = [
    "LINK_KINDS",
    "LINK_TEXT_MAX_CHARS",
    "DocSummary",
    "LinkKind",
    "Resolver",
    "backlinks",
    "outgoing",
]
