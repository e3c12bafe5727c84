"""The pages that read: search, document, browse, ask, status.

Each view turns the query string into the arguments of the tool an agent
would call, calls it (:mod:`.calls`), and hands the structured answer to its
template. The only work done here is presentation: choosing which tool a
search mode means, splitting a note's leading frontmatter block from its body
for display, numbering sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlencode

import trio

from gno_trio.transports.http.pages.calls import Outcome, run_tool, served, writes_enabled
from gno_trio.transports.http.pages.html import page
from gno_trio.transports.http.status import resident_status
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Reply

SEARCH_MODES: Final[dict[str, str]] = {
    "hybrid": "gno_query",
    "lexical": "gno_search",
    "semantic": "gno_vsearch",
}
"""Each search mode the page offers, and the tool that answers it."""
DEFAULT_MODE: Final = "hybrid"
RESULT_LIMITS: Final = (10, 20, 50)
SIMILAR_LIMIT: Final = 5
BROWSE_TOOL: Final = "browse"
COLLECTIONS_TOOL: Final = "collections"
"""The listings the REST API adds beside the tools (the pages call them the same way)."""
_FRONTMATTER_FENCE: Final = "---"


def first(params: Mapping[str, list[str]], name: str, default: str = "") -> str:
    """The first value of a query or form field, stripped."""
    values = params.get(name)
    return values[0].strip() if values else default


def positive(params: Mapping[str, list[str]], name: str) -> int | None:
    """A positive whole number field, or None when missing or not one."""
    value = first(params, name)
    return int(value) if value.isdigit() and 0 < int(value) < 10**9 else None


def chrome(call: HttpCall, current: str, **extra: Any) -> dict[str, Any]:
    """What every page's frame needs: which page is open, and what this server offers."""
    return {
        "current": current,
        "writes": writes_enabled(call),
        "signed_in": call.exchange.caller.authenticated,
        "query": "",
        **extra,
    }


async def collection_choices(call: HttpCall) -> list[Mapping[str, Any]]:
    """The configured collections, for a filter's choices (empty when the listing fails)."""
    listing = await run_tool(call, COLLECTIONS_TOOL, {})
    return list(listing.data.get("collections", ())) if listing.ok else []


def doc_link(uri: str, line: int | None = None) -> str:
    """The shareable URL of a document view (at ``line`` when given)."""
    fields: dict[str, str | int] = {"uri": uri}
    if line is not None:
        fields["line"] = line
    return "/doc?" + urlencode(fields) + (f"#L{line}" if line is not None else "")


