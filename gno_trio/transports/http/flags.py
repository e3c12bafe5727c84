"""Command-line flags of ``serve`` and ``daemon``.

Kept apart from the gateway itself so building the CLI parser imports nothing
heavier than argparse.
"""

from __future__ import annotations

import argparse


def add_gateway_arguments(parser: argparse.ArgumentParser, *, daemon: bool) -> None:
    """The gateway flags shared by ``serve`` and ``daemon``."""
    parser.add_argument("--host", help="listen address (default 127.0.0.1, or gateway.host)")
    parser.add_argument(
        "-p", "--port", type=int, help="listen port (default 3000; 0 picks a free one)"
    )
    parser.add_argument("--mcp-token-file", help="bearer token file (created 0600 if missing)")
    parser.add_argument(
        "--mcp-allowed-host", action="append", help="exact Host value to accept (repeatable)"
    )
    parser.add_argument(
        "--mcp-allowed-origin", action="append", help="exact Origin to accept (repeatable)"
    )
    parser.add_argument(
        "--mcp-enable-write", action="store_true", help="allow MCP write tools over HTTP"
    )
    parser.add_argument("--mcp-tool-profile", help="core or full (default full)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes sharing the port (default 1; 2025-era sessions are shared)",
    )
    if daemon:
        parser.add_argument(
            "--no-sync-on-start", action="store_true", help="skip the initial collection sync"
        )


__all__ = ["add_gateway_arguments"]
