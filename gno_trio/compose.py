"""The composition root: the one place that wires an engine into a serving MCP app.

Every command that serves MCP (``gno-trio mcp`` over stdio, ``serve`` and
``daemon`` over HTTP, each HTTP worker process) builds its runtime here:
the opened :class:`~gno_trio.engine.Engine`, the :class:`~gno_trio.runtime.Runtime`
that bridges it to the event loop, and the :class:`~gno_trio.server.dispatch.McpApp`
with the tools the profile and the write gate select from the catalogue,
plus the document resources. Transports receive the finished app and know
nothing of tools; the tools know nothing of transports.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass

import trio

from gno_trio import SERVER_NAME, __version__
from gno_trio.engine import BackgroundEmbedder, Engine, JobManager
from gno_trio.errors import GnoError
from gno_trio.heap import one_arena
from gno_trio.runtime import Runtime
from gno_trio.server.change_feed import ChangeFeed
from gno_trio.server.dispatch import McpApp
from gno_trio.server.registry import parse_profile
from gno_trio.server.unavailable import Switches, inactive_tools
from gno_trio.tools import CATALOGUE
from gno_trio.tools.collections import start_sync_job
from gno_trio.tools.listings import bind_listings
from gno_trio.tools.resources import DocumentResources

logger = logging.getLogger("gno_trio.compose")


def build_app(
    runtime: Runtime, switches: Switches | None = None, *, subscriptions: bool = False
) -> McpApp:
    """The MCP surface of ``runtime``: selected tools, resources and the write-tool list.

    ``switches`` are the serving command's flags, named when a switched-off
    tool is called. ``subscriptions`` (``--subscriptions``) offers MCP change
    notifications; the change feed itself always exists (it reads the journal
    only while somebody listens), so ``/api/events`` carries document changes
    with the switch off too.
    """
    return McpApp(
        name=SERVER_NAME,
        version=__version__,
        tools=CATALOGUE.bind(runtime, runtime.tool_profile, runtime.write_enabled),
        resources=DocumentResources(runtime),
        instance_id=runtime.instance_id,
        write_tools=CATALOGUE.write_names,
        content_classes=CATALOGUE.content_classes,
        inactive=inactive_tools(CATALOGUE, runtime.tool_profile, runtime.write_enabled, switches),
        lifecycle=runtime.lifecycle,
        change_feed=ChangeFeed(runtime),
        subscriptions=subscriptions,
        operations=bind_listings(runtime),
    )


@dataclass(frozen=True, slots=True)
class Served:
    """What a serving command holds while it serves."""

    engine: Engine
    runtime: Runtime
    app: McpApp
    embedder: BackgroundEmbedder | None = None


@contextlib.contextmanager
def serving(
    engine: Engine,
    *,
    write_enabled: bool,
    tool_profile: str,
    switches: Switches | None = None,
    embed_in_background: bool = False,
    subscriptions: bool = False,
    hold_chunk_index: bool = True,
) -> Iterator[Served]:
    """The runtime and app over ``engine`` for the ``with`` block; then everything closes.

    With ``embed_in_background`` (the resident gateways) a background
    embedder gives new chunks vectors while the server serves. It and the
    background jobs are stopped before the engine closes, so no thread
    writes through a closed pool. The engine is closed here even when
    building the runtime fails. When the index holds vectors the embedding
    model is loaded as the server starts.

    With ``hold_chunk_index`` (the resident gateways) the chunk and document
    indexes are also kept in memory: each search then ranks and cuts its
    snippets without a statement per hit. That copy costs several times the
    indexed text (about 65 MiB on a 7 MB corpus, numpy included) for about a
    millisecond per search, so it pays for one resident serving many clients
    and not for ``gno-trio mcp``: one stdio process per client session,
    whose memory at rest is multiplied by the sessions an editor keeps open.
    """
    one_arena()  # before any of its threads allocates
    embedder = BackgroundEmbedder(engine.vectors) if embed_in_background else None
    if hold_chunk_index:
        engine.search.hold_chunk_index()
    engine.vectors.ready_semantic_search()
    try:
        runtime = Runtime(
            engine=engine,
            write_enabled=write_enabled,
            tool_profile=parse_profile(tool_profile),
            # In team mode one job runs at a time in the whole deployment, visible everywhere.
            jobs=JobManager(book=engine.team.jobs() if engine.team is not None else None),
        )
        try:
            if embedder is not None:
                embedder.start()
            app = build_app(runtime, switches, subscriptions=subscriptions)
            yield Served(engine=engine, runtime=runtime, app=app, embedder=embedder)
        finally:
            if embedder is not None:
                embedder.close()
            runtime.jobs.close()
    finally:
        engine.close()


def folder_watch(served: Served, *, catch_up: bool = False) -> Callable[[], Awaitable[None]]:
    """The resident's folder watch as a background task (see :mod:`gno_trio.watch`).

    A sync that wrote documents rings the background embedder, so their
    vectors follow at once rather than at its next look.
    """
    from gno_trio.watch import FolderWatcher

    synced = served.embedder.nudge if served.embedder is not None else None
    return FolderWatcher(served.runtime, catch_up=catch_up, on_written=synced).run


TEAM_POLL_SECONDS = 3.0
"""How often a resident of a team catches up with the team's index without being told
(the HTTP gateway is also told at once, by NOTIFY; a stdio server only polls)."""


def follow_team(engine: Engine) -> Callable[[], Awaitable[None]]:
    """Keep this host's index file caught up with the team's rows while serving."""

    async def run() -> None:
        team = engine.team
        if team is None:
            return
        while True:
            await trio.sleep(TEAM_POLL_SECONDS)
            try:
                await trio.to_thread.run_sync(team.catch_up)
            except (GnoError, OSError) as exc:
                logger.warning("could not catch up with the team's index yet: %s", exc)

    return run


def resident_tasks(served: Served, *, watch: bool) -> list[Callable[[], Awaitable[object]]]:
    """What runs beside a resident's server: its rest after each burst of calls, its folder
    watch, its change feed when on, and in team mode its catch-up with the team's index."""
    tasks: list[Callable[[], Awaitable[object]]] = [served.runtime.rest_when_idle]
    if watch:
        tasks.append(folder_watch(served))
    if served.app.change_feed is not None:
        tasks.append(served.app.change_feed.run)
    if served.engine.team is not None:
        tasks.append(follow_team(served.engine))
    return tasks


async def serve_beside(
    serve: Callable[[], Awaitable[int]], background: Sequence[Callable[[], Awaitable[object]]]
) -> int:
    """Run ``serve`` with ``background`` tasks beside it; they stop when it returns."""
    async with trio.open_nursery() as nursery:
        for task in background:
            nursery.start_soon(task)
        code = await serve()
        nursery.cancel_scope.cancel()
    return code


def initial_sync(runtime: Runtime) -> Callable[[], Awaitable[None]]:
    """The daemon's start-up sync, as an ordinary sync job (the job slot and the lease)."""

    async def run() -> None:
        try:
            ticket = await trio.to_thread.run_sync(lambda: start_sync_job(runtime, None))
        except GnoError as exc:
            logger.warning("initial sync not started: %s: %s", exc.code, exc.message)
            return
        logger.info("initial sync running as job %s", ticket.job_id)

    return run


__all__ = [
    "Served",
    "build_app",
    "folder_watch",
    "initial_sync",
    "resident_tasks",
    "serve_beside",
    "serving",
]
