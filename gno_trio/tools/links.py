"""``gno_links`` and ``gno_backlinks``: the link graph around one document."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from msgspec import UNSET, Meta, UnsetType

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import (
    DocumentRef,
    ToolInput,
)


class LinksInput(ToolInput):
    """Arguments of ``gno_links`` (outgoing links of one document)."""

    ref: DocumentRef
    type: (
        Annotated[
            Literal["wiki", "markdown"],
            Meta(description="Keep only wiki links ([[...]]) or only Markdown links"),
        ]
        | UnsetType
    ) = UNSET


class BacklinksInput(ToolInput):
    """Arguments of ``gno_backlinks`` (documents whose links point at one document)."""

    ref: DocumentRef
    collection: (
        Annotated[str, Meta(min_length=1, description="Keep only links written in this collection")]
        | UnsetType
    ) = UNSET


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def links_text(result: dict[str, Any]) -> str:
    """One line per link: kind, target, position, and the document it leads to, if any."""
    meta = result["meta"]
    kind = f"{meta['typeFilter']} " if "typeFilter" in meta else ""
    header = (
        f"{_plural(meta['totalLinks'], kind + 'link')} in {meta['uri']}, "
        f"{meta['resolvedCount']} resolved"
    )
    lines = [header]
    for link in result["links"]:
        target = link["targetRef"]
        if "targetCollection" in link:
            target = f"{link['targetCollection']}:{target}"
        if "targetAnchor" in link:
            target = f"{target}#{link['targetAnchor']}"
        leads = link["resolvedUri"] if link["resolved"] else "unresolved"
        lines.append(f"  [{link['linkType']}] {target} (line {link['startLine']}) -> {leads}")
    return "\n".join(lines)


def backlinks_text(result: dict[str, Any]) -> str:
    meta = result["meta"]
    scope = f" from collection {meta['collection']}" if "collection" in meta else ""
    lines = [f"{_plural(meta['totalBacklinks'], 'backlink')} to {meta['uri']}{scope}"]
    for link in result["backlinks"]:
        title = f' "{link["sourceTitle"]}"' if "sourceTitle" in link else ""
        lines.append(f"  {link['sourceUri']}{title} (line {link['startLine']})")
    return "\n".join(lines)


def make_links(runtime: Runtime) -> ToolHandler:
    def call(args: LinksInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.links(args.ref, link_type=opt(args.type))

    return engine_tool(runtime, call, links_text)


def make_backlinks(runtime: Runtime) -> ToolHandler:
    def call(args: BacklinksInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.graph.backlinks(args.ref, collection=opt(args.collection))

    return engine_tool(runtime, call, backlinks_text)


LINKS: Final = read_tool(
    "gno_links",
    LinksInput,
    "links-list",
    make_links,
    content_class="metadata",
    full=(
        "List the outgoing wiki links ([[...]]) and Markdown links of one document. "
        "gno_graph_neighbors shows links in both directions."
    ),
)

BACKLINKS: Final = read_tool(
    "gno_backlinks",
    BacklinksInput,
    "backlinks",
    make_backlinks,
    content_class="metadata",
    full=(
        "List the incoming links of one document: every document whose wiki or Markdown links "
        "point at it, optionally within one collection."
    ),
)

TOOLS: Final = (
    LINKS,
    BACKLINKS,
)
