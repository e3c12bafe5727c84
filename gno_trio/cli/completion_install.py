"""``completion install [--shell SHELL]``: put the completion script where the shell loads it.

As GNO does it: bash and zsh get the script in their start-up file
(``~/.bashrc``, ``~/.bash_profile`` on macOS, ``~/.zshrc``), fish gets its
own completions file (``~/.config/fish/completions/gno-trio.fish``). The
script sits between two marker lines, so installing again replaces it in
place (after an upgrade adds commands) instead of appending a second copy,
and everything else in the file is kept byte for byte. A start-up file that
is a symbolic link (dotfile managers) is edited where it points; the old
file is kept next to it as a backup.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Final

from gno_trio.cli.clients.configfile import replace_config
from gno_trio.config.environment import XDG_CONFIG_HOME, environment, variable
from gno_trio.errors import GnoError

BEGIN: Final = "# >>> gno-trio completion >>>"
END: Final = "# <<< gno-trio completion <<<"


def detect_shell(environ: dict[str, str] | None = None) -> str:
    """The user's shell from ``$SHELL`` (``VALIDATION`` when it is none of bash, zsh, fish)."""
    env = environment() if environ is None else environ
    name = Path(env.get("SHELL", "")).name
    if name in ("bash", "zsh", "fish"):
        return name
    shown = f"$SHELL is {env['SHELL']!r}" if env.get("SHELL") else "$SHELL is not set"
    raise GnoError("VALIDATION", f"Cannot tell your shell ({shown}); pass --shell bash|zsh|fish")


def target_file(shell: str) -> Path:
    """Where ``shell`` loads the completion from."""
    home = Path.home()
    if shell == "fish":
        config = variable(XDG_CONFIG_HOME) or str(home / ".config")
        return Path(config) / "fish" / "completions" / "gno-trio.fish"
    if shell == "zsh":
        return home / ".zshrc"
    return home / (".bash_profile" if sys.platform == "darwin" else ".bashrc")


def _with_block(text: str, script: str) -> str:
    """``text`` with the marked completion block replaced, or appended when absent."""
    block = f"{BEGIN}\n{script.rstrip()}\n{END}\n"
    start = text.find(BEGIN)
    end = text.find(END, start) if start >= 0 else -1
    if start >= 0 and end >= 0:
        return text[:start] + block + text[end + len(END) :].removeprefix("\n")
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text else "") + block


def install(shell: str, script: str) -> dict[str, Any]:
    """Install ``script`` for ``shell``; the action taken: installed, updated or unchanged."""
    path = target_file(shell)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        previous: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        previous = None
    except (OSError, UnicodeDecodeError) as exc:
        raise GnoError("RUNTIME", f"Cannot read {path}: {exc}") from exc
    text = script if shell == "fish" else _with_block(previous or "", script)
    result: dict[str, Any] = {"shell": shell, "path": str(path)}
    if text == previous:
        return {**result, "action": "unchanged", "backupPath": None}
    backup = replace_config(path, text, previous)
    fresh = previous is None or (shell != "fish" and BEGIN not in previous)
    action = "installed" if fresh else "updated"
    return {**result, "action": action, "backupPath": str(backup) if backup else None}


def reload_hint(result: dict[str, Any]) -> str:
    if result["shell"] == "fish":
        return "New fish sessions complete gno-trio."
    return f"Open a new shell, or run: source {result['path']}"


__all__ = ["detect_shell", "install", "reload_hint", "target_file"]
