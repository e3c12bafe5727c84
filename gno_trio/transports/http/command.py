"""The ``serve`` and ``daemon`` commands: flags, the engine, the gateway.

Both start the same gateway. ``serve`` stays on loopback; ``daemon`` may listen
elsewhere behind a token file and exact Host/Origin lists, requires at least
one collection, and syncs its collections once the listener is up (skip with
``--no-sync-on-start``). Flags beat ``gateway.*`` config keys, which beat the
defaults; the tool profile and the write switch are read once at start.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from gno_trio.engine.api import Engine
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.app import build_app
from gno_trio.tools.collections import start_sync_job
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.server import BackgroundTask, run_resident
from gno_trio.transports.http.settings import Mode, check_bind, settings_from_config

if TYPE_CHECKING:
    from gno_trio.transports.http.workers import WorkerLaunch

logger = logging.getLogger("gno_trio.transports.http")


def _initial_sync(runtime: Runtime) -> BackgroundTask:
    """The daemon's start-up sync, as an ordinary sync job (slot and write lease)."""

    async def initial_sync() -> None:
        try:
            ticket = await trio.to_thread.run_sync(lambda: start_sync_job(runtime, None))
        except GnoError as exc:
            logger.warning("initial sync not started: %s: %s", exc.code, exc.message)
            return
        logger.info("initial sync running as job %s", ticket.job_id)

    return initial_sync


def run_gateway_command(
    args: argparse.Namespace,
    *,
    mode: Mode,
    open_engine: Callable[[argparse.Namespace], Engine],
    worker: WorkerLaunch | None = None,
) -> int:
    """Start the gateway for ``gno-trio serve`` / ``gno-trio daemon``; blocks until drained.

    ``--workers N`` above 1 makes this process the parent of N gateway
    processes (:mod:`.workers`); ``worker`` is set in each of those children.
    """
    workers = getattr(args, "workers", 1)
    if workers is None or workers < 1:
        raise GnoError("VALIDATION", "--workers must be a positive integer")
    engine = open_engine(args)
    runtime: Runtime | None = None
    try:
        settings = settings_from_config(
            engine.config.gateway,
            mode=mode,
            host=args.host,
            port=args.port,
            token_file=args.mcp_token_file,
            allowed_hosts=args.mcp_allowed_host,
            allowed_origins=args.mcp_allowed_origin,
            enable_write=args.mcp_enable_write,
            tool_profile=args.mcp_tool_profile,
        )
        check_bind(settings)
        if mode == "daemon" and not engine.config.collections:
            raise GnoError(
                "VALIDATION",
                "daemon needs at least one collection; add one with: "
                "gno-trio collection add <path>",
            )
        if worker is None and workers > 1:
            from gno_trio.transports.http.workers import run_workers

            return run_workers(
                args,
                mode=mode,
                open_engine=open_engine,
                settings=settings,
                data_dir=engine.location.dirs.data,
                workers=workers,
                as_json=bool(getattr(args, "json", False)),
            )
        runtime = Runtime(
            engine=engine, write_enabled=settings.enable_write, tool_profile=settings.tool_profile
        )
        background: list[BackgroundTask] = []
        first_worker = worker is None or worker.seat.index == 0
        if mode == "daemon" and first_worker and not getattr(args, "no_sync_on_start", False):
            background.append(_initial_sync(runtime))
        return run_resident(
            build_app(runtime),
            settings,
            policies=PolicyBook(engine.location.config_path, engine.config.collections),
            background=background,
            as_json=bool(getattr(args, "json", False)),
            sock=worker.sock if worker is not None else None,
            worker=worker.seat if worker is not None else None,
            on_ready=worker.on_ready if worker is not None else None,
        )
    finally:
        if runtime is not None:
            runtime.jobs.close()  # background jobs stop before their engine closes
        engine.close()


__all__ = ["run_gateway_command"]
