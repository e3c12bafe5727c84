"""Rules for collection roots: which folders gno-trio may index and write notes into.

A collection root must be a real, readable directory, and never a place whose
indexing would sweep up a whole system, a person's secrets or gno-trio's own
state:

* system trees and credential folders are refused with everything inside
  them (``/etc``, ``/proc``, ``/sys``, ``/dev``, ``/run``, ``/boot``,
  ``/var/log``, ``~/.ssh``, ``~/.gnupg``, ``~/.aws`` ..., and the tools'
  token stores and browser profiles under ``~/.config``: ``gh``, ``op``,
  ``rclone``, ``google-chrome`` ...);
* a few broad folders are refused as roots themselves, while folders inside
  them are fine (``/``, ``/usr``, ``/var``, the home directory,
  ``~/.config``, ``~/.local``: ``~/notes`` is the common case).

"The home directory" is every one the process can be said to have: the
one ``$HOME`` names, the account database's (``$HOME`` may point elsewhere,
as it does for a service or under ``sudo``), and the superuser's ``/root``;
``~/.config`` is also wherever ``$XDG_CONFIG_HOME`` points. Besides:

* the config, data and cache directories may not be a root, lie inside one,
  or contain one, so no write through a collection (capture, filing) can
  reach ``index.yml``, the index database or the write lease.

Both the path as given and the path after resolving symbolic links are
judged, so ``/proc/self/cwd`` and a link into ``~/.ssh`` are refused alike.
Every surface (CLI, MCP, background jobs) goes through :func:`validate_root`,
with the stable code ``FORBIDDEN_ROOT``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from gno_trio.config import normalize_collection_name as normalize_name
from gno_trio.config.dirs import Dirs
from gno_trio.config.environment import XDG_CONFIG_HOME, variable
from gno_trio.errors import GnoError

# Refused with everything inside them.
_SYSTEM_TREES: Final = (
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/boot",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/var/log",
    "/var/run",
    "/var/lib",
    "/var/cache",
    "/var/spool",
    "/var/mail",
    "/var/db",
    "/var/backups",
    "/private/etc",
    "/private/var/db",
    "/private/var/log",
    "/private/var/root",
    "/private/var/run",
    "/System",
    "/Library/Keychains",
)
_HOME_TREES: Final = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".pki",
    ".mozilla",
    ".terraform.d",
    ".oci",
    "Library/Keychains",
)
# Token stores, password managers and browser profiles in the config home
# (``~/.config`` or ``$XDG_CONFIG_HOME``), refused with everything inside them.
_CONFIG_TREES: Final = (
    "gh",
    "hub",
    "glab-cli",
    "tea",
    "git",
    "gcloud",
    "op",
    "1Password",
    "Bitwarden",
    "Bitwarden CLI",
    "rclone",
    "doctl",
    "hcloud",
    "linode-cli",
    "netlify",
    "configstore",
    "containers",
    "composer",
    "sops",
    "keybase",
    "gopass",
    "google-chrome",
    "chromium",
    "BraveSoftware",
    "microsoft-edge",
    "vivaldi",
    "Slack",
    "discord",
    "Signal",
)
# Refused as roots themselves; folders inside them are fine.
_BROAD_ROOTS: Final = ("/", "/usr", "/var", "/home", "/Users", "/Library", "/opt", "/srv")
_HOME_BROAD: Final = ("", ".config", ".local", ".local/share", ".cache")

FORBIDDEN_CODE: Final = "FORBIDDEN_ROOT"


def _homes(home: Path | None) -> list[Path]:
    """``home`` if given, else every home directory of the process (see the module's notes)."""
    if home is not None:
        return [home]
    homes = [Path(os.path.expanduser("~")), Path("/root")]
    with contextlib.suppress(ImportError, KeyError, AttributeError):
        import pwd  # POSIX only

        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return homes


def _config_homes(home: Path | None) -> list[Path]:
    """Where the tools of each home keep their configuration (``$XDG_CONFIG_HOME`` too)."""
    found = [base / ".config" for base in _homes(home)]
    xdg = variable(XDG_CONFIG_HOME) or ""
    if home is None and os.path.isabs(xdg):
        found.append(Path(xdg))
    return found


def _with_resolved(paths: Iterable[Path]) -> frozenset[Path]:
    """Each path as written and as resolved (``/etc`` is ``/private/etc`` on macOS)."""
    found: set[Path] = set()
    for path in paths:
        found.add(path)
        with contextlib.suppress(OSError, RuntimeError):
            found.add(path.resolve())
    return frozenset(found)


def forbidden_trees(home: Path | None = None) -> frozenset[Path]:
    """Folders refused with everything inside them."""
    return _trees(tuple(_homes(home)), tuple(_config_homes(home)))


def forbidden_roots(home: Path | None = None) -> frozenset[Path]:
    """Folders refused as roots themselves (their descendants are allowed)."""
    return _broad(tuple(_homes(home)), tuple(_config_homes(home)))


@functools.lru_cache(maxsize=8)
def _trees(homes: tuple[Path, ...], config_homes: tuple[Path, ...]) -> frozenset[Path]:
    """Resolved once per set of homes: a sync judges its roots again every time."""
    return _with_resolved(
        [
            *map(Path, _SYSTEM_TREES),
            *(base / rel for base in homes for rel in _HOME_TREES),
            *(base / rel for base in config_homes for rel in _CONFIG_TREES),
        ]
    )


@functools.lru_cache(maxsize=8)
def _broad(homes: tuple[Path, ...], config_homes: tuple[Path, ...]) -> frozenset[Path]:
    return _with_resolved(
        [
            *map(Path, _BROAD_ROOTS),
            *((base / rel) if rel else base for base in homes for rel in _HOME_BROAD),
            *config_homes,
        ]
    )


def _inside(path: Path, tree: Path) -> bool:
    # As ``path.is_relative_to(tree)`` for absolute paths, without its cost per tree.
    here, there = os.fspath(path), os.fspath(tree)
    return here == there or here.startswith(there.rstrip(os.sep) + os.sep)


def _refuse(resolved: Path, why: str) -> GnoError:
    return GnoError(FORBIDDEN_CODE, f"Refusing to index {resolved}: {why}")


def _police(lexical: Path, resolved: Path, home: Path | None, dirs: Dirs | None) -> None:
    for tree in forbidden_trees(home):
        if _inside(lexical, tree) or _inside(resolved, tree):
            raise _refuse(
                resolved,
                f"it lies in {tree}, and system and credential folders cannot be indexed",
            )
    broad = forbidden_roots(home)
    if lexical in broad or resolved in broad:
        raise _refuse(
            resolved,
            "system and home folders cannot be collection roots (choose a folder inside them)",
        )
    if dirs is None:
        return
    for label, own in (("config", dirs.config), ("data", dirs.data), ("cache", dirs.cache)):
        for mine in _with_resolved([own]):
            if _inside(resolved, mine) or _inside(mine, resolved) or _inside(lexical, mine):
                raise _refuse(
                    resolved,
                    f"it is, holds or lies inside gno-trio's {label} directory {own}",
                )


def validate_root(
    raw: str | os.PathLike[str],
    *,
    home: Path | None = None,
    dirs: Dirs | None = None,
    absolute: bool = False,
) -> Path:
    """Resolve a collection root; refuse missing, unreadable or forbidden ones.

    ``dirs`` are the config, data and cache directories of the index the
    root is for; without them only system and credential folders are judged.
    ``absolute`` refuses a relative path: a caller whose working directory is
    not this process's (an MCP client) would name a folder it never meant.
    """
    text = os.fspath(raw)
    if not text.strip():
        raise GnoError("INVALID_PATH", "Collection path is empty")
    if "\x00" in text:
        raise GnoError("INVALID_PATH", "Collection path contains a NUL byte")
    path = Path(os.path.expanduser(text))
    if absolute and not path.is_absolute():
        raise GnoError(
            "INVALID_PATH",
            f"Collection path must be absolute (or start with ~): {text} would be read "
            "against the server's working directory, not yours",
        )
    lexical = Path(os.path.abspath(path))
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise GnoError(
            "PATH_NOT_FOUND",
            f"Collection path does not exist: {text} (create the folder first, for example "
            f"with: mkdir -p {shlex.quote(str(lexical))})",
        ) from exc
    _police(lexical, resolved, home, dirs)
    if not resolved.is_dir():
        raise GnoError("INVALID_PATH", f"Collection path is not a directory: {text}")
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise GnoError("INVALID_PATH", f"Collection path is not readable: {text}")
    return resolved


def checked_root(path: str | os.PathLike[str], dirs: Dirs) -> Path:
    """A configured collection's root, judged again before gno-trio reads or writes in it.

    ``index.yml`` is edited by hand, so a root that was never added through
    gno-trio (or a folder replaced by a link since) is held to the same rules
    at every use.
    """
    return validate_root(path, dirs=dirs)


__all__ = [
    "FORBIDDEN_CODE",
    "checked_root",
    "forbidden_roots",
    "forbidden_trees",
    "normalize_name",
    "validate_root",
]
