"""The link lists of one document: its outgoing links (``links-list``) and its backlinks.

Both answer from the stored link rows and resolve each link with the one
:class:`~gno_trio.engine.graph.links.Resolver`, so a link listed as
resolved here is the same edge the graph, the typed graph and refactor
plans see.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from gno_trio.engine.graph.links import (
    MARKDOWN_SUFFIX,
    DocSummary,
    Resolver,
    fold_text,
    known_collection,
    summary,
    wiki_keys,
)
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

LinkKind = Literal["wiki", "markdown"]
LINK_KINDS: Final = ("wiki", "markdown")
LINK_TEXT_MAX_CHARS: Final = 256


def _link_text(kind: str, target: str, display: str | None) -> str | None:
    """What a reader sees: the alias or bracket text; a bare wiki link shows its target."""
    text = display or (target if kind == "wiki" else None)
    return text[:LINK_TEXT_MAX_CHARS] if text else None


def _document(conn: Connection, ref: str) -> DocSummary:
    return summary(resolve(conn, parse_ref(ref)))


def _meta_identity(doc: DocSummary) -> dict[str, Any]:
    identity: dict[str, Any] = {"docid": doc.docid, "uri": doc.uri}
    if doc.title:
        identity["title"] = doc.title
    return identity


def outgoing(conn: Connection, ref: str, *, link_type: LinkKind | None = None) -> dict[str, Any]:
    """``links-list``: the links of one document in reading order, each resolved if possible.

    Raises ``INVALID_INPUT`` for a malformed ref or type, ``NOT_FOUND`` when
    the ref names no active document.
    """
    if link_type is not None and link_type not in LINK_KINDS:
        raise GnoError(
            "INVALID_INPUT", f"Unknown link type: {link_type} (expected wiki or markdown)"
        )
    source = _document(conn, ref)
    stored = SQLITE_STORES.links(conn)
    resolver = Resolver(stored)
    links: list[dict[str, Any]] = []
    for row in stored.links_of(source.id, link_type):
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


def _wiki_names(doc: DocSummary) -> frozenset[str]:
    """Every folded text a wiki link may carry to reach ``doc`` (any rank)."""
    keys = {key for rank in wiki_keys(doc) for key in rank}
    return frozenset(keys | {key + MARKDOWN_SUFFIX for key in keys})


def backlinks(conn: Connection, ref: str, *, collection: str | None = None) -> dict[str, Any]:
    """``backlinks``: every link in an active document that resolves to ``ref``.

    ``collection`` keeps only links written in that collection (``NOT_FOUND``
    when it does not exist). Sources are ordered by URI, then position.
    """
    target = _document(conn, ref)
    stored = SQLITE_STORES.links(conn)
    source_filter = known_collection(stored, collection) if collection is not None else None
    # Markdown links only reach their own collection unless they are gno:// URIs;
    # wiki links reach another collection only through an explicit prefix.
    resolver = Resolver(stored)
    # A cheap pre-check before resolving: a wiki link can only reach the target
    # through one of its names; markdown paths are resolved in full.
    names = _wiki_names(target)
    found: list[dict[str, Any]] = []
    for row in stored.links_maybe_reaching(target.collection, source_filter):
        if row["kind"] == "wiki" and fold_text(row["target"]) not in names:
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
