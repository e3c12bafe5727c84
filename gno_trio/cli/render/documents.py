"""Documents read back (``get``, ``multi-get``) and listed (``ls``) in every format."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from gno_trio.cli.render import FILES, MD, View
from gno_trio.cli.render.primitives import files_line, md_fence, md_table


def _language(document: Mapping[str, Any]) -> str:
    ext = str(document.get("source", {}).get("ext") or "").lstrip(".")
    return "markdown" if ext in ("md", "markdown") else ext


def _lines_label(document: Mapping[str, Any]) -> str:
    total = document.get("totalLines")
    returned = document.get("returnedLines")
    if returned:
        return f"{returned['start']}-{returned['end']} of {total}"
    return f"{total}"


def get_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    # The text as stored: `gno-trio get ref > file` reproduces a whole
    # document byte for byte (emit adds a newline only when one is missing).
    return str(result["content"])


def get_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = [f"# {result.get('title') or result['uri']}", ""]
    lines.append(f"- **URI:** `{result['uri']}`")
    lines.append(f"- **Docid:** `{result['docid']}`")
    lines.append(f"- **Lines:** {_lines_label(result)}")
    source = result.get("source", {})
    if source.get("absPath"):
        lines.append(f"- **Path:** `{source['absPath']}`")
    if getattr(args, "source", False):
        lines += [f"- **{label}:** {value}" for label, value in _source_fields(result)[1:]]
    lines += ["", md_fence(str(result["content"]), _language(result))]
    return "\n".join(lines)


def _source_fields(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``get --source``: what the index knows of the file behind a document, as labelled lines."""
    source = result.get("source", {})
    conversion = result.get("conversion", {})
    fields = [
        ("Path", source.get("absPath")),
        ("Type", f"{source.get('mime')} ({source.get('ext')})" if source.get("mime") else None),
        ("Size", f"{source['sizeBytes']} bytes" if "sizeBytes" in source else None),
        ("Modified", source.get("modifiedAt")),
        ("Source hash", source.get("sourceHash")),
        ("Converter", _converter(conversion)),
        ("Text hash", conversion.get("mirrorHash")),
    ]
    return [(label, str(value)) for label, value in fields if value]


def _converter(conversion: Mapping[str, Any]) -> str | None:
    if not conversion.get("converterId"):
        return None
    version = conversion.get("converterVersion")
    return f"{conversion['converterId']} {version}" if version else str(conversion["converterId"])


def source_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    """The source block ``get --source`` prints before the text, ending in a blank line."""
    lines = [f"{label}: {value}" for label, value in _source_fields(result)]
    return "\n".join([f"URI: {result['uri']} {result['docid']}", *lines, ""]) + "\n"


DOCUMENT = View(terminal=get_terminal, formats={MD: get_markdown})
SOURCE = View(terminal=source_terminal, formats={})


def multi_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    blocks = []
    for doc in result["documents"]:
        flag = " (truncated)" if doc.get("truncated") else ""
        blocks.append(f"==> {doc['uri']} {doc['docid']}{flag}\n{doc['content']}")
    return "\n".join(blocks)


def multi_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    sections = []
    for doc in result["documents"]:
        flag = " (truncated)" if doc.get("truncated") else ""
        sections.append(
            f"## {doc.get('title') or doc['uri']}\n\n- **URI:** `{doc['uri']}`{flag}\n\n"
            + md_fence(str(doc["content"]), _language(doc))
        )
    return "\n\n".join(sections)


def multi_files(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return "\n".join(files_line(d["docid"], None, d["uri"]) for d in result["documents"])


DOCUMENTS = View(terminal=multi_terminal, formats={MD: multi_markdown, FILES: multi_files})


def ls_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return "\n".join(f"{doc['docid']}  {doc['uri']}" for doc in result["documents"])


def ls_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    rows = [(d["docid"], f"`{d['uri']}`", d.get("title")) for d in result["documents"]]
    return md_table(("Docid", "URI", "Title"), rows)


def ls_files(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return "\n".join(files_line(d["docid"], None, d["uri"]) for d in result["documents"])


LISTING = View(terminal=ls_terminal, formats={MD: ls_markdown, FILES: ls_files})


def changes_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = []
    for change in result["changes"]:
        snap = change["current"] or change["previous"] or {}
        lines.append(
            f"{change['observedAt']}  {change['kind']:<10} {snap.get('uri', '')}  {change['id']}"
        )
    if not lines:
        lines.append("No changes in this page")
    page = result["page"]
    lines.append(f"next: {page['nextCursor'] or page['latestCursor']}")
    return "\n".join(lines)


CHANGES = View(terminal=changes_terminal)


def _delta_lines(delta: Mapping[str, Any]) -> list[str]:
    lines = []
    for key, label in (("headings", "heading"), ("links", "link"), ("typedEdges", "relation")):
        lines += [f"  + {label}: {item}" for item in delta[key]["added"]]
        lines += [f"  - {label}: {item}" for item in delta[key]["removed"]]
    for sign, side in (("+", "added"), ("-", "removed"), ("~", "changed")):
        lines += [f"  {sign} date: {item}" for item in delta["dates"][side]]
    if delta.get("truncated"):
        lines.append("  (earlier structure was not retained: the delta is partial)")
    return lines


def diff_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    uri = result["document"]["uri"]
    change = result["change"]
    if change is None:
        return f"No retained change for {uri}"
    if result["status"] == "expired":
        return f"Change {change['id']} of {uri} has expired from the journal"
    lines = [f"{change['kind']} of {uri} at {change['observedAt']} ({change['id']})"]
    lines += _delta_lines(change["structureDelta"]) or ["  no structural difference"]
    lines.append(f"Old text is not kept; read the current one with: gno-trio get {uri}")
    return "\n".join(lines)


DIFF = View(terminal=diff_terminal)

__all__ = ["CHANGES", "DIFF", "DOCUMENT", "DOCUMENTS", "LISTING", "SOURCE"]
