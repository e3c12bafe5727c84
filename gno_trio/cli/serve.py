"""``mcp``, ``serve`` and ``daemon``: the commands that serve MCP.

``mcp`` serves one IDE over stdio (stdout carries JSON-RPC only, logs go to
stderr). ``serve`` and ``daemon`` start the same resident Streamable HTTP
gateway: ``serve`` stays on loopback; ``daemon`` may listen elsewhere behind
a token file and exact Host/Origin lists, requires at least one collection,
and syncs its collections once the listener is up (skip with
``--no-sync-on-start``). Flags beat ``gateway.*`` config keys, which beat the
defaults; the tool profile and the write switch are read once at start.
Every one of them builds its runtime through :mod:`gno_trio.compose`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from gno_trio.cli import mcp_setup, render, resident
from gno_trio.cli.clients.snippets import http_snippets
from gno_trio.cli.clients.targets import TARGETS
from gno_trio.cli.common import Subparsers, open_engine
from gno_trio.config.environment import MCP_ENABLE_WRITE, flag
from gno_trio.errors import GnoError
from gno_trio.server.registry import parse_profile
from gno_trio.server.unavailable import HTTP_SWITCHES, STDIO_SWITCHES

if TYPE_CHECKING:
    from gno_trio.engine import Engine
    from gno_trio.transports.http.server import GatewayEndpoint
    from gno_trio.transports.http.settings import GatewaySettings
    from gno_trio.transports.http.workers import WorkerLaunch


WORKER_ENTRY = "gno_trio.cli.serve:worker_main"


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdio: stdout carries JSON-RPC only, logs go to stderr."""
    import trio

    from gno_trio.collector import pace_for_serving
    from gno_trio.compose import resident_tasks, serve_beside, serving
    from gno_trio.transports.stdio import serve_stdio

    profile = parse_profile(args.tool_profile)
    write_enabled = args.enable_write or flag(MCP_ENABLE_WRITE)
    if sys.stdin.isatty() and not render.quiet():
        # Someone typed the command: say what it is waiting for (stdout stays JSON-RPC only).
        print(
            "gno-trio mcp speaks the Model Context Protocol (JSON-RPC) on stdin/stdout; "
            "an MCP client starts it. Waiting for one now: press Ctrl+D or Ctrl+C to stop.\n"
            "To set a client up instead: gno-trio mcp install --target <client> "
            f"(one of {', '.join(sorted(TARGETS))}).",
            file=sys.stderr,
            flush=True,
        )
    engine = open_engine(args)
    _say_team(engine)
    with serving(
        engine,
        write_enabled=write_enabled,
        tool_profile=profile,
        switches=STDIO_SWITCHES,
        subscriptions=_subscriptions(args, engine),
        hold_chunk_index=False,
    ) as served:
        background = resident_tasks(served, watch=_watching(args, engine))
        pace_for_serving()
        return trio.run(serve_beside, partial(serve_stdio, served.app), background)


def _say_team(engine: Engine) -> None:
    """On stderr, what a team-mode process shares through its store and what it keeps here."""
    from gno_trio.engine.vocabulary import TEAM_LOCAL_STATE, TEAM_SHARED_STATE

    if engine.team is None or render.quiet():
        return
    print(
        f"gno-trio: team mode (preview) on {engine.team.store.shown}: shares {TEAM_SHARED_STATE}; "
        f"{TEAM_LOCAL_STATE} stay in {engine.location.dirs.data}",
        file=sys.stderr,
        flush=True,
    )


def _subscriptions(args: argparse.Namespace, engine: Engine) -> bool:
    """Whether clients may listen for document changes (off by default).

    ``--subscriptions`` for one run, ``watch.subscriptions`` in ``index.yml``.
    """
    return bool(getattr(args, "subscriptions", False)) or engine.config.watch.subscriptions


def _watching(args: argparse.Namespace, engine: Engine) -> bool:
    """Whether this resident follows the collection folders (``--no-watch``, ``watch.enabled``)."""
    return not getattr(args, "no_watch", False) and engine.config.watch.enabled


def cmd_serve(args: argparse.Namespace) -> int:
    """Resident Streamable HTTP MCP gateway on loopback; stops gracefully on SIGINT/SIGTERM."""
    action = resident.chosen_action(args)
    if action is not None:
        return resident.run_action(action, args, "serve")
    return run_gateway(args, mode="serve")


