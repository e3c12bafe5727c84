"""The process environment: the one module that reads or sets it.

Every variable gno-trio itself consults is named here, so this file is the
list of them. Values are read when asked for, never cached at import: a
variable set after start-up (a test, a parent process) is seen. What a value
means (a number of milliseconds, a path) is the business of the module that
uses it; a module that needs the whole environment (resolving directories,
building a child process's environment) takes :func:`environment`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Final

CONFIG_DIR: Final = "GNO_CONFIG_DIR"
DATA_DIR: Final = "GNO_DATA_DIR"
CACHE_DIR: Final = "GNO_CACHE_DIR"
"""Where the config, the index databases and the caches live (see :mod:`.dirs`)."""
WRITE_LOCK_WAIT_MS: Final = "GNO_WRITE_LOCK_WAIT_MS"
"""How long a writer waits for the write lease, in milliseconds."""
EMBED_THREADS: Final = "GNO_EMBED_THREADS"
"""Threads the bundled embedding model encodes with (1-64)."""
STORE: Final = "GNO_STORE"
"""The team store's URL (``postgresql://...``) when a command names none."""
MCP_ENABLE_WRITE: Final = "GNO_MCP_ENABLE_WRITE"
"""``1``: ``gno-trio mcp`` offers the write tools."""
MEMORY_CALLER: Final = "GNO_MEMORY_CALLER"
MEMORY_SESSION: Final = "GNO_MEMORY_SESSION"
"""Who the memory commands record as the caller and the session."""
XDG_CONFIG_HOME: Final = "XDG_CONFIG_HOME"
SHELL: Final = "SHELL"


def environment() -> Mapping[str, str]:
    """The live process environment."""
    return os.environ


def variable(name: str) -> str | None:
    """The value of ``name``, or ``None`` when it is not set."""
    return os.environ.get(name)


def flag(name: str) -> bool:
    """Whether ``name`` is set to ``1``."""
    return os.environ.get(name) == "1"


@contextlib.contextmanager
def variable_set(name: str, value: str) -> Iterator[None]:
    """``name=value`` for the duration of the block, then as it was.

    For a child process that inherits the environment at exec; the caller
    holds whatever lock keeps two such blocks from interleaving.
    """
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


__all__ = [
    "CACHE_DIR",
    "CONFIG_DIR",
    "DATA_DIR",
    "EMBED_THREADS",
    "MCP_ENABLE_WRITE",
    "MEMORY_CALLER",
    "MEMORY_SESSION",
    "SHELL",
    "STORE",
    "WRITE_LOCK_WAIT_MS",
    "XDG_CONFIG_HOME",
    "environment",
    "flag",
    "variable",
    "variable_set",
]