async def search(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/`` and ``/search``: the form, and with ``q`` the results in the page itself."""
    query = first(params, "q")
    mode = first(params, "mode", DEFAULT_MODE)
    if mode not in SEARCH_MODES:
        mode = DEFAULT_MODE
    collection = first(params, "collection")
    tags = [t.strip() for t in first(params, "tags").split(",") if t.strip()]
    limit = positive(params, "limit") or RESULT_LIMITS[0]
    outcome: Outcome | None = None
    if query:
        arguments: dict[str, Any] = {"query": query, "limit": min(limit, RESULT_LIMITS[-1])}
        if collection:
            arguments["collection"] = collection
        if tags:
            arguments["tagsAll"] = tags
        outcome = await run_tool(call, SEARCH_MODES[mode], arguments)
    return page(
        "search.html",
        **chrome(call, "search", query=query),
        mode=mode,
        modes=list(SEARCH_MODES),
        collection=collection,
        collections=await collection_choices(call),
        tags=", ".join(tags),
        limit=limit,
        limits=RESULT_LIMITS,
        outcome=outcome,
        doc_link=doc_link,
    )


def split_frontmatter(content: str) -> tuple[str, str, int]:
    """A leading ``---`` block, the body after it, and the body's first line number."""
    lines = content.split("\n")
    if len(lines) > 2 and lines[0].strip() == _FRONTMATTER_FENCE:
        for index in range(1, len(lines)):
            if lines[index].strip() == _FRONTMATTER_FENCE:
                return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    return "", content, 1


async def document(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/doc?uri=``: the rendered note, its frontmatter, tags, links, backlinks, similar notes."""
    uri = first(params, "uri")
    if not uri:
        return page("error.html", 400, **chrome(call, "doc"), message="Which document? Add ?uri=")
    line = positive(params, "line")
    got = await run_tool(call, "gno_get", {"ref": uri, "lineNumbers": False})
    if not got.ok:
        status = 404 if got.code == "NOT_FOUND" else 400
        return page("error.html", status, **chrome(call, "doc"), message=got.message)
    related: dict[str, Outcome] = {}

    async def fetch(key: str, tool: str, arguments: dict[str, Any]) -> None:
        if served(call, tool):
            related[key] = await run_tool(call, tool, arguments)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fetch, "links", "gno_links", {"ref": uri})
        nursery.start_soon(fetch, "backlinks", "gno_backlinks", {"ref": uri})
        nursery.start_soon(fetch, "similar", "gno_similar", {"ref": uri, "limit": SIMILAR_LIMIT})
    content = str(got.data.get("content", ""))
    is_markdown = str(got.data.get("source", {}).get("mime", "")) == "text/markdown"
    frontmatter, body, body_line = split_frontmatter(content) if is_markdown else ("", content, 1)
    return page(
        "doc.html",
        **chrome(call, "doc"),
        doc=got.data,
        uri=uri,
        line=line,
        view=first(params, "view") or ("source" if line else "rendered"),
        lines=content.split("\n"),
        frontmatter=frontmatter,
        body=body,
        body_line=body_line,
        related=related,
        doc_link=doc_link,
        self_link=lambda view: "/doc?" + urlencode({"uri": uri, "view": view}),
    )


async def browse(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/browse?collection=&path=``: one folder of the tree (the collections at the top)."""
    collection = first(params, "collection")
    path = first(params, "path").strip("/")
    arguments: dict[str, Any] = {"path": path}
    if collection:
        arguments["collection"] = collection
    outcome = await run_tool(call, BROWSE_TOOL, arguments)
    crumbs: list[tuple[str, str]] = []
    if collection:
        crumbs.append((collection, "/browse?" + urlencode({"collection": collection})))
        walked: list[str] = []
        for part in [p for p in path.split("/") if p]:
            walked.append(part)
            link = "/browse?" + urlencode({"collection": collection, "path": "/".join(walked)})
            crumbs.append((part, link))
    return page(
        "browse.html",
        200 if outcome.ok else (404 if outcome.code in ("NOT_FOUND", "PATH_NOT_FOUND") else 400),
        **chrome(call, "browse"),
        collection=collection,
        path=path,
        crumbs=crumbs,
        outcome=outcome,
        folder_link=lambda c, p: "/browse?" + urlencode({"collection": c, "path": p}),
        doc_link=doc_link,
    )


async def ask(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/ask?q=``: a verified answer with numbered sources and the verification verdict."""
    query = first(params, "q")
    collection = first(params, "collection")
    outcome: Outcome | None = None
    if query:
        arguments: dict[str, Any] = {"query": query, "verify": True}
        if collection:
            arguments["collection"] = collection
        outcome = await run_tool(call, "gno_ask", arguments)
    claims: Mapping[str, Any] = {}
    if outcome is not None and outcome.ok:
        claims = outcome.data.get("verification", {}).get("claims", {})
    return page(
        "ask.html",
        **chrome(call, "ask", query=query),
        ask_query=query,
        collection=collection,
        collections=await collection_choices(call),
        outcome=outcome,
        claims=claims,
        doc_link=doc_link,
    )


async def status(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/status``: the index's health, and the serving process as ``/api/resident/status``."""
    outcome = await run_tool(call, "gno_status", {})
    return page(
        "status.html",
        **chrome(call, "status"),
        outcome=outcome,
        server=resident_status(call.state, await call.state.sessions.count()),
    )


__all__ = [
    "SEARCH_MODES",
    "ask",
    "browse",
    "collection_choices",
    "doc_link",
    "document",
    "first",
    "search",
    "status",
]
