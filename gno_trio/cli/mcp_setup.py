"""``mcp install``, ``mcp uninstall`` and ``mcp status``: gno-trio in an MCP client's config.

The entry written starts gno-trio by absolute path (the ``gno-trio``
script next to this interpreter, else the interpreter with ``-m
gno_trio``), with the index, the configuration file and the data and cache
folders pinned: a GUI client started outside this shell, with another
``PATH`` and no ``GNO_*`` variables, still opens the same index.
``--tool-profile`` and ``--enable-write`` are carried into the entry's
arguments. Other servers in the file, comments and layout are kept; the
previous file is saved as ``<name>.bak``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from gno_trio.cli import render
from gno_trio.cli.clients.configfile import ConfigFile, replace_config
from gno_trio.cli.clients.targets import (
    PROJECT,
    TARGETS,
    USER,
    Launch,
    Places,
    Target,
    config_path,
    launch_of,
    stdio_entry,
)
from gno_trio.cli.common import EXIT_OK, command_line
from gno_trio.cli.render.health import MCP_INSTALL, MCP_STATUS, MCP_UNINSTALL
from gno_trio.engine import locate
from gno_trio.errors import GnoError
from gno_trio.server.registry import parse_profile

DEFAULT_TARGET = "claude-desktop"


def gno_command() -> list[str]:
    """The absolute command that starts this gno-trio: its console script, else ``python -P -m``.

    Clients start it in whatever folder is open (a cloned repository), and
    ``python -m`` would put that folder first on ``sys.path``; ``-P`` keeps
    it off, so no module lying there is imported in place of the standard
    library's.
    """
    executable = Path(os.path.abspath(sys.executable))
    script = executable.parent / ("gno-trio.exe" if os.name == "nt" else "gno-trio")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(executable), "-P", "-m", "gno_trio"]


def launch_for(args: argparse.Namespace) -> Launch:
    """How a client should start ``gno-trio mcp`` on the index this command line names."""
    config = Path(args.config).expanduser() if args.config else None
    location = locate(index_name=args.index, config_path=config)
    command, *prefix = gno_command()
    mcp_args = [
        *prefix,
        "--index",
        location.index_name,
        "--config",
        os.path.abspath(location.config_path),
        "mcp",
    ]
    if args.tool_profile is not None:
        mcp_args += ["--tool-profile", parse_profile(args.tool_profile)]
    if args.enable_write:
        mcp_args.append("--enable-write")
    env = {
        "GNO_DATA_DIR": os.path.abspath(location.dirs.data),
        "GNO_CACHE_DIR": os.path.abspath(location.dirs.cache),
    }
    if not location.db_path.exists():
        render.note(
            f"note: index {location.index_name} is not initialized yet; "
            f"run `{command_line(args, 'init')}` before starting the client"
        )
    return Launch(command, tuple(mcp_args), env)


def _where(args: argparse.Namespace) -> tuple[Target, str, Path]:
    target = TARGETS[args.target]
    scope = args.scope or target.default_scope
    if scope not in target.scopes:
        raise GnoError(
            "VALIDATION",
            f"{target.display} has no {scope} scope (it reads "
            f"{config_path(target, target.default_scope, Places.current())})",
        )
    return target, scope, config_path(target, scope, Places.current())


def cmd_install(args: argparse.Namespace) -> int:
    target, scope, path = _where(args)
    launch = launch_for(args)
    found = ConfigFile.read(target, path)
    existing = found.entry()
    if existing is not None and not args.force:
        raise GnoError(
            "DUPLICATE",
            f"gno is already configured for {target.display} in {path}; add --force to replace it",
        )
    action = "created" if found.text is None else "replaced" if existing is not None else "added"
    entry = stdio_entry(target, launch)
    installed = _apply(args, found, scope, found.with_entry(entry), action)
    installed["serverEntry"] = launch.as_dict()
    # The entry as the client's own file holds it (TOML for Codex), ready to paste.
    installed["entryText"] = ConfigFile(target, found.path, None).with_entry(entry).strip()
    render.emit(args, MCP_INSTALL, {"installed": installed})
    return EXIT_OK


def cmd_uninstall(args: argparse.Namespace) -> int:
    target, scope, path = _where(args)
    found = ConfigFile.read(target, path)
    text = found.without_entry()
    uninstalled = _apply(args, found, scope, text, "not_found" if text is None else "removed")
    render.emit(args, MCP_UNINSTALL, {"uninstalled": uninstalled})
    return EXIT_OK


def _apply(
    args: argparse.Namespace, found: ConfigFile, scope: str, text: str | None, action: str
) -> dict[str, Any]:
    """Write ``text`` (unless ``--dry-run`` or None) and describe what was done."""
    done: dict[str, Any] = {
        "target": found.target.name,
        "scope": scope,
        "configPath": str(found.path),
        "action": action,
    }
    if text is None:
        return done
    if args.dry_run:
        done["dryRun"] = True
        return done
    backup = replace_config(found.path, text, found.text)
    if backup is not None:
        done["backupPath"] = str(backup)
    return done


def cmd_status(args: argparse.Namespace) -> int:
    places = Places.current()
    chosen = list(TARGETS.values()) if args.target == "all" else [TARGETS[args.target]]
    rows: list[dict[str, Any]] = []
    for target in chosen:
        seen: set[Path] = set()
        for scope in target.scopes:
            if args.scope not in ("all", scope):
                continue
            path = config_path(target, scope, places)
            if path in seen:
                continue
            seen.add(path)
            row: dict[str, Any] = {
                "target": target.name,
                "scope": scope,
                "configPath": str(path),
                "configured": False,
            }
            try:
                entry = ConfigFile.read(target, path).entry()
            except GnoError as error:
                row["error"] = error.message
                entry = None
            if entry is not None:
                row["configured"] = True
                launch = launch_of(target, entry)
                row["serverEntry"] = launch.as_dict() if launch is not None else entry
            rows.append(row)
    summary = {"configured": sum(1 for r in rows if r["configured"]), "total": len(rows)}
    render.emit(args, MCP_STATUS, {"targets": rows, "summary": summary})
    return EXIT_OK


def _scope_option(p: argparse.ArgumentParser, *, allow_all: bool) -> None:
    choices = (USER, PROJECT, "all") if allow_all else (USER, PROJECT)
    p.add_argument(
        "--scope",
        choices=choices,
        default="all" if allow_all else None,
        help="user (your home) or project (this folder); default: "
        + ("all" if allow_all else "the client's usual one"),
    )


def add_actions(mcp: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """``install``, ``uninstall`` and ``status`` under ``gno-trio mcp``."""
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", parser_class=type(mcp))
    names = sorted(TARGETS)
    p = actions.add_parser("install", parents=[common], help="add gno-trio to an MCP client")
    p.add_argument(
        "-t",
        "--target",
        choices=names,
        default=DEFAULT_TARGET,
        help=f"the client (default {DEFAULT_TARGET})",
    )
    _scope_option(p, allow_all=False)
    p.add_argument("--force", action="store_true", help="replace an existing gno entry")
    p.add_argument(
        "--dry-run", action="store_true", help="show what would be written; write nothing"
    )
    p.add_argument(
        "--tool-profile", help="tools the client sees: core or full (default: gno-trio's, full)"
    )
    p.add_argument("--enable-write", action="store_true", help="let the client use the write tools")
    p.set_defaults(handler=cmd_install)

    p = actions.add_parser("uninstall", parents=[common], help="remove gno-trio from a client")
    p.add_argument("-t", "--target", choices=names, default=DEFAULT_TARGET, help="the client")
    _scope_option(p, allow_all=False)
    p.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    p.set_defaults(handler=cmd_uninstall)

    p = actions.add_parser("status", parents=[common], help="which clients have gno-trio set up")
    p.add_argument(
        "-t", "--target", choices=[*names, "all"], default="all", help="one client (default all)"
    )
    _scope_option(p, allow_all=True)
    p.set_defaults(handler=cmd_status)


__all__ = ["add_actions", "gno_command", "launch_for"]
