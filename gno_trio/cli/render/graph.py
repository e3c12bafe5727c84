"""Tags, links, backlinks and the link graph in every format they support."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from gno_trio.cli.render import MD, View
from gno_trio.cli.render.primitives import md_table, plural


def tags_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    tags = result["tags"]
    if not tags:
        return "No tags" + _scope(result["meta"])
    width = max(len(t["tag"]) for t in tags)
    return "\n".join(f"{t['tag']:<{width}}  {t['count']}" for t in tags)


def _scope(meta: Mapping[str, Any]) -> str:
    parts = []
    if meta.get("collection"):
        parts.append(f"in {meta['collection']}")
    if meta.get("prefix"):
        parts.append(f"starting with {meta['prefix']}")
    return (" " + " ".join(parts)) if parts else ""


def tags_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return md_table(("Tag", "Documents"), [(t["tag"], t["count"]) for t in result["tags"]])


TAGS = View(terminal=tags_terminal, formats={MD: tags_markdown})


def tag_change_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    if "wroteToFile" in result:
        where = " (and to its frontmatter)" if result["wroteToFile"] else ""
        return f"Tagged {result['docid']} with {result['tag']}{where}"
    where = " (and from its frontmatter)" if result["removedFromFile"] else ""
    return f"Removed tag {result['tag']} from {result['docid']}{where}"


TAG_CHANGE = View(terminal=tag_change_terminal)


def _target(link: Mapping[str, Any]) -> str:
    if link.get("resolved"):
        return f"{link['targetRef']} -> {link.get('resolvedUri') or link.get('resolvedDocid')}"
    return f"{link['targetRef']} (unresolved)"


def _edge(entry: Mapping[str, Any], end: str) -> str:
    """One edge-layer entry: its type, the far document, where the edge comes from."""
    title = f"  ({entry[end + 'Title']})" if entry.get(end + "Title") else ""
    return (
        f"  {entry['edgeType']}  {entry[end + 'Uri']}{title}  "
        f"[{entry['edgeSource']}, {entry['confidence']}]"
    )


def _edge_rows(entries: list[Mapping[str, Any]], end: str) -> list[tuple[Any, ...]]:
    return [
        (
            e["edgeType"],
            f"`{e[end + 'Uri']}`",
            e.get(end + "Title"),
            e["edgeSource"],
            e["confidence"],
        )
        for e in entries
    ]


_EDGE_COLUMNS = ("Edge type", "Document", "Title", "Source", "Confidence")


def links_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    meta = result["meta"]
    links = result["links"]
    if meta.get("semantic"):
        kind = meta.get("edgeTypeFilter") or meta.get("relationFilter")
        lines = [f"{plural(len(links), kind + ' edge')} from {meta['uri']}"]
        return "\n".join(lines + [_edge(link, "target") for link in links])
    lines = [
        f"{plural(len(links), 'link')} from {meta['uri']} ({meta.get('resolvedCount', 0)} resolved)"
    ]
    for link in links:
        lines.append(
            f"  {link['startLine']}:{link['startCol']}  {link['linkType']:<8} {_target(link)}"
        )
    return "\n".join(lines)


def links_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    header = f"# Links from `{result['meta']['uri']}`\n\n"
    if result["meta"].get("semantic"):
        return header + md_table(_EDGE_COLUMNS, _edge_rows(result["links"], "target"))
    rows = [
        (
            f"{link['startLine']}:{link['startCol']}",
            link["linkType"],
            link["targetRef"],
            link.get("linkText"),
            link.get("resolvedUri") or "",
        )
        for link in result["links"]
    ]
    return header + md_table(("Line:Col", "Type", "Target", "Text", "Resolves to"), rows)


LINKS = View(terminal=links_terminal, formats={MD: links_markdown})


def backlinks_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    meta = result["meta"]
    backlinks = result["backlinks"]
    target = meta.get("uri") or meta["docid"]
    if meta.get("semantic"):
        kind = meta.get("edgeTypeFilter") or meta.get("relationFilter")
        lines = [f"{plural(len(backlinks), kind + ' edge')} to {target}"]
        return "\n".join(lines + [_edge(link, "source") for link in backlinks])
    lines = [f"{plural(len(backlinks), 'backlink')} to {target}"]
    for link in backlinks:
        title = f"  ({link['sourceTitle']})" if link.get("sourceTitle") else ""
        lines.append(f"  {link['sourceUri']}:{link['startLine']}{title}")
    return "\n".join(lines)


def backlinks_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    header = f"# Backlinks to `{result['meta'].get('uri') or result['meta']['docid']}`\n\n"
    if result["meta"].get("semantic"):
        return header + md_table(_EDGE_COLUMNS, _edge_rows(result["backlinks"], "source"))
    rows = [
        (f"`{link['sourceUri']}`", link.get("sourceTitle"), link["startLine"], link.get("linkText"))
        for link in result["backlinks"]
    ]
    return header + md_table(("Source", "Title", "Line", "Text"), rows)


BACKLINKS = View(terminal=backlinks_terminal, formats={MD: backlinks_markdown})


def _node(node: Mapping[str, Any]) -> str:
    return f"{node['uri']}" + (f"  ({node['title']})" if node.get("title") else "")


def graph_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    meta = result["meta"]
    report = result.get("report", {})
    lines = [
        f"{plural(meta['returnedNodes'], 'document')}, {plural(meta['returnedEdges'], 'link')}"
        + (" (truncated: raise --limit / --edge-limit)" if meta.get("truncated") else "")
    ]
    hubs = report.get("hubs", [])
    if hubs:
        lines.append("Most connected:")
        lines.extend(f"  {hub['degree']:>4}  {_node(hub)}" for hub in hubs[:10])
    isolated = report.get("isolated", {})
    if isolated.get("total"):
        lines.append(f"Isolated documents: {isolated['total']}")
    lines.extend(f"warning: {warning}" for warning in meta.get("warnings", ()))
    return "\n".join(lines)


GRAPH = View(terminal=graph_terminal)

_ARROWS = {"out": "->", "in": "<-", "both": "--"}


def graph_query_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    meta = result["meta"]
    by_id = {node["id"]: node for node in result["nodes"]}
    lines = [f"From {_node(result['root'])}: {plural(meta['returnedNodes'], 'document')}"]
    for node in result["nodes"]:
        if node["depth"] > 0:
            lines.append(f"  depth {node['depth']}  {_node(node)}")
    for edge in result.get("edges", ()):
        source = by_id.get(edge.get("source"), {}).get("uri", edge.get("source"))
        target = by_id.get(edge.get("target"), {}).get("uri", edge.get("target"))
        kind = edge.get("edgeType") or edge.get("type") or "link"
        lines.append(f"  {source} -{kind}{_ARROWS['out']} {target}")
    if meta.get("truncated"):
        lines.append("truncated: raise --max-nodes / --max-depth to see more")
    return "\n".join(lines)


GRAPH_QUERY = View(terminal=graph_query_terminal)


def impact_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    impacted = result["impacted"]
    root = result["root"]["uri"]
    if not impacted:
        return f"Nothing links to or depends on {root}"
    verb = "depends" if len(impacted) == 1 else "depend"
    lines = [f"{plural(len(impacted), 'document')} {verb} on {root}"]
    for entry in impacted:
        path = " ".join(
            f"-{step['edgeType']}-> {step['target']['uri']}" for step in entry["evidencePath"]
        )
        lines.append(f"  depth {entry['depth']}  {_node(entry['document'])}  {path}")
    meta = result["meta"]
    if meta.get("truncated"):
        lines.append("truncated: raise --max-depth / --max-nodes / --max-edges to see more")
    lines.extend(f"warning: {warning}" for warning in meta.get("warnings", ()))
    return "\n".join(lines)


IMPACT = View(terminal=impact_terminal)

__all__ = ["BACKLINKS", "GRAPH", "GRAPH_QUERY", "IMPACT", "LINKS", "TAGS", "TAG_CHANGE"]
