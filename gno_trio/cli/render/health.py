"""Index and set-up reports (``status``, ``collection list``, ``doctor``, ``mcp status``)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from gno_trio.cli.render import MD, View
from gno_trio.cli.render.primitives import md_table, plural
from gno_trio.cli.render.sync import listed

_STATUS_MARKS = {"ok": "✓", "warn": "!", "error": "✗"}


def status_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = [
        f"Index: {result['indexName']} ({result['dbPath']})",
        f"Documents: {result['totalDocuments']}  Chunks: {result['totalChunks']}",
        _sentence_line(result["background"]["embedding"]["sentenceWindows"]),
        "Health: healthy" if result["healthy"] else "Health: files could not be indexed (below)",
    ]
    for c in result["collections"]:
        synced = c["lastSyncedAt"] or "never"
        skipped = int(c.get("skippedCount", 0))
        lines.append(
            f"  {c['name']}: {plural(c['documentCount'], 'doc')}, "
            f"{plural(c['chunkCount'], 'chunk')}, {plural(c['errorCount'], 'error')}, "
            f"{skipped} skipped, last sync {synced}  ({c['path']})"
        )
        lines += ["    " + ln for ln in listed("!", c["errors"], int(c["errorCount"]), 10)]
        lines.extend(f"    - {s['relPath']}: {s['code']}" for s in c.get("skipped", ())[:10])
        if skipped > 10:
            lines.append(f"    - ... {skipped - 10} more not indexed for their type (--json)")
        lines += ["    " + ln for ln in listed("?", c["warnings"], len(c["warnings"]), 10)]
    lines.extend(_watch_lines(result.get("background", {}).get("watcher", {})))
    return "\n".join(lines)


def _sentence_line(windows: Mapping[str, Any]) -> str:
    """The sentence-window vectors (finer vectors for low-coverage queries) and their disk cost."""
    return f"Sentence windows: {windows['vectors']} vectors, {windows['bytes'] / 1048576:.1f} MiB"


def _watch_lines(watcher: Mapping[str, Any]) -> list[str]:
    """The folder watch, as the resident that watches reported it (none: say who would)."""
    if "pid" not in watcher:
        return ["Watch: no resident follows the folders (serve, daemon and mcp do)"]
    active = ", ".join(watcher["activeCollections"]) or "nothing"
    last = watcher.get("lastSyncAt") or "none yet"
    lines = [
        f"Watch: pid {watcher['pid']} follows {active}; "
        f"{plural(watcher.get('eventsSeen', 0), 'change')} seen, "
        f"{plural(watcher.get('pendingPaths', 0), 'path')} pending, last sync {last}"
    ]
    lines.extend(
        f"  polling {p['collection']}: {p['reason']}" for p in watcher.get("pollingCollections", ())
    )
    lines.extend(f"  ✗ {f['collection']}: {f['reason']}" for f in watcher["failedCollections"])
    lines.extend(
        f"  ! {e['collection']}/{e['relPath']}: {e['code']}: {e['message']}"
        for e in watcher.get("errors", ())[-5:]
    )
    return lines


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


def _launch_lines(entry: Mapping[str, Any]) -> list[str]:
    if "command" not in entry:
        return [f"    Entry: {entry}"]
    lines = [f"    Command: {entry['command']}", f"    Args: {' '.join(entry.get('args', ()))}"]
    lines.extend(f"    Env: {k}={v}" for k, v in dict(entry.get("env") or {}).items())
    return lines


def install_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    done = result["installed"]
    verb = {"created": "Created", "added": "Added gno to", "replaced": "Replaced gno in"}
    head = f"{verb[done['action']]} {done['configPath']} ({done['target']}, {done['scope']} scope)"
    if done.get("dryRun"):
        head = "Dry run, nothing written. Would have: " + head[0].lower() + head[1:]
    lines = [head, *_launch_lines(done["serverEntry"])]
    if done.get("dryRun"):
        lines += ["The entry, as the file would hold it:", "", done["entryText"], ""]
    if done.get("backupPath"):
        lines.append(f"Previous file saved as {done['backupPath']}")
    if not done.get("dryRun"):
        lines.append("Restart the client (or reload its MCP servers) to pick it up.")
    return "\n".join(lines)


MCP_INSTALL = View(terminal=install_terminal)


def uninstall_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    done = result["uninstalled"]
    if done["action"] == "not_found":
        return f"gno is not configured in {done['configPath']}; nothing to remove"
    prefix = "Dry run, nothing written. Would remove" if done.get("dryRun") else "Removed"
    line = f"{prefix} gno from {done['configPath']} ({done['target']}, {done['scope']} scope)"
    if done.get("backupPath"):
        line += f"\nPrevious file saved as {done['backupPath']}"
    return line


MCP_UNINSTALL = View(terminal=uninstall_terminal)


def mcp_status_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    lines = ["MCP client set-up", ""]
    for row in result["targets"]:
        scope = " (project)" if row["scope"] == "project" else ""
        state = "configured" if row["configured"] else "not configured"
        mark = "✓" if row["configured"] else "✗"
        lines.append(f"{mark} {row['target']}{scope}: {state}")
        if row.get("serverEntry"):
            lines.extend(_launch_lines(row["serverEntry"]))
        if row.get("error"):
            lines.append(f"    ! {row['error']}")
        lines.append(f"    Config: {row['configPath']}")
    summary = result["summary"]
    lines.append("")
    lines.append(f"{summary['configured']}/{plural(summary['total'], 'target')} configured")
    return "\n".join(lines)


MCP_STATUS = View(terminal=mcp_status_terminal)


def _model_rows(result: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    embed = result["embed"]
    version = f" {embed['version']}" if embed.get("version") else ""
    state = "available" if embed["cached"] else "not available"
    rows = [("embed", f"{embed['uri']}{version}", state)]
    for role in ("rerank", "expand", "gen"):
        found = result.get(role)
        if not found:
            rows.append((role, "none", "not configured"))
        elif found.get("endpoint"):
            rows.append((role, str(found["uri"]), "endpoint, egress-judged per call"))
        else:
            rows.append((role, str(found["uri"]), "cannot run here (not an HTTP endpoint)"))
    return rows


def models_terminal(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return "\n".join(f"{role + ':':<7} {uri} ({state})" for role, uri, state in _model_rows(result))


def models_markdown(result: Mapping[str, Any], args: argparse.Namespace) -> str:
    return md_table(("Role", "Model", "State"), _model_rows(result))


MODELS = View(terminal=models_terminal, formats={MD: models_markdown})

__all__ = [
    "COLLECTIONS",
    "DOCTOR",
    "MCP_INSTALL",
    "MCP_STATUS",
    "MCP_UNINSTALL",
    "MODELS",
    "STATUS",
]
