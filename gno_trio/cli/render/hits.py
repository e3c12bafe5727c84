"""Ranked results (``search``, ``query`` and any other hit list) in every format.

A result is a ``search-results@1.0`` object: ``results`` (each with docid,
score, uri, snippet, optional title and line) and ``meta`` (at least the
query). The snippet is shown as the engine gives it, highlighting removed
outside Markdown; with ``--line-numbers`` the command has already numbered
it, so it is printed line by line instead of folded into one.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from gno_trio.cli.render import CSV, FILES, MD, XML, View
from gno_trio.cli.render.primitives import (
    csv_text,
    files_line,
    md_quote,
    md_table,
    one_line,
    plural,
    quoted,
    unmarked,
    xml_element,
    xml_text,
)

SNIPPET_CHARS = 240
_MODE_LABELS = {"vector": "vector search", "hybrid": "hybrid search"}


def _anchor(hit: Mapping[str, Any]) -> str:
    return f"{hit['uri']}:{hit['line']}" if "line" in hit else str(hit["uri"])


def _multiline(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "line_numbers", False) or getattr(args, "full", False))


def _heading(result: Mapping[str, Any]) -> str:
    hits = result["results"]
    query = quoted(str(result["meta"].get("query", "")))
    label = _MODE_LABELS.get(str(result["meta"].get("mode")))
    suffix = f" ({label})" if label else ""
    if not hits:
        return f"No results for {query}{suffix}"
    return f"Found {plural(len(hits), 'result')} for {query}{suffix}"


def terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = [_heading(result)]
    for hit in result["results"]:
        lines.append("")
        lines.append(f"{hit['docid']}  {_anchor(hit)}  ({hit['score']:.3f})")
        if hit.get("title"):
            lines.append(f"  {hit['title']}")
        snippet = unmarked(str(hit.get("snippet") or ""))
        if _multiline(args):
            lines.extend(f"  {line}" for line in snippet.rstrip("\n").split("\n") if snippet)
        elif snippet.strip():
            lines.append(f"  {one_line(snippet, SNIPPET_CHARS)}")
    return "\n".join(lines)


def markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = [f"# {_heading(result)}"]
    for rank, hit in enumerate(result["results"], 1):
        title = hit.get("title") or hit["uri"]
        lines += ["", f"## {rank}. {title}", ""]
        lines.append(f"- **URI:** `{_anchor(hit)}`")
        lines.append(f"- **Docid:** `{hit['docid']}`")
        lines.append(f"- **Score:** {hit['score']:.3f}")
        snippet = str(hit.get("snippet") or "")
        if snippet.strip():
            shown = snippet if _multiline(args) else one_line(snippet, SNIPPET_CHARS * 2)
            highlighted = shown.replace("<mark>", "**").replace("</mark>", "**")
            lines += ["", md_quote(highlighted.rstrip("\n"))]
    return "\n".join(lines)


def csv_rows(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    header = ("docid", "score", "uri", "title", "line", "snippet")
    rows = (
        (
            hit["docid"],
            f"{hit['score']:.4f}",
            hit["uri"],
            hit.get("title"),
            hit.get("line"),
            unmarked(str(hit.get("snippet") or ""))
            if _multiline(args)
            else one_line(unmarked(str(hit.get("snippet") or ""))),
        )
        for hit in result["results"]
    )
    return csv_text(header, rows)


def files(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return "\n".join(
        files_line(hit["docid"], hit["score"], hit["uri"]) for hit in result["results"]
    )


def xml(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    meta = result["meta"]
    children = [
        xml_element(
            "result",
            {
                "rank": rank,
                "docid": hit["docid"],
                "score": f"{hit['score']:.4f}",
                "uri": hit["uri"],
                "line": hit.get("line"),
            },
            [xml_text("title", hit.get("title")), xml_text("snippet", hit.get("snippet") or "")],
        )
        for rank, hit in enumerate(result["results"], 1)
    ]
    root = xml_element(
        "results",
        {"query": meta.get("query"), "mode": meta.get("mode"), "total": len(result["results"])},
        children,
    )
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + root


RESULTS = View(terminal=terminal, formats={MD: markdown, CSV: csv_rows, FILES: files, XML: xml})
"""The view of a ``search-results@1.0`` object."""


def diagnosis_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    target = result["target"]
    lines = [
        f"{target.get('uri') or target['ref']}: {target['status']} for {quoted(result['query'])}"
    ]
    for stage in result.get("stages", ()):
        rank = f"rank {stage['rank']}" if stage.get("rank") else "-"
        lines.append(f"  {stage['id']:<7} {stage['status']:<8} {rank:<8} {stage.get('reason', '')}")
    return "\n".join(lines)


DIAGNOSIS = View(terminal=diagnosis_terminal)
"""The view of a ``query-diagnose`` object (``query diagnose``)."""

FORMATS = (FILES, CSV, MD, XML)
"""The formats a ranked result list supports besides JSON (GNO's support matrix)."""


def similar_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    similar = result["similar"]
    source = result["meta"].get("uri") or result["meta"]["docid"]
    if not similar:
        return f"No documents similar to {source} above {result['meta']['threshold']}"
    lines = [f"{plural(len(similar), 'document')} similar to {source}"]
    for item in similar:
        title = f"  ({item['title']})" if item.get("title") else ""
        lines.append(f"  {item['score']:.3f}  {item['uri']}{title}")
    return "\n".join(lines)


def similar_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    source = result["meta"].get("uri") or result["meta"]["docid"]
    rows = [
        (f"{item['score']:.3f}", f"`{item['uri']}`", item.get("title"), item["docid"])
        for item in result["similar"]
    ]
    return f"# Similar to `{source}`\n\n" + md_table(("Score", "Document", "Title", "Docid"), rows)


SIMILAR = View(terminal=similar_terminal, formats={MD: similar_markdown})

__all__ = ["DIAGNOSIS", "FORMATS", "RESULTS", "SIMILAR"]
