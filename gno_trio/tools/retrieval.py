"""``gno_search`` and ``gno_query``: keyword search and the general retrieval entry point.

Each tool is declared whole here: its argument Struct, its descriptions per
profile, its output schema and annotations, and the thin handler that turns
arguments into one engine call and the result into a short text.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Protocol

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import QueryOptions, Scope, SearchRequest, Traced
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    AuthorFilter,
    Categories,
    CollectionFilter,
    ExcludeTerms,
    LangHint,
    MinScore,
    ProjectHints,
    QueryModeKind,
    ResultLimit,
    SinceBound,
    TagsAll,
    TagsAny,
    ToolInput,
    UntilBound,
)


class RetrievalFilters(ToolInput, kw_only=True):
    """Scope and filter arguments every retrieval tool shares (gno_search, gno_query)."""

    projectHints: ProjectHints | UnsetType = UNSET
    collection: CollectionFilter | UnsetType = UNSET
    limit: ResultLimit = 5
    minScore: MinScore | UnsetType = UNSET
    lang: LangHint | UnsetType = UNSET
    exclude: ExcludeTerms | UnsetType = UNSET
    since: SinceBound | UnsetType = UNSET
    until: UntilBound | UnsetType = UNSET
    categories: Categories | UnsetType = UNSET
    author: AuthorFilter | UnsetType = UNSET
    tagsAll: TagsAll | UnsetType = UNSET
    tagsAny: TagsAny | UnsetType = UNSET


class SearchInput(RetrievalFilters, kw_only=True):
    """Arguments of ``gno_search`` (BM25 keyword search)."""

    query: Annotated[
        str,
        Meta(
            min_length=1,
            description="Exact words to match: identifier, name, filename, error text or phrase",
        ),
    ]
    intent: (
        Annotated[
            str,
            Meta(
                description=(
                    "Background that disambiguates the query (for 'python': 'programming "
                    "language'); it picks the snippet and is itself left out of the match"
                )
            ),
        ]
        | UnsetType
    ) = UNSET


class QueryMode(ToolInput):
    """One caller-typed retrieval entry of ``gno_query``."""

    mode: Annotated[
        QueryModeKind,
        Meta(
            description=(
                "term: a lexical anchor; intent: disambiguating context; hyde: one "
                "hypothetical answer passage"
            )
        ),
    ]
    text: Annotated[
        str,
        Meta(
            min_length=1,
            description="Text for this entry; short for term, answer-shaped for hyde",
        ),
    ]


class QueryInput(RetrievalFilters, kw_only=True):
    """Arguments of ``gno_query`` (the general retrieval entry point)."""

    query: Annotated[
        str,
        Meta(
            min_length=1,
            description="The question or topic; add intent or queryModes when it is ambiguous",
        ),
    ]
    intent: (
        Annotated[
            str,
            Meta(
                description=(
                    "Background that disambiguates the query; it steers expansion, reranking "
                    "and snippet choice and is itself left out of the match"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    candidateLimit: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=100,
                description="How many candidates reach the rerank stage (1-100; default 20)",
            ),
        ]
        | UnsetType
    ) = UNSET
    queryModes: (
        Annotated[
            list[QueryMode],
            Meta(
                description=(
                    "Typed retrieval entries used in place of generated expansion: term anchors, "
                    "intent context, and a single hyde passage at most"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    fast: Annotated[
        bool, Meta(description="Shallow pass: skip expansion, graph expansion and reranking")
    ] = False
    thorough: Annotated[
        bool,
        Meta(description="Deep pass: query expansion plus reranking over 40 candidates"),
    ] = False
    expand: Annotated[bool, Meta(description="Force query expansion on or off")] | UnsetType = UNSET
    rerank: Annotated[bool, Meta(description="Force reranking on or off")] | UnsetType = UNSET
    noGraph: Annotated[bool, Meta(description="Turn off one-hop graph expansion")] | UnsetType = (
        UNSET
    )
    graph: (
        Annotated[bool, Meta(description="One-hop graph expansion over links (on by default)")]
        | UnsetType
    ) = UNSET
    explain: (
        Annotated[bool, Meta(description="Add per-stage and per-result scoring details to meta")]
        | UnsetType
    ) = UNSET


_PREVIEW_CHARS = 200


def scope_of(args: msgspec.Struct) -> Scope:
    """The one MCP-arguments-to-:class:`Scope` converter (every retrieval tool and REST).

    The scope arguments carry their wire names (``collection`` or
    ``collections``, ``uriPrefix``, ``tagsAll``, ``minScore``, ``intent``
    ...); left-out ones filter nothing.
    """
    return Scope.from_given(msgspec.to_builtins(args))


def search_request(args: RetrievalFilters, query: str) -> SearchRequest:
    """A ranked retrieval's request: ``query`` and ``limit`` under the arguments' scope."""
    return SearchRequest(query=query, limit=args.limit, scope=scope_of(args))


def plain_snippet(snippet: str) -> str:
    """A snippet without its highlight marks, on one line."""
    return " ".join(snippet.replace("<mark>", "").replace("</mark>", "").split())


def search_text(result: dict[str, Any]) -> str:
    hits = result["results"]
    lines = [f'Found {len(hits)} results for "{result["meta"]["query"]}"']
    for hit in hits:
        anchor = f":{hit['line']}" if "line" in hit else ""
        lines.append(f"{hit['docid']} - {hit['source']['relPath']}{anchor} ({hit['score']:.3f})")
    return "\n".join(lines)


def hits_text(result: dict[str, Any], label: str) -> str:
    """A ranked answer as text: each hit's docid, uri, line, score, title and a preview."""
    hits = result["results"]
    lines = [f'Found {len(hits)} results for "{result["meta"]["query"]}" ({label})']
    for hit in hits:
        anchor = f" line {hit['line']}" if "line" in hit else ""
        lines.append(f"\n[{hit['docid']}] {hit['uri']}{anchor} (score: {hit['score']:.3f})")
        if hit.get("title"):
            lines.append(f"  {hit['title']}")
        preview = plain_snippet(hit.get("snippet", ""))[:_PREVIEW_CHARS]
        if preview:
            lines.append(f"  {preview}")
    return "\n".join(lines)


