"""``doctor``: every check of the index and of the gateway set-up, each with a fix.

The index's checks (config, collections, database, index, lock, embedding
model and backlog) are the engine's (:func:`gno_trio.engine.doctor_checks`,
read-only); the gateway's (token file, port) are added here, from the same
``gateway`` settings ``serve`` would use. The result follows GNO's
``doctor@1.0``; the exit status is 2 when any check is an error (after the
whole report is written), else 0.
"""

from __future__ import annotations

import argparse
import errno
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, command_line
from gno_trio.cli.render.health import DOCTOR
from gno_trio.config import Config, load_config
from gno_trio.engine import doctor_check, doctor_checks, doctor_healthy, locate, store_from
from gno_trio.errors import GnoError, Kind

if TYPE_CHECKING:
    from gno_trio.transports.http.settings import GatewaySettings


def _token_file(settings: GatewaySettings) -> dict[str, Any]:
    path = settings.token_file
    if path is None:
        return doctor_check(
            "token-file", "ok", "No token file configured (a loopback serve needs none)"
        )
    try:
        st = path.stat()
    except FileNotFoundError:
        return doctor_check(
            "token-file",
            "warn",
            f"Token file {path} does not exist yet",
            "It is created (mode 0600) when the gateway starts",
        )
    except OSError as exc:
        return doctor_check("token-file", "error", f"Cannot read {path}: {exc.strerror or exc}")
    if stat.S_IMODE(st.st_mode) & 0o077:
        return doctor_check(
            "token-file",
            "error",
            f"Token file {path} is readable by other users",
            f"Run: chmod 600 {path}",
        )
    if st.st_size == 0:
        return doctor_check(
            "token-file",
            "error",
            f"Token file {path} is empty",
            "Delete it; the gateway writes a new token when it starts",
        )
    return doctor_check("token-file", "ok", f"Token file {path} is private to you")


def _port(settings: GatewaySettings) -> dict[str, Any]:
    host, port = settings.host, settings.port
    if port == 0:
        return doctor_check("port", "ok", "The gateway picks a free port (port 0)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return doctor_check(
                "port",
                "warn",
                f"Port {port} on {host} is in use (a running gateway, or another program)",
                "Stop it, or run: gno-trio serve --port <another port> (0 picks a free one)",
            )
        return doctor_check(
            "port",
            "warn",
            f"Cannot listen on {host}:{port}: {exc.strerror or exc}",
            "Run: gno-trio serve --port <another port>",
        )
    finally:
        probe.close()
    return doctor_check("port", "ok", f"{host}:{port} is free for the gateway")


def _gateway_checks(config_path: Path) -> list[dict[str, Any]]:
    from gno_trio.transports.http.settings import settings_from_config

    try:
        config = load_config(config_path)
    except GnoError:
        config = Config()  # the config check already reports the problem
    try:
        settings = settings_from_config(config.gateway, mode="serve")
    except GnoError as error:
        return [doctor_check("gateway", "error", error.message, f"Fix gateway in {config_path}")]
    return [_token_file(settings), _port(settings)]


def cmd_doctor(args: argparse.Namespace) -> int:
    config = Path(args.config).expanduser() if args.config else None
    location = locate(index_name=args.index, config_path=config)
    store = store_from(getattr(args, "store", None))
    found = doctor_checks(location, init=command_line(args, "init"), store=store)
    checks = [*found["checks"], *_gateway_checks(location.config_path)]
    healthy = doctor_healthy(checks)
    render.emit(
        args, DOCTOR, {"healthy": healthy, "checks": checks, "activation": found["activation"]}
    )
    failed = any(c["status"] == "error" for c in checks)
    return Kind.RUNTIME.exit_code if failed else EXIT_OK


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common])
    render.add_format_flags(p, render.MD)
    p.set_defaults(handler=cmd_doctor)


__all__ = ["add_parsers"]
