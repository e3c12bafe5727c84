"""``gno_search`` and ``gno_query``: thin adapters from MCP arguments to the engine."""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Any

from gno_trio.engine.hybrid import QueryOptions, query
from gno_trio.engine.search import SearchRequest
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.inputs import QueryInput, SearchInput
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt, seq

_PREVIEW_CHARS = 200


def search_request(args: SearchInput | QueryInput) -> SearchRequest:
    return SearchRequest(
        query=args.query,
        limit=args.limit,
        collection=opt(args.collection),
        min_score=opt(args.minScore),
        lang=opt(args.lang),
        intent=opt(args.intent),
        exclude=seq(args.exclude),
        since=opt(args.since),
        until=opt(args.until),
        categories=seq(args.categories),
        author=opt(args.author),
        tags_all=seq(args.tagsAll),
        tags_any=seq(args.tagsAny),
    )


def _plain(snippet: str) -> str:
    return " ".join(snippet.replace("<mark>", "").replace("</mark>", "").split())


def search_text(result: dict[str, Any]) -> str:
    hits = result["results"]
    lines = [f'Found {len(hits)} results for "{result["meta"]["query"]}"']
    for hit in hits:
        anchor = f":{hit['line']}" if "line" in hit else ""
        lines.append(f"{hit['docid']} - {hit['source']['relPath']}{anchor} ({hit['score']:.3f})")
    return "\n".join(lines)


def query_text(result: dict[str, Any]) -> str:
    hits = result["results"]
    meta = result["meta"]
    lines = [f'Found {len(hits)} results for "{meta["query"]}" (mode: {meta["mode"]})']
    for hit in hits:
        anchor = f" line {hit['line']}" if "line" in hit else ""
        lines.append(f"\n[{hit['docid']}] {hit['uri']}{anchor} (score: {hit['score']:.3f})")
        if hit.get("title"):
            lines.append(f"  {hit['title']}")
        preview = _plain(hit.get("snippet", ""))[:_PREVIEW_CHARS]
        if preview:
            lines.append(f"  {preview}")
    return "\n".join(lines)


def query_setup(
    runtime: Runtime, args: QueryInput, *, explain: bool = False
) -> tuple[SearchRequest, QueryOptions]:
    """A query's search request (with the configured contexts) and its retrieval options."""
    request = dataclasses.replace(search_request(args), contexts=runtime.engine.context_rules())
    options = QueryOptions(
        query_modes=[(m.mode, m.text) for m in opt(args.queryModes) or ()],
        candidate_limit=opt(args.candidateLimit),
        fast=args.fast,
        thorough=args.thorough,
        explain=explain,
    )
    return request, options


def make_search(runtime: Runtime) -> ToolHandler:
    def call(args: SearchInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        return runtime.engine.search(search_request(args), conn=conn)

    return engine_tool(runtime, call, search_text)


def make_query(runtime: Runtime) -> ToolHandler:
    def call(args: QueryInput, ctx: ToolCallContext, conn: sqlite3.Connection) -> dict[str, Any]:
        request, options = query_setup(runtime, args, explain=bool(opt(args.explain)))
        return query(conn, request, options)

    return engine_tool(runtime, call, query_text)