def query_text(result: dict[str, Any]) -> str:
    meta = result["meta"]
    text = hits_text(result, f"mode: {meta['mode']}")
    for key, stage in (("expansionSkipped", "Query expansion"), ("rerankSkipped", "Reranking")):
        if key in meta:
            text += f"\n\n{stage} was asked for and did not run: {meta[key]}."
    return text


def query_options(args: QueryInput, *, explain: bool = False) -> QueryOptions:
    """A query's retrieval options (the engine adds the configured contexts itself)."""
    return QueryOptions(
        query_modes=[(m.mode, m.text) for m in opt(args.queryModes) or ()],
        candidate_limit=opt(args.candidateLimit),
        fast=args.fast,
        thorough=args.thorough,
        explain=explain,
        graph=graph_wanted(args),
        expand=opt(args.expand),
        rerank=opt(args.rerank),
    )


class _GraphSwitches(Protocol):
    @property
    def graph(self) -> bool | UnsetType: ...
    @property
    def noGraph(self) -> bool | UnsetType: ...  # GNO's argument name


def graph_wanted(args: _GraphSwitches) -> bool:
    """Whether graph expansion may run (``graph: false`` and ``noGraph: true`` turn it off)."""
    return opt(args.graph) is not False and opt(args.noGraph) is not True


def make_search(runtime: Runtime) -> ToolHandler:
    def call(args: SearchInput, ctx: ToolCallContext) -> Traced:
        return runtime.engine.retrieval.run("search", search_request(args, args.query))

    return engine_tool(runtime, call, search_text)


def make_query(runtime: Runtime) -> ToolHandler:
    def call(args: QueryInput, ctx: ToolCallContext) -> Traced:
        options = query_options(args, explain=bool(opt(args.explain)))
        return runtime.engine.retrieval.run("query", search_request(args, args.query), options)

    return engine_tool(runtime, call, query_text)


SEARCH: Final = read_tool(
    "gno_search",
    SearchInput,
    "search-results",
    make_search,
    content_class="snippet",
    full=(
        "Keyword search with BM25 over the indexed documents, suited to exact names, "
        "identifiers, error messages, filenames and quoted phrases. Each hit carries uri, "
        "docid, score, snippet, a line anchor when known and any configured context guidance; "
        "read further with gno_get (fromLine/lineCount) or gno_multi_get, and switch to "
        "gno_query when the wording is uncertain."
    ),
    core=(
        "Call when you know the exact words: a name, identifier, error message, filename or "
        "phrase. Runs BM25 full-text ranking over the index, model-free. Returns ranked hits "
        "with uri, docid, score, snippet and a line anchor to pass to gno_get as fromLine; "
        "limit caps the hits at 1-100 (default 5)."
    ),
)

QUERY: Final = read_tool(
    "gno_query",
    QueryInput,
    "search-results",
    make_query,
    content_class="snippet",
    full=(
        "General retrieval entry point: fuses BM25 keyword search with multilingual vector "
        "search, each weighted by its evidence (keywords count as far as the notes hold the "
        "query's words and the best hit matches them; explain shows every score and weight), "
        "and adds documents one link away from the best hits. meta.mode says hybrid, or "
        "bm25_only before embeddings exist. Expansion and reranking run through configured "
        "endpoints; when asked for and not run, meta.expansionSkipped/rerankSkipped say why. "
        "Accepts intent, queryModes (term, intent, hyde), fast, thorough, graph/noGraph, "
        "candidateLimit and explain. Hits have the gno_search shape: uri, docid, score, "
        "snippet, line anchor and any context guidance."
    ),
    core=(
        "Call first for a question whose wording may differ from the notes, in any language. "
        "Fuses keyword and semantic (vector) search plus linked neighbours; meta.mode says "
        "hybrid, or bm25_only before embeddings exist. Accepts intent, queryModes, fast and "
        "thorough; treat a hit's context field as guidance and cite the source lines. "
        "Returns ranked hits with uri, docid, score, snippet and a line anchor for gno_get; "
        "limit caps the hits at 1-100 (default 5)."
    ),
)

TOOLS: Final = (
    SEARCH,
    QUERY,
)
