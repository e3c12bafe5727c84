"""One document's typed edges as links and backlinks: ``links``/``backlinks --edge-type``.

The positional views (:mod:`~gno_trio.engine.graph.links`) list every link
where it is written. Given an edge type (or its alias, relation) they switch
to the edge layer instead, as GNO does: the document's edges of that type,
resolved to active documents, each saying how far it can be trusted
(``confidence``) and where it comes from (``edgeSource``). Edges come from
frontmatter ``relations`` and, under the type ``links_to``, from resolved
wiki and Markdown links: the same edges ``impact`` walks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gno_trio.engine.graph import typed_edges
from gno_trio.engine.graph.links import DocSummary, known_collection
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    pass


def _filters(edge_type: str | None, relation: str | None) -> tuple[str, dict[str, Any]]:
    chosen = typed_edges.check_edge_type(edge_type, relation)
    if chosen is None:
        raise GnoError("INVALID_INPUT", "an edge type (or relation) is required")
    meta: dict[str, Any] = {}
    if edge_type is not None:
        meta["edgeTypeFilter"] = chosen
    if relation is not None:
        meta["relationFilter"] = chosen
    return chosen, meta


def _edges(conn: Connection, chosen: str) -> typed_edges.EdgeSet:
    edges = typed_edges.typed_edges(conn, chosen)
    if chosen == typed_edges.LINK_EDGE_TYPE:
        edges = typed_edges.with_links(conn, edges)
    return edges


def _named(doc: DocSummary, prefix: str) -> dict[str, Any]:
    found: dict[str, Any] = {f"{prefix}Docid": doc.docid, f"{prefix}Uri": doc.uri}
    if doc.title:
        found[f"{prefix}Title"] = doc.title
    return found


def _about(doc: DocSummary) -> dict[str, Any]:
    about: dict[str, Any] = {"docid": doc.docid, "uri": doc.uri}
    if doc.title:
        about["title"] = doc.title
    return about


def typed_links(
    conn: Connection, ref: str, *, edge_type: str | None, relation: str | None = None
) -> dict[str, Any]:
    """``links-list`` (edge layer): ``ref``'s outgoing edges of one type."""
    chosen, filters = _filters(edge_type, relation)
    root = typed_edges.root_doc(conn, ref)
    edges = _edges(conn, chosen)
    edges.docs.setdefault(root.id, root)
    found = [
        _named(edges.docs[e.target], "target") | typed_edges.edge_fields(e)
        for e in edges.ordered(edges.outgoing.get(root.id, ()), "target")
    ]
    meta = _about(root) | {
        "totalLinks": len(found),
        "resolvedCount": len(found),
        "resolutionAvailable": True,
        "semantic": True,
        **filters,
    }
    return {"links": found, "meta": meta}


def typed_backlinks(
    conn: Connection,
    ref: str,
    *,
    edge_type: str | None,
    relation: str | None = None,
    collection: str | None = None,
) -> dict[str, Any]:
    """``backlinks`` (edge layer): edges of one type pointing at ``ref``."""
    chosen, filters = _filters(edge_type, relation)
    wanted = (
        known_collection(SQLITE_STORES.links(conn), collection) if collection is not None else None
    )
    root = typed_edges.root_doc(conn, ref)
    edges = _edges(conn, chosen)
    edges.docs.setdefault(root.id, root)
    incoming = edges.ordered(edges.incoming.get(root.id, ()), "source")
    found = [
        _named(edges.docs[e.source], "source") | typed_edges.edge_fields(e)
        for e in incoming
        if wanted is None or edges.docs[e.source].collection == wanted
    ]
    meta = _about(root) | {"totalBacklinks": len(found), "semantic": True, **filters}
    if wanted is not None:
        meta["collection"] = wanted
    return {"backlinks": found, "meta": meta}


__all__ = ["typed_backlinks", "typed_links"]
