"""gno-trio: a local-first knowledge engine served over the Model Context Protocol."""

from importlib import metadata as _metadata


def _package_version() -> str:
    """The installed distribution's version: ``pyproject.toml`` is its one home.

    A source tree that was never installed has no distribution metadata; it
    reports a PEP 440 local version that says so instead of a made-up number.
    """
    try:
        return _metadata.version("gno-trio")
    except _metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _package_version()
SERVER_NAME = "gno"
