"""The graph tools: neighbours, paths, the whole graph, typed-edge walks and impact."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import GraphFilters
from gno_trio.engine.vocabulary import GRAPH_DEFAULT_EDGE_LIMIT, GRAPH_DEFAULT_LIMIT
from gno_trio.engine.vocabulary import IMPACT_DEFAULT_MAX_EDGES as DEFAULT_IMPACT_MAX_EDGES
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    BoundedDocumentRef,
    DocumentRef,
    ToolInput,
)


class GraphFilterInput(ToolInput):
    """The graph filters ``gno_graph``, ``gno_graph_neighbors`` and ``gno_graph_path`` share."""

    collection: (
        Annotated[str, Meta(description="Only documents of this collection")] | UnsetType
    ) = UNSET
    limit: Annotated[
        int, Meta(ge=1, le=5000, description="Most documents in the graph or answer (1-5000)")
    ] = GRAPH_DEFAULT_LIMIT
    edgeLimit: Annotated[
        int, Meta(ge=1, le=50000, description="Most link edges in the graph or answer (1-50000)")
    ] = GRAPH_DEFAULT_EDGE_LIMIT
    includeSimilar: Annotated[
        bool,
        Meta(
            description=(
                "Accepted for compatibility: these walks follow links only, and say so in "
                "meta.warnings when it is set"
            )
        ),
    ] = False
    threshold: Annotated[
        float, Meta(ge=0, le=1, description="Similarity threshold (0-1); used with includeSimilar")
    ] = 0.7
    linkedOnly: Annotated[bool, Meta(description="Leave out documents with no links")] = True
    similarTopK: Annotated[
        int, Meta(ge=1, le=20, description="Similar documents per node (1-20)")
    ] = 5

    def filters(self) -> GraphFilters:
        return GraphFilters(
            collection=opt(self.collection) or None,
            limit=self.limit,
            edge_limit=self.edgeLimit,
            linked_only=self.linkedOnly,
            include_similar=self.includeSimilar,
            threshold=self.threshold,
            similar_top_k=self.similarTopK,
        )


class GraphNeighborsInput(GraphFilterInput, kw_only=True):
    """Arguments of ``gno_graph_neighbors``: the graph filters, a document and a direction."""

    ref: Annotated[
        str,
        Meta(
            min_length=1,
            description="Document reference: gno://collection/path, #docid or collection/path",
        ),
    ]
    direction: Annotated[
        Literal["both", "out", "in"],
        Meta(description="out: documents it links to; in: documents linking to it; both"),
    ] = "both"


class GraphPathInput(GraphFilterInput, kw_only=True):
    """Arguments of ``gno_graph_path``; ``from`` is spelled ``from_`` in Python."""

    from_: DocumentRef = msgspec.field(name="from")
    to: DocumentRef
    maxDepth: Annotated[
        int, Meta(ge=1, le=12, description="Maximum number of link hops to search (1-12)")
    ] = 6


FrontierLimit: TypeAlias = Annotated[
    int, Meta(ge=1, le=1000, description="Most documents expanded per hop (1-1000)")
]

VisitedLimit: TypeAlias = Annotated[
    int, Meta(ge=1, le=5000, description="Most distinct documents the walk may touch (1-5000)")
]

TraversalNodes: TypeAlias = Annotated[
    int, Meta(ge=1, le=1000, description="Most documents to return, the root included (1-1000)")
]


class GraphInput(GraphFilterInput):
    """Arguments of ``gno_graph`` (the whole link graph and its health report).

    Only the whole graph adds similarity edges, so only its ``includeSimilar`` says how.
    """

    includeSimilar: Annotated[
        bool,
        Meta(
            description=(
                "Also link each returned document to its similarTopK nearest returned documents "
                "by embedding, scoring at least threshold (edges of type similar); needs "
                "embeddings, else meta.similarAvailable is false and a warning says why"
            )
        ),
    ] = False


class GraphQueryInput(ToolInput):
    """Arguments of ``gno_graph_query`` (bounded walk over typed frontmatter edges)."""

    ref: DocumentRef
    direction: Annotated[
        Literal["both", "out", "in"],
        Meta(description="out: edges the document holds; in: edges pointing at it; both"),
    ] = "both"
    edgeType: (
        Annotated[str, Meta(min_length=1, description="Follow only this edge type (works_at)")]
        | UnsetType
    ) = UNSET
    relation: (
        Annotated[str, Meta(min_length=1, description="Alias of edgeType; both must agree")]
        | UnsetType
    ) = UNSET
    maxDepth: (
        Annotated[int, Meta(ge=1, le=6, description="Maximum hops (1-6, default 2)")] | UnsetType
    ) = UNSET
    depth: (
        Annotated[int, Meta(ge=1, le=6, description="Alias of maxDepth; both must agree")]
        | UnsetType
    ) = UNSET
    maxNodes: TraversalNodes = 100
    frontierLimit: FrontierLimit = 100
    visitedLimit: VisitedLimit = 500


class ImpactInput(ToolInput):
    """Arguments of ``gno_impact`` (documents that depend on one document)."""

    ref: BoundedDocumentRef
    maxDepth: Annotated[int, Meta(ge=1, le=6, description="Maximum hops (1-6)")] = 3
    maxNodes: TraversalNodes = 100
    maxEdges: Annotated[int, Meta(ge=1, le=5000, description="Most edges to walk (1-5000)")] = (
        DEFAULT_IMPACT_MAX_EDGES
    )
    frontierLimit: FrontierLimit = 100
    visitedLimit: VisitedLimit = 500


_ARROWS = {"out": "->", "in": "<-", "both": "<->"}


def neighbors_text(result: dict[str, Any]) -> str:
    """A header, then one line per neighbour with the way its links go."""
    meta = result["meta"]
    shown = f", showing {meta['returned']}" if meta["truncated"] else ""
    lines = [
        f"{meta['totalNeighbors']} {result['direction']} neighbours of "
        f"{result['node']['uri']}{shown}"
    ]
    for entry in result["neighbors"]:
        kinds = "/".join(entry["linkTypes"])
        lines.append(
            f"  {_ARROWS[entry['direction']]} {entry['uri']} ({kinds}, {entry['linkCount']})"
        )
    return "\n".join(lines)


def path_text(result: dict[str, Any]) -> str:
    start, goal = result["from"]["uri"], result["to"]["uri"]
    if not result["found"]:
        return f"No link path from {start} to {goal} within {result['maxDepth']} hops"
    lines = [f"{result['hops']}-hop path from {start} to {goal}:", f"  {start}"]
    for step in result["steps"]:
        arrow = "->" if step["direction"] == "forward" else "<-"
        lines.append(f"  {arrow} {step['toUri']} ({'/'.join(step['linkTypes'])})")
    return "\n".join(lines)


def make_graph_neighbors(runtime: Runtime) -> ToolHandler:
    def call(args: GraphNeighborsInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.neighbors(
            args.ref, direction=args.direction, filters=args.filters()
        )

    return engine_tool(runtime, call, neighbors_text)


def make_graph_path(runtime: Runtime) -> ToolHandler:
    def call(args: GraphPathInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.shortest_path(
            args.from_, args.to, max_depth=args.maxDepth, filters=args.filters()
        )

    return engine_tool(runtime, call, path_text)


def _cut(meta: dict[str, Any]) -> str:
    return " (truncated by a limit)" if meta["truncated"] else ""


def _label(entry: dict[str, Any]) -> str:
    return f'{entry["uri"]} "{entry["title"]}"' if entry.get("title") else entry["uri"]


def overview_text(result: dict[str, Any]) -> str:
    """Counts, then the hubs, then the health figures and any warning."""
    meta, report = result["meta"], result["report"]
    lines = [
        f"Link graph: {meta['returnedNodes']} of {meta['totalNodes']} nodes, "
        f"{meta['returnedEdges']} of {meta['totalEdges']} edges{_cut(meta)}"
    ]
    if report["hubs"]:
        lines.append("Hubs by degree:")
        lines += [f"  {_label(hub)} (degree {hub['degree']})" for hub in report["hubs"]]
    lines.append(
        f"Isolated documents: {report['isolated']['total']}; "
        f"connected components: {report['components']}"
    )
    lines += [f"Warning: {warning}" for warning in meta["warnings"]]
    return "\n".join(lines)


def query_text(result: dict[str, Any]) -> str:
    """The root, then each reached document with its hop count, then the edges."""
    meta = result["meta"]
    kind = f" of type {meta['edgeType']}" if meta["edgeType"] else ""
    lines = [
        f"Typed edges{kind} around {result['root']['uri']} ({meta['direction']}): "
        f"{meta['returnedNodes']} documents, {meta['returnedEdges']} edges{_cut(meta)}"
    ]
    by_id = {entry["id"]: entry["uri"] for entry in result["nodes"]}
    lines += [f"  [{entry['depth']}] {_label(entry)}" for entry in result["nodes"][1:]]
    lines += [
        f"  {by_id[edge['source']]} -{edge['edgeType']}-> {by_id[edge['target']]}"
        for edge in result["edges"]
    ]
    lines += [f"Warning: {warning}" for warning in meta["warnings"]]
    return "\n".join(lines)


def impact_text(result: dict[str, Any]) -> str:
    """Each impacted document with its depth and the first step of its evidence."""
    meta = result["meta"]
    lines = [f"{len(result['impacted'])} documents depend on {result['root']['uri']}{_cut(meta)}"]
    for entry in result["impacted"]:
        first = entry["evidencePath"][0]
        lines.append(
            f"  [{entry['depth']}] {_label(entry['document'])} "
            f"-{first['edgeType']}-> {first['target']['uri']}"
        )
    lines += [f"Warning: {warning}" for warning in meta["warnings"]]
    return "\n".join(lines)


def make_graph(runtime: Runtime) -> ToolHandler:
    def call(args: GraphInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.overview(
            collection=opt(args.collection),
            limit=args.limit,
            edge_limit=args.edgeLimit,
            linked_only=args.linkedOnly,
            include_similar=args.includeSimilar,
            similar_top_k=args.similarTopK,
            similar_threshold=args.threshold,
        )

    return engine_tool(runtime, call, overview_text)


def make_graph_query(runtime: Runtime) -> ToolHandler:
    def call(args: GraphQueryInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.query(
            args.ref,
            direction=args.direction,
            edge_type=opt(args.edgeType),
            relation=opt(args.relation),
            max_depth=opt(args.maxDepth),
            depth=opt(args.depth),
            max_nodes=args.maxNodes,
            frontier_limit=args.frontierLimit,
            visited_limit=args.visitedLimit,
        )

    return engine_tool(runtime, call, query_text)


def make_impact(runtime: Runtime) -> ToolHandler:
    def call(args: ImpactInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.impact(
            args.ref,
            max_depth=args.maxDepth,
            max_nodes=args.maxNodes,
            max_edges=args.maxEdges,
            frontier_limit=args.frontierLimit,
            visited_limit=args.visitedLimit,
        )

    return engine_tool(runtime, call, impact_text)


GRAPH: Final = read_tool(
    "gno_graph",
    GraphInput,
    "graph",
    make_graph,
    content_class="metadata",
    full=(
        "Return the corpus link graph (nodes and edges) with a structure report: hubs, "
        "isolated documents, unresolved links and communities. Use it to learn how a corpus "
        "is organised; content questions start with gno_query."
    ),
)

GRAPH_QUERY: Final = read_tool(
    "gno_graph_query",
    GraphQueryInput,
    "graph-query",
    make_graph_query,
    content_class="metadata",
    full=(
        "Traverse typed document edges from one root document in a chosen direction, bounded "
        "by depth, node and frontier limits. Returns the root, nodes, edges, the caps applied "
        "and whether the walk was truncated."
    ),
)

GRAPH_NEIGHBORS: Final = read_tool(
    "gno_graph_neighbors",
    GraphNeighborsInput,
    "graph-neighbors",
    make_graph_neighbors,
    content_class="metadata",
    full=(
        "Show the incoming and outgoing wiki, Markdown and optional similarity edges around "
        "one document; read the neighbours that matter with gno_get."
    ),
)

GRAPH_PATH: Final = read_tool(
    "gno_graph_path",
    GraphPathInput,
    "graph-path",
    make_graph_path,
    content_class="metadata",
    full=(
        "Find the shortest link path between two documents, up to a maximum depth, to answer "
        "'how are X and Y connected?'; read the documents on the path with gno_get."
    ),
)

IMPACT: Final = read_tool(
    "gno_impact",
    ImpactInput,
    "impact",
    make_impact,
    content_class="metadata",
    full=(
        "Walk the inbound dependencies of one document (typed edges, wiki links and Markdown "
        "links) to a bounded depth and return them with deterministic evidence paths."
    ),
)

TOOLS: Final = (
    GRAPH,
    GRAPH_QUERY,
    GRAPH_NEIGHBORS,
    GRAPH_PATH,
    IMPACT,
)
