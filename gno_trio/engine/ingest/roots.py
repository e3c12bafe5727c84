"""Rules for collection names and roots.

A collection root must be a real directory, and never one of the places
whose indexing would sweep up a whole system or a person's secrets: the
filesystem root, the home directory itself, system folders, and credential
folders. Descendants of those are fine (``~/notes`` is the common case).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from gno_trio.errors import GnoError

_SYSTEM_ROOTS = (
    "/",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/var",
    "/System",
    "/Library",
    "/proc",
    "/sys",
    "/dev",
    "/boot",
)
_HOME_RELATIVE = ("", ".config", ".local", ".ssh", ".gnupg", ".aws")


def forbidden_roots(home: Path | None = None) -> frozenset[Path]:
    home = home if home is not None else Path(os.path.expanduser("~"))
    roots = {Path(p) for p in _SYSTEM_ROOTS}
    for rel in _HOME_RELATIVE:
        roots.add((home / rel) if rel else home)
    resolved = set()
    for root in roots:
        resolved.add(root)
        with contextlib.suppress(OSError):
            resolved.add(root.resolve())
    return frozenset(resolved)


def validate_root(raw: str | os.PathLike[str], *, home: Path | None = None) -> Path:
    """Resolve a collection root and refuse nonexistent or forbidden ones."""
    text = os.fspath(raw)
    if not text.strip():
        raise GnoError("INVALID_PATH", "Collection path is empty")
    if "\x00" in text:
        raise GnoError("INVALID_PATH", "Collection path contains a NUL byte")
    path = Path(os.path.expanduser(text))
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise GnoError("PATH_NOT_FOUND", f"Collection path does not exist: {text}") from exc
    if not resolved.is_dir():
        raise GnoError("INVALID_PATH", f"Collection path is not a directory: {text}")
    if resolved in forbidden_roots(home):
        raise GnoError(
            "FORBIDDEN_ROOT",
            f"Refusing to index {resolved}: system, home and credential folders cannot be "
            "collection roots (choose a folder inside them)",
        )
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise GnoError("INVALID_PATH", f"Collection path is not readable: {text}")
    return resolved
