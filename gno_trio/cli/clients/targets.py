"""The MCP clients gno-trio sets itself up in: where each keeps its servers, and in what shape.

Locations follow GNO's table (spec/cli.md, ``gno mcp install``), plus VS
Code. ``~/.config`` means ``$XDG_CONFIG_HOME`` when that is set; on Windows
the application folders live under ``%APPDATA%``. Every client keeps its
servers under one key of a JSON file, except Codex (a TOML table):

=============== ================ ======================================
client          key              one server
=============== ================ ======================================
claude-desktop  ``mcpServers``   ``{command, args, env}``
claude-code     ``mcpServers``   ``{type: stdio, command, args, env}``
cursor          ``mcpServers``   ``{command, args, env}``
windsurf        ``mcpServers``   ``{command, args, env}``
vscode          ``servers``      ``{type: stdio, command, args, env}``
zed             ``context_servers`` ``{source: custom, command, args, env}``
opencode        ``mcp``          ``{type: local, command: [...], enabled, environment}``
codex           ``mcp_servers``  ``[mcp_servers.gno]`` + ``[mcp_servers.gno.env]``
=============== ================ ======================================

For the HTTP gateway the same keys hold ``url`` entries (Windsurf spells it
``serverUrl``; Claude Desktop reaches a URL only through ``mcp-remote``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gno_trio.config.environment import environment

SERVER_NAME: Final = "gno"
USER: Final = "user"
PROJECT: Final = "project"


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    display: str
    scopes: tuple[str, ...]
    key: str
    style: str  # how one server entry is shaped (see the module table)
    toml: bool = False

    @property
    def default_scope(self) -> str:
        return USER if USER in self.scopes else self.scopes[0]


TARGETS: Final = {
    t.name: t
    for t in (
        Target("claude-desktop", "Claude Desktop", (USER,), "mcpServers", "standard"),
        Target("claude-code", "Claude Code", (USER, PROJECT), "mcpServers", "typed"),
        Target("codex", "Codex", (USER, PROJECT), "mcp_servers", "codex", toml=True),
        Target("cursor", "Cursor", (USER, PROJECT), "mcpServers", "standard"),
        Target("zed", "Zed", (USER,), "context_servers", "zed"),
        Target("windsurf", "Windsurf", (USER,), "mcpServers", "windsurf"),
        Target("opencode", "OpenCode", (USER, PROJECT), "mcp", "opencode"),
        Target("vscode", "VS Code", (USER, PROJECT), "servers", "typed"),
    )
}


@dataclass(frozen=True, slots=True)
class Places:
    """Where the home, the working folder and the platform's config folders are."""

    home: Path
    cwd: Path
    env: Mapping[str, str]
    platform: str = sys.platform

    @classmethod
    def current(cls) -> Places:
        return cls(Path.home(), Path.cwd(), dict(environment()))

    def xdg_config(self) -> Path:
        chosen = self.env.get("XDG_CONFIG_HOME", "").strip()
        return Path(chosen) if chosen and Path(chosen).is_absolute() else self.home / ".config"

    def appdata(self) -> Path:
        chosen = self.env.get("APPDATA", "").strip()
        return Path(chosen) if chosen else self.home / "AppData" / "Roaming"

    def app_support(self) -> Path:
        return self.home / "Library" / "Application Support"


def config_path(target: Target, scope: str, places: Places) -> Path:
    """The file ``target`` reads its servers from, for ``scope``."""
    windows = places.platform.startswith("win")
    mac = places.platform == "darwin"
    name = target.name
    if scope == PROJECT:
        relative = {
            "claude-code": ".mcp.json",
            "codex": ".codex/config.toml",
            "cursor": ".cursor/mcp.json",
            "opencode": "opencode.json",
            "vscode": ".vscode/mcp.json",
        }[name]
        return places.cwd / relative
    home = places.home
    if name == "claude-desktop":
        folder = (
            places.appdata() if windows else places.app_support() if mac else places.xdg_config()
        )
        return folder / "Claude" / "claude_desktop_config.json"
    if name == "claude-code":
        return home / ".claude.json"
    if name == "codex":
        return home / ".codex" / "config.toml"
    if name == "cursor":
        return home / ".cursor" / "mcp.json"
    if name == "zed":
        return (
            places.appdata() / "Zed" / "settings.json"
            if windows
            else (places.xdg_config() / "zed" / "settings.json")
        )
    if name == "windsurf":
        return home / ".codeium" / "windsurf" / "mcp_config.json"
    if name == "opencode":
        return places.xdg_config() / "opencode" / "opencode.json"
    if name == "vscode":
        folder = (
            places.appdata() / "Code"
            if windows
            else places.app_support() / "Code"
            if mac
            else places.xdg_config() / "Code"
        )
        return folder / "User" / "mcp.json"
    raise AssertionError(f"no location for {name}")


@dataclass(frozen=True, slots=True)
class Launch:
    """How a client starts gno-trio over stdio: an absolute command, its args and env."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"command": self.command, "args": list(self.args), "env": dict(self.env)}


def stdio_entry(target: Target, launch: Launch) -> dict[str, Any]:
    """The server entry ``target`` expects for a stdio child."""
    env = dict(launch.env)
    if target.style == "opencode":
        entry: dict[str, Any] = {
            "type": "local",
            "command": [launch.command, *launch.args],
            "enabled": True,
        }
        if env:
            entry["environment"] = env
        return entry
    entry = {"command": launch.command, "args": list(launch.args)}
    if env:
        entry["env"] = env
    if target.style == "typed":
        return {"type": "stdio", **entry}
    if target.style == "zed":
        return {"source": "custom", **entry}
    return entry


def launch_of(target: Target, entry: Any) -> Launch | None:
    """The normalized command, args and env a stored entry starts (None if not a stdio one)."""
    if not isinstance(entry, Mapping):
        return None
    raw_env = entry.get("environment" if target.style == "opencode" else "env") or {}
    env = {str(k): str(v) for k, v in raw_env.items()} if isinstance(raw_env, Mapping) else {}
    command = entry.get("command")
    if target.style == "opencode":
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            return Launch(command[0], tuple(command[1:]), env)
        return None
    args = entry.get("args") or []
    if isinstance(command, Mapping):  # Zed's older shape: {"command": {"path", "args", "env"}}
        args, command = command.get("args") or [], command.get("path")
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    return Launch(command, tuple(str(a) for a in args), env)


def http_entry(target: Target, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The server entry ``target`` expects for the Streamable HTTP gateway at ``url``."""
    extra: dict[str, Any] = {"headers": dict(headers)} if headers else {}
    if target.style == "opencode":
        return {"type": "remote", "url": url, "enabled": True, **extra}
    if target.style == "windsurf":
        return {"serverUrl": url, **extra}
    if target.style == "typed":
        return {"type": "http", "url": url, **extra}
    if target.name == "claude-desktop":
        # Its config file starts local processes only; mcp-remote bridges to a URL.
        args = ["-y", "mcp-remote", url]
        for name, value in headers.items():
            args += ["--header", f"{name}: {value}"]
        return {"command": "npx", "args": args}
    if target.style == "codex":
        codex: dict[str, Any] = {"url": url}
        if headers:
            codex["http_headers"] = dict(headers)
        return codex
    return {"url": url, **extra}


__all__ = [
    "PROJECT",
    "SERVER_NAME",
    "TARGETS",
    "USER",
    "Launch",
    "Places",
    "Target",
    "config_path",
    "http_entry",
    "launch_of",
    "stdio_entry",
]