def cmd_daemon(args: argparse.Namespace) -> int:
    """Headless resident gateway; may listen off loopback behind token + Host/Origin lists."""
    action = resident.chosen_action(args)
    if action is not None:
        return resident.run_action(action, args, "daemon")
    return run_gateway(args, mode="daemon")


def run_gateway(args: argparse.Namespace, *, mode: str, worker: WorkerLaunch | None = None) -> int:
    """Start the gateway for ``serve`` / ``daemon``; blocks until drained.

    ``--workers N`` above 1 makes this process the parent of N gateway
    processes, each entering :func:`worker_main`; ``worker`` is the
    :class:`~gno_trio.transports.http.workers.WorkerLaunch` of such a child.
    """
    from gno_trio.transports.http.identity import CALLER_KEY_NAME
    from gno_trio.transports.http.settings import check_bind, settings_from_config
    from gno_trio.transports.http.workers import run_workers

    launch = worker
    workers = getattr(args, "workers", 1)
    if workers is None or workers < 1:
        raise GnoError("VALIDATION", "--workers must be a positive integer")
    engine = open_engine(args)
    if launch is None:
        _say_team(engine)
    held = contextlib.ExitStack()
    try:
        settings = settings_from_config(
            engine.config.gateway,
            mode="daemon" if mode == "daemon" else "serve",
            host=args.host,
            port=args.port,
            token_file=args.mcp_token_file,
            allowed_hosts=args.mcp_allowed_host,
            allowed_origins=args.mcp_allowed_origin,
            enable_write=args.mcp_enable_write,
            tool_profile=args.mcp_tool_profile,
            caller_key_file=engine.location.dirs.data / CALLER_KEY_NAME,
        )
        check_bind(settings)
        if mode == "daemon" and not engine.config.collections:
            raise GnoError(
                "VALIDATION",
                "daemon needs at least one collection; add one with: "
                "gno-trio collection add <path>",
            )
        if launch is None:  # the one owner of this data directory (workers are its children)
            held.enter_context(resident.ownership(engine.location.dirs.data, mode))
    except BaseException:
        engine.close()
        raise
    with held:  # released last, once this process stopped serving
        if launch is not None:
            return _serve(args, mode, engine, settings, launch, None)
        # Detached or in the foreground, the owner writes the pid-file once it listens,
        # so --status and --stop find it either way.
        record = getattr(args, "resident_record", None)
        pid_file = Path(record) if record else resident.files_for(args, mode).pid_file
        announced = _recorder(args, mode, pid_file, detached=bool(record))
        held.callback(resident.remove_record, pid_file, os.getpid())
        if workers > 1:
            data_dir = engine.location.dirs.data
            engine.close()  # each worker opens its own
            code = run_workers(
                (args, mode),
                entry=WORKER_ENTRY,
                settings=settings,
                data_dir=data_dir,
                workers=workers,
                as_json=bool(getattr(args, "json", False)),
                clients=http_snippets,
                announced=announced,
            )
        else:
            code = _serve(args, mode, engine, settings, None, announced)
    return code


def _recorder(
    args: argparse.Namespace, mode: str, pid_file: Path, *, detached: bool
) -> Callable[[GatewayEndpoint], None]:
    """The resident's pid-file, written once its listener is announced (a log only if detached)."""
    log_file = resident.files_for(args, mode).log_file if detached else None

    def announced(endpoint: GatewayEndpoint) -> None:
        resident.write_record(
            pid_file, mode=mode, port=endpoint.port, url=endpoint.mcp_url, log_file=log_file
        )

    return announced


