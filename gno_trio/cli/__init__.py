"""The ``gno-trio`` command line, one module per command family.

``main`` builds the parser and maps errors to exit codes; ``index`` (init,
collection, update), ``reads`` (search, get, multi-get, ls, status,
changes), ``memory`` (recall, remember), ``capture`` and ``serve`` (mcp,
serve, daemon) hold the commands; ``common`` what they share.
"""

from __future__ import annotations

from gno_trio.cli.main import main as main

__all__ = ["main"]
