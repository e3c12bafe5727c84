"""Index and set-up reports (``status``, ``collection list``, ``doctor``, ``mcp status``)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from gno_trio.cli.render import MD, View
from gno_trio.cli.render.primitives import md_table, plural

_STATUS_MARKS = {"ok": "✓", "warn": "!", "error": "✗"}


def status_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = [
        f"Index: {result['indexName']} ({result['dbPath']})",
        f"Documents: {result['totalDocuments']}  Chunks: {result['totalChunks']}",
    ]
    for c in result["collections"]:
        synced = c["lastSyncedAt"] or "never"
        lines.append(
            f"  {c['name']}: {plural(c['documentCount'], 'doc')}, "
            f"{plural(c['chunkCount'], 'chunk')}, {plural(c['errorCount'], 'error')}, "
            f"last sync {synced}  ({c['path']})"
        )
        lines.extend(f"    ! {e['relPath']}: {e['code']}: {e['message']}" for e in c["errors"][:10])
        lines.extend(
            f"    ? {w['relPath']}: {w['code']}: {w['message']}" for w in c["warnings"][:10]
        )
    return "\n".join(lines)


def status_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = [
        f"# Index {result['indexName']}",
        "",
        f"- **Database:** `{result['dbPath']}`",
        f"- **Documents:** {result['totalDocuments']}",
        f"- **Chunks:** {result['totalChunks']}",
        f"- **Healthy:** {'yes' if result.get('healthy') else 'no'}",
        "",
    ]
    rows = [
        (c["name"], c["documentCount"], c["chunkCount"], c["errorCount"], c["lastSyncedAt"] or "")
        for c in result["collections"]
    ]
    lines.append(md_table(("Collection", "Documents", "Chunks", "Errors", "Last sync"), rows))
    return "\n".join(lines)


STATUS = View(terminal=status_terminal, formats={MD: status_markdown})


def collections_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    collections = result["collections"]
    if not collections:
        return "No collections. Add one with: gno-trio collection add <path> --name <name>"
    return "\n".join(f"{c['name']}\t{c['path']}\t{c['pattern']}" for c in collections)


def collections_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    rows = [(c["name"], f"`{c['path']}`", c["pattern"]) for c in result["collections"]]
    return md_table(("Collection", "Path", "Pattern"), rows)


COLLECTIONS = View(terminal=collections_terminal, formats={MD: collections_markdown})


def doctor_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = []
    for check in result["checks"]:
        lines.append(f"{_STATUS_MARKS[check['status']]} {check['name']}: {check['message']}")
        lines.extend(f"    {detail}" for detail in check.get("details", ()))
    verdict = "healthy" if result["healthy"] else "problems found"
    warnings = sum(1 for check in result["checks"] if check["status"] == "warn")
    errors = sum(1 for check in result["checks"] if check["status"] == "error")
    lines.append("")
    lines.append(f"{verdict}: {plural(errors, 'error')}, {plural(warnings, 'warning')}")
    return "\n".join(lines)


def doctor_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    rows = [
        (c["name"], c["status"], c["message"], "; ".join(c.get("details", ())))
        for c in result["checks"]
    ]
    verdict = "healthy" if result["healthy"] else "problems found"
    return f"# gno-trio doctor: {verdict}\n\n" + md_table(
        ("Check", "Status", "Message", "Fix"), rows
    )


DOCTOR = View(terminal=doctor_terminal, formats={MD: doctor_markdown})

__all__ = ["COLLECTIONS", "DOCTOR", "STATUS"]