def _serve(
    args: argparse.Namespace,
    mode: str,
    engine: Engine,
    settings: GatewaySettings,
    launch: WorkerLaunch | None,
    announced: Callable[[GatewayEndpoint], None] | None,
) -> int:
    """Serve one gateway process until it is told to stop (a worker, or the only process)."""
    from gno_trio.compose import initial_sync, resident_tasks, serving
    from gno_trio.transports.http.guards import PolicyBook
    from gno_trio.transports.http.pages.routes import serve as workspace
    from gno_trio.transports.http.server import BackgroundTask, run_resident

    as_json = bool(getattr(args, "json", False))
    first_worker = launch is None or launch.seat.index == 0
    if first_worker:
        _reconcile_at_start(engine)
    with serving(
        engine,
        write_enabled=settings.enable_write,
        tool_profile=settings.tool_profile,
        switches=HTTP_SWITCHES,
        embed_in_background=first_worker and not getattr(args, "no_embed", False),
        subscriptions=_subscriptions(args, engine),
    ) as served:
        background: list[BackgroundTask] = []
        if mode == "daemon" and first_worker and not getattr(args, "no_sync_on_start", False):
            background.append(initial_sync(served.runtime))
        # Every worker serves its own listeners; the first one alone watches the folders.
        background.extend(resident_tasks(served, watch=first_worker and _watching(args, engine)))
        return run_resident(
            served.app,
            settings,
            policies=PolicyBook(
                engine.location.config_path,
                engine.config.collections,
                follow=engine.team.follow_config if engine.team is not None else None,
            ),
            background=background,
            as_json=as_json,
            sock=launch.sock if launch is not None else None,
            worker=launch.seat if launch is not None else None,
            on_ready=launch.on_ready if launch is not None else None,
            clients=http_snippets,
            announced=announced,
            team=engine.team,
            pages=workspace if settings.serves_workspace else None,
        )


def _reconcile_at_start(engine: Engine) -> None:
    """A resident server starts from ``index.yml`` as it is now; the engine logs each change."""
    try:
        engine.reconcile()
    except GnoError as exc:
        logging.getLogger("gno_trio.cli").warning(
            "index.yml not reconciled at start: %s: %s", exc.code, exc.message
        )


def worker_main() -> int:
    """Entry of one ``--workers`` child: take the launch from stdin, serve until told to stop."""
    from gno_trio.transports.http.workers import accept_launch

    logging.basicConfig(level=logging.WARNING)
    launch, worker = accept_launch()
    assert isinstance(launch, tuple)
    args, mode = launch
    try:
        return run_gateway(args, mode=mode, worker=worker)
    except GnoError as exc:
        sys.stderr.write(f"gateway worker {worker.seat.index}: {exc.code}: {exc.message}\n")
        return 2


def _gateway_arguments(parser: argparse.ArgumentParser, *, daemon: bool) -> None:
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
        HTTP_SWITCHES.enable_write, action="store_true", help="allow MCP write tools over HTTP"
    )
    parser.add_argument(HTTP_SWITCHES.tool_profile, help="core or full (default full)")
    parser.add_argument(
        "--no-embed", action="store_true", help="do not embed new chunks in the background"
    )
    _watch_argument(parser)
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
    name = "daemon" if daemon else "serve"
    parser.add_argument(
        "--detach",
        action="store_true",
        help="run in the background; prints the pid and URL once it listens",
    )
    parser.add_argument(
        "--status",
        action="store_true",
        help="whether the detached process runs (exit 3 when it does not)",
    )
    parser.add_argument(
        "--stop", action="store_true", help="stop the detached process (SIGTERM, then SIGKILL)"
    )
    parser.add_argument("--pid-file", help=f"pid-file to use (default {{data}}/{name}.pid)")
    parser.add_argument(
        "--log-file", help=f"log of the detached process, appended (default {{data}}/{name}.log)"
    )
    parser.add_argument(resident.RECORD_OPTION, dest="resident_record", help=argparse.SUPPRESS)


def _watch_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="do not follow the collection folders (index only on update/sync)",
    )
    parser.add_argument(
        "--subscriptions",
        action="store_true",
        help="let clients subscribe to document changes (resources/subscribe); off by default",
    )


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("mcp", parents=[common])
    _watch_argument(p)
    p.add_argument(STDIO_SWITCHES.tool_profile, default="full", help="core or full (default full)")
    p.add_argument(STDIO_SWITCHES.enable_write, action="store_true", help="register write tools")
    p.set_defaults(handler=cmd_mcp)
    mcp_setup.add_actions(p, common)

    p = sub.add_parser("serve", parents=[common])
    _gateway_arguments(p, daemon=False)
    p.set_defaults(handler=cmd_serve)
    p = sub.add_parser("daemon", parents=[common])
    _gateway_arguments(p, daemon=True)
    p.set_defaults(handler=cmd_daemon)


__all__ = ["add_parsers", "run_gateway", "worker_main"]
