"""``engine.graph``, the link graph: links, backlinks, neighbours, paths, overview, typed walks."""

from __future__ import annotations

from typing import Any

from gno_trio.engine.graph import edges, link_lists, linkgraph, links, overview, typed, typed_edges
from gno_trio.engine.kernel import EngineKernel
from gno_trio.errors import GnoError


class GraphFace:
    """The link graph of an opened index."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel

    def links(
        self,
        ref: str,
        *,
        link_type: link_lists.LinkKind | None = None,
        edge_type: str | None = None,
        relation: str | None = None,
    ) -> dict[str, Any]:
        """``links-list``: the outgoing links of one document, each resolved if possible.

        With ``edge_type`` (or its alias ``relation``) the answer lists the
        document's edges of that type instead; a link syntax filter then
        makes no sense and is refused.
        """
        with self._kernel.connection() as c:
            if edge_type is None and relation is None:
                return link_lists.outgoing(c, ref, link_type=link_type)
            if link_type is not None:
                raise GnoError(
                    "INVALID_INPUT",
                    "a link type (wiki, markdown) cannot be combined with an edge type",
                )
            return edges.typed_links(c, ref, edge_type=edge_type, relation=relation)

    def backlinks(
        self,
        ref: str,
        *,
        collection: str | None = None,
        edge_type: str | None = None,
        relation: str | None = None,
    ) -> dict[str, Any]:
        """``backlinks``: every link in an active document that resolves to ``ref``.

        With ``edge_type`` (or ``relation``): the edges of that type pointing at it.
        """
        with self._kernel.connection() as c:
            if edge_type is None and relation is None:
                return link_lists.backlinks(c, ref, collection=collection)
            return edges.typed_backlinks(
                c, ref, edge_type=edge_type, relation=relation, collection=collection
            )

    def neighbors(
        self,
        ref: str,
        *,
        direction: linkgraph.Direction = "both",
        filters: linkgraph.GraphFilters = linkgraph.NO_FILTERS,
    ) -> dict[str, Any]:
        """The documents one resolved link away from ``ref``, under the graph filters."""
        with self._kernel.connection() as c:
            return linkgraph.neighbors(c, ref, direction=direction, filters=filters)

    def shortest_path(
        self,
        source_ref: str,
        target_ref: str,
        *,
        max_depth: int = linkgraph.PATH_DEFAULT_MAX_DEPTH,
        filters: linkgraph.GraphFilters = linkgraph.NO_FILTERS,
    ) -> dict[str, Any]:
        """The fewest link hops between two documents, under the graph filters."""
        with self._kernel.connection() as c:
            return linkgraph.shortest_path(
                c, source_ref, target_ref, max_depth=max_depth, filters=filters
            )

    def overview(
        self,
        *,
        collection: str | None = None,
        limit: int = overview.GRAPH_DEFAULT_LIMIT,
        edge_limit: int = overview.GRAPH_DEFAULT_EDGE_LIMIT,
        linked_only: bool = True,
        include_similar: bool = False,
        similar_top_k: int = overview.SIMILAR_DEFAULT_TOP_K,
        similar_threshold: float = overview.SIMILAR_DEFAULT_THRESHOLD,
    ) -> dict[str, Any]:
        """The corpus link graph and its structure report (similarity edges on request)."""
        with self._kernel.connection() as c:

            def find_similar(
                nodes: list[links.DocSummary], top_k: int, threshold: float
            ) -> tuple[list[tuple[int, int, float]], bool]:
                from gno_trio.engine.graph.similarity import similar_edges
                from gno_trio.engine.vectors.models import configured_backend

                backend = configured_backend(self._kernel.config, collection)
                return similar_edges(c, backend, nodes, top_k=top_k, threshold=threshold)

            return overview.overview(
                c,
                collection=collection,
                limit=limit,
                edge_limit=edge_limit,
                linked_only=linked_only,
                include_similar=include_similar,
                similar_top_k=similar_top_k,
                similar_threshold=similar_threshold,
                find_similar=find_similar,
            )

    def query(
        self,
        ref: str,
        *,
        direction: typed.Direction = "both",
        edge_type: str | None = None,
        relation: str | None = None,
        max_depth: int | None = None,
        depth: int | None = None,
        max_nodes: int = typed.DEFAULT_MAX_NODES,
        frontier_limit: int = typed.DEFAULT_FRONTIER_LIMIT,
        visited_limit: int = typed.DEFAULT_VISITED_LIMIT,
    ) -> dict[str, Any]:
        """A bounded typed-edge walk; the aliases ``relation`` and ``depth`` must agree."""
        chosen = typed_edges.check_edge_type(edge_type, relation)
        hops = typed.check_depth(max_depth, depth)
        with self._kernel.connection() as c:
            return typed.graph_query(
                c,
                ref,
                direction=direction,
                edge_type=chosen,
                max_depth=hops,
                max_nodes=max_nodes,
                frontier_limit=frontier_limit,
                visited_limit=visited_limit,
            )

    def impact(
        self,
        ref: str,
        *,
        max_depth: int = typed.IMPACT_DEFAULT_MAX_DEPTH,
        max_nodes: int = typed.DEFAULT_MAX_NODES,
        max_edges: int = typed.DEFAULT_MAX_EDGES,
        frontier_limit: int = typed.DEFAULT_FRONTIER_LIMIT,
        visited_limit: int = typed.DEFAULT_VISITED_LIMIT,
    ) -> dict[str, Any]:
        """The documents that depend on ``ref``, with deterministic evidence paths."""
        with self._kernel.connection() as c:
            return typed.impact(
                c,
                ref,
                max_depth=max_depth,
                max_nodes=max_nodes,
                max_edges=max_edges,
                frontier_limit=frontier_limit,
                visited_limit=visited_limit,
            )


__all__ = ["GraphFace"]
