"""gno-trio: a local-first knowledge engine served over the Model Context Protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    __version__: str

SERVER_NAME = "gno"


def _package_version() -> str:
    """The installed distribution's version: ``pyproject.toml`` is its one home.

    A source tree that was never installed has no distribution metadata; it
    reports a PEP 440 local version that says so instead of a made-up number.
    """
    from importlib import metadata

    try:
        return metadata.version("gno-trio")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> str:
    """``__version__``, looked up on first use (PEP 562).

    Reading distribution metadata imports ``importlib.metadata`` and scans
    the import path; a command that never prints the version should not pay
    for that at start-up.
    """
    if name == "__version__":
        version = globals()["__version__"] = _package_version()
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
