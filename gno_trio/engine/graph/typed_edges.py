"""The typed edges of the graph: frontmatter relations resolved to documents, plus body links.

A relation (``works_at: [[Acme]]``) names its target the way a link does,
so it is resolved with the link resolver; body links join as edges of type
``links_to``. The graph walks (``graph-query``, ``impact``) and the edge
listing both read this one edge set, so they agree on what is connected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.engine.graph.linkgraph import LinkGraph
from gno_trio.engine.graph.links import DocSummary, Resolver, summary
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.links import LinkStore
from gno_trio.engine.uris import parse_ref
from gno_trio.errors import GnoError

LINK_EDGE_TYPE: Final = "links_to"
_LINK_SOURCES: Final = {"wiki": "wikilink", "markdown": "markdown-link"}


@dataclass(frozen=True, slots=True)
class Edge:
    """One resolved edge: typed (from ``relations``) or a resolved document link."""

    source: int
    target: int
    edge_type: str
    confidence: str
    origin: str


@dataclass(slots=True)
class EdgeSet:
    """Resolved edges between active documents, indexed both ways."""

    docs: dict[int, DocSummary]
    outgoing: dict[int, list[Edge]]
    incoming: dict[int, list[Edge]]
    unresolved: int = 0

    def add(self, edge: Edge, source: DocSummary, target: DocSummary) -> None:
        self.docs.setdefault(source.id, source)
        self.docs.setdefault(target.id, target)
        self.outgoing.setdefault(edge.source, []).append(edge)
        self.incoming.setdefault(edge.target, []).append(edge)

    def ordered(self, edges: Iterable[Edge], far_end: str) -> list[Edge]:
        """Edges by the URI of the end away from the walk, then type, so walks repeat."""
        return sorted(
            edges, key=lambda e: (self.docs[getattr(e, far_end)].uri, e.edge_type, e.origin)
        )


def resolve_target(
    links: LinkStore, resolver: Resolver, target: str, source: DocSummary
) -> DocSummary | None:
    """The active document a ``relations`` target names, or ``None``."""
    written = target.strip()
    if written.startswith("#"):
        row = links.active_by_docid(written)
        return summary(row) if row is not None else None
    if written.startswith("gno://"):
        return resolver.resolve("markdown", written, None, source)
    collection, slash, rel_path = written.partition("/")
    if slash and rel_path:
        found = resolver.by_path(collection.strip().lower(), rel_path)
        if found is not None:
            return found
    return resolver.resolve("wiki", written, None, source)


def typed_edges(conn: Connection, edge_type: str | None = None) -> EdgeSet:
    """Every ``doc_edges`` row of an active document, resolved to its target document."""
    stored = SQLITE_STORES.links(conn)
    found = EdgeSet(docs={}, outgoing={}, incoming={})
    resolver = Resolver(stored)
    for row in stored.typed_edges(edge_type):
        source = summary(row)
        target = resolve_target(stored, resolver, row["target"], source)
        if target is None:
            found.unresolved += 1
            continue
        edge = Edge(source.id, target.id, row["edge_type"], row["confidence"], row["origin"])
        found.add(edge, source, target)
    return found


def with_links(conn: Connection, edges: EdgeSet) -> EdgeSet:
    """``edges`` plus one edge per resolved (source, target, link kind)."""
    links = LinkGraph.load(conn)
    for source, targets in links.outgoing.items():
        for target, kinds in targets.items():
            for kind in sorted(kinds):
                edge = Edge(source, target, LINK_EDGE_TYPE, "parsed", _LINK_SOURCES[kind])
                edges.add(edge, links.docs[source], links.docs[target])
    return edges


def root_doc(conn: Connection, ref: str) -> DocSummary:
    return summary(resolve(conn, parse_ref(ref)))


def edge_fields(edge: Edge) -> dict[str, Any]:
    return {
        "edgeType": edge.edge_type,
        "relationType": edge.edge_type,
        "confidence": edge.confidence,
        "edgeSource": edge.origin,
    }


def check_edge_type(edge_type: str | None, relation: str | None) -> str | None:
    """``edgeType`` and its alias ``relation`` as one filter; both set must agree."""
    if edge_type is not None and relation is not None and edge_type != relation:
        raise GnoError(
            "INVALID_INPUT", f"edge type ({edge_type}) and relation ({relation}) disagree"
        )
    chosen = edge_type if edge_type is not None else relation
    if chosen is not None and not chosen.strip():
        raise GnoError("INVALID_INPUT", "the edge type must not be empty")
    return chosen.strip() if chosen is not None else None
