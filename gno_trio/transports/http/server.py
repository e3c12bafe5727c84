"""Running the gateway: bind, serve with hypercorn's trio worker, drain on SIGINT/SIGTERM.

:func:`serve_gateway` is the library entry (tests start it in a nursery);
:func:`run_resident` is what ``gno-trio serve`` / ``gno-trio daemon`` call.

Shutdown order: stop admitting (new requests get 503) and let in-flight ones
finish, each within its own deadline (:mod:`~gno_trio.transports.deadlines`:
past it, a ``-32000`` error answers it), then stop supervised tasks (GET streams,
the reaper, background sync), then let hypercorn close its listener and idle
connections.

By default one process, one hypercorn worker, and 2025-era sessions live in
this process's memory. With ``--workers N`` (:mod:`.workers`) each worker
process runs this same gateway given a :class:`WorkerSeat`, and its sessions
go through the shared store of :mod:`.shared_sessions` instead.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

import hypercorn.config
import trio

from gno_trio.collector import pace_for_serving
from gno_trio.engine import FileSessionRegistry, SessionRegistry, Team
from gno_trio.errors import GnoError
from gno_trio.server.change_feed import ChangeFeed
from gno_trio.server.dispatch import McpApp
from gno_trio.transports.deadlines import InFlightDeadlines
from gno_trio.transports.http.asgi import GatewayApp
from gno_trio.transports.http.connections import serve_connections
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.identity import CallerLabels, ensure_caller_key
from gno_trio.transports.http.listen_book import EVENT_STREAMS, LISTEN_STREAMS, ListenBook
from gno_trio.transports.http.metrics import TransportMetrics
from gno_trio.transports.http.runtime_admission import RuntimeAdmission
from gno_trio.transports.http.sessions import SessionStore
from gno_trio.transports.http.settings import (
    STATUS_PATH,
    GatewaySettings,
    bind_address,
    bind_listener,
    check_bind,
)
from gno_trio.transports.http.shared_sessions import (
    SharedSessionStore,
)
from gno_trio.transports.http.state import GatewayState, WorkerSeat
from gno_trio.transports.http.status import resident_status
from gno_trio.transports.http.surfaces import Surface
from gno_trio.transports.http.team import hear_other_gateways, team_wall_clock
from gno_trio.transports.http.tokens import ensure_token_file
from nurseries import (
    AdmissionGate,
    GracefulDrain,
    Supervisor,
    drain_and_shutdown,
    open_supervisor,
)

logger = logging.getLogger("gno_trio.transports.http")

SERVER_KEY: Final = "gno"
LISTEN_FAILED_CODE: Final = "GATEWAY_LISTEN_FAILED"
_BACKLOG: Final = 128
_TASK_GRACE: Final = 2.0
_HYPERCORN_GRACE: Final = 2.0
_MEMORY_CHECK_EVERY: Final = 1.0

BackgroundTask = Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class GatewayEndpoint:
    """Where a started gateway can be reached."""

    url: str
    mcp_url: str
    status_url: str
    port: int


def open_listening_socket(
    host: str, port: int, *, reuse_port: bool = False, listen: bool = True
) -> socket.socket:
    """A bound (by default listening) TCP socket; ``port`` 0 picks a free port.

    ``reuse_port`` lets several worker processes bind the same port, so the
    kernel spreads connections between them; a socket that only holds the
    port for the workers is bound without ``listen``.
    """
    address, version = bind_address(host)
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6 and address == "::":
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((address, port))
        if listen:
            sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise GnoError(
            LISTEN_FAILED_CODE, f"Cannot listen on {host}:{port}: {reason[:1].lower()}{reason[1:]}"
        ) from None
    return sock


def _hypercorn_config(settings: GatewaySettings) -> hypercorn.config.Config:
    config = hypercorn.config.Config()
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.include_server_header = False
    config.graceful_timeout = _HYPERCORN_GRACE
    config.keep_alive_timeout = settings.keep_alive_timeout
    return config


def build_state(
    app: McpApp,
    settings: GatewaySettings,
    port: int,
    supervisor: Supervisor,
    policies: PolicyBook,
    worker: WorkerSeat | None = None,
    team: Team | None = None,
) -> GatewayState:
    """The shared state of a gateway listening on ``port`` (``team``: of a team-mode gateway)."""
    limits = settings.limits
    metrics = TransportMetrics()
    idle_timeout = limits.session_idle_timeout_ms / 1000.0
    sessions: SessionStore
    if worker is None and team is None:
        sessions = SessionStore(
            max_sessions=limits.max_sessions,
            max_per_identity=limits.max_sessions_per_identity,
            idle_timeout=idle_timeout,
            metrics=metrics,
            legacy_methods=app.legacy_methods,
        )
    else:  # shared by the workers of this host, or by every gateway of the team
        registry: SessionRegistry
        if team is not None:
            registry = team.sessions()
        else:
            assert worker is not None
            registry = FileSessionRegistry(worker.registry_path)
        sessions = SharedSessionStore(
            registry,
            max_sessions=limits.max_sessions,
            max_per_identity=limits.max_sessions_per_identity,
            idle_timeout=idle_timeout,
            metrics=metrics,
            token_file=settings.token_file,
            legacy_methods=app.legacy_methods,
            wall_clock=team_wall_clock if team is not None else time.monotonic,
        )
    ledger = sessions.ledger if isinstance(sessions, SharedSessionStore) else None
    return GatewayState(
        listens=ListenBook(LISTEN_STREAMS, ledger=ledger),
        event_streams=ListenBook(EVENT_STREAMS, ledger=ledger),
        app=app,
        listener=bind_listener(settings, port),
        supervisor=supervisor,
        policies=policies,
        metrics=metrics,
        sessions=sessions,
        capacity=AdmissionGate(limits.max_concurrent_requests, limits.max_queued_requests),
        readers=RuntimeAdmission(limits.max_concurrent_requests),
        labels=CallerLabels(
            team.caller_key()
            if team is not None
            else ensure_caller_key(settings.caller_key_file)
            if settings.caller_key_file is not None
            else app.instance_id.encode()
        ),
        deadlines=InFlightDeadlines(settings.answer_deadline),
        worker=worker,
        team=team,
    )


async def _sessions_listen(feed: ChangeFeed, sessions: SessionStore) -> None:
    """Hand document changes to this gateway's sessions for as long as it serves."""
    stop = await feed.listen(sessions.notify_changes, lambda: None)
    try:
        await trio.sleep_forever()
    finally:
        stop()


async def serve_gateway(
    app: McpApp,
    settings: GatewaySettings,
    *,
    policies: PolicyBook,
    sock: socket.socket | None = None,
    drain: GracefulDrain | None = None,
    handle_signals: bool | None = None,
    background: Sequence[BackgroundTask] = (),
    worker: WorkerSeat | None = None,
    pages: Surface | None = None,
    team: Team | None = None,
    task_status: trio.TaskStatus[GatewayEndpoint] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` until ``drain`` is triggered (by SIGINT/SIGTERM or by the caller).

    Refuses unsafe binds and unusable token files before opening a socket
    (``GnoError``). ``sock`` may be a socket the caller already bound. Reports
    the reachable endpoint through ``task_status`` once requests are accepted.
    ``worker`` makes this process one of several sharing the port.
    ``pages`` answers the paths outside ``/mcp`` and ``/api/`` (404 without).
    ``team`` makes it one gateway of a team sharing a PostgreSQL store.
    """
    check_bind(settings)
    token_state = ensure_token_file(settings.token_file) if settings.token_file else None
    if sock is None:
        sock = open_listening_socket(settings.host, settings.port)
    port: int = sock.getsockname()[1]
    drain = drain if drain is not None else GracefulDrain()
    if handle_signals is None:
        handle_signals = threading.current_thread() is threading.main_thread()
    async with open_supervisor() as supervisor:
        state = build_state(app, settings, port, supervisor, policies, worker, team)
        if app.lifecycle is not None:  # gno_status over HTTP reports this gateway
            app.lifecycle.attach(partial(resident_status, state))
        gateway = GatewayApp(state, token_state=token_state, pages=pages)
        if app.change_feed is not None and app.subscriptions:  # sessions hear changes on GET
            supervisor.start_soon(
                _sessions_listen, app.change_feed, state.sessions, name="change-listener"
            )
        if team is not None and isinstance(state.sessions, SharedSessionStore):
            supervisor.start_soon(hear_other_gateways, team, state.sessions, name="team-notices")
        supervisor.every(state.sessions.reap_every, state.sessions.reap, name="session-reaper")
        supervisor.every(
            _MEMORY_CHECK_EVERY,
            lambda: state.memory.maybe_release(idle=state.capacity.stats().active == 0),
            name="memory-return",
        )
        config = _hypercorn_config(settings)
        stop_listening = trio.Event()
        async with trio.open_nursery() as signals:
            if handle_signals:
                await signals.start(drain.watch_signals)
            async with trio.open_nursery() as server:
                await server.start(
                    partial(
                        serve_connections,
                        gateway,
                        config,
                        sock,
                        write_timeout=settings.write_timeout,
                        shutdown_trigger=stop_listening.wait,
                        on_write_timeout=gateway.count_write_timeout,
                    )
                )
                listener = state.listener
                task_status.started(
                    GatewayEndpoint(
                        url=listener.url,
                        mcp_url=listener.mcp_url,
                        status_url=listener.url + STATUS_PATH,
                        port=port,
                    )
                )
                for task in background:
                    supervisor.start_soon(task, name=getattr(task, "__name__", "background"))
                await drain.wait()
                logger.info("shutting down: draining in-flight requests")
                state.listens.closing.set()  # listen streams complete gracefully
                state.shutdown_state = "graceful"
                # Each request read so far runs until its own deadline, then is answered.
                last_answer = state.deadlines.arm_all()
                outcome = await drain_and_shutdown(
                    state.capacity,
                    supervisor,
                    drain_timeout=max(settings.drain_timeout, last_answer),
                    grace=_TASK_GRACE,
                )
                await state.readers.drain(_TASK_GRACE)
                if not outcome.requests_drained:
                    state.shutdown_state = "deadline"
                stop_listening.set()
            signals.cancel_scope.cancel()


def client_configuration(endpoint: GatewayEndpoint, settings: GatewaySettings) -> dict[str, Any]:
    """A ready-to-paste MCP client entry (the token itself is never included)."""
    entry: dict[str, Any] = {"type": "http", "url": endpoint.mcp_url}
    if settings.token_file is not None:
        entry["headers"] = {"Authorization": f"Bearer <contents of {settings.token_file}>"}
    return {"mcpServers": {SERVER_KEY: entry}}


ClientSnippets = Callable[[str, Path | None], Mapping[str, Mapping[str, Any]]]
"""Per-client configuration for a URL: ``{client: {"text": ..., ...}}`` (the CLI's table)."""


def _snippet_lines(name: str, text: str, width: int) -> str:
    """One client's entry: beside its name on one line, or (TOML) as its own block, as written.

    A TOML entry is a table header and its keys on separate lines; joined on
    one line it would not parse, so it is printed as the lines to paste.
    """
    if "\n" not in text:
        return f"  {name:<{width}}  {text}\n"
    return f"  {name}:\n" + "".join(f"{line}\n" for line in text.split("\n")) + "\n"


def announce(
    endpoint: GatewayEndpoint,
    settings: GatewaySettings,
    *,
    as_json: bool,
    clients: ClientSnippets | None = None,
) -> None:
    """Print where the gateway listens, and client configurations, to stdout."""
    config = client_configuration(endpoint, settings)
    snippets = clients(endpoint.mcp_url, settings.token_file) if clients is not None else None
    workspace = f"Web workspace: {endpoint.url}/\n" if settings.serves_workspace else ""
    if as_json:
        document: dict[str, Any] = {
            "mode": settings.mode,
            "url": endpoint.mcp_url,
            "port": endpoint.port,
            "statusUrl": endpoint.status_url,
            "clientConfig": config,
        }
        if settings.serves_workspace:
            document["workspaceUrl"] = endpoint.url + "/"
        if snippets is not None:
            document["clients"] = snippets
        sys.stdout.write(json.dumps(document) + "\n")
    elif snippets is not None:
        width = max(len(name) for name in snippets)
        lines = "".join(_snippet_lines(name, str(s["text"]), width) for name, s in snippets.items())
        sys.stdout.write(
            f"gno-trio {settings.mode}: MCP endpoint {endpoint.mcp_url}\n"
            f"Status: {endpoint.status_url}\n"
            f"{workspace}"
            "Client configuration (each in the shape its client reads):\n"
            f"{lines}"
        )
    else:
        sys.stdout.write(
            f"gno-trio {settings.mode}: MCP endpoint {endpoint.mcp_url}\n"
            f"Status: {endpoint.status_url}\n"
            f"{workspace}"
            "Client configuration:\n"
            f"{json.dumps(config, indent=2)}\n"
        )
    sys.stdout.flush()


def run_resident(
    app: McpApp,
    settings: GatewaySettings,
    *,
    policies: PolicyBook,
    background: Sequence[BackgroundTask] = (),
    as_json: bool = False,
    sock: socket.socket | None = None,
    worker: WorkerSeat | None = None,
    on_ready: Callable[[GatewayEndpoint], None] | None = None,
    clients: ClientSnippets | None = None,
    announced: Callable[[GatewayEndpoint], None] | None = None,
    team: Team | None = None,
    pages: Surface | None = None,
) -> int:
    """Blocking entry for the CLI: serve until SIGINT/SIGTERM, then drain; returns 0.

    ``on_ready`` replaces the announcement (a worker reports to its parent instead);
    ``clients`` gives the per-client configurations it prints; ``announced``
    runs just before the announcement (the pid-file, so whoever reads the URL finds it).
    ``pages``: the web workspace (``serve`` offers it; 404 outside ``/mcp`` and ``/api/``).
    """

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            endpoint = await nursery.start(
                partial(
                    serve_gateway,
                    app,
                    settings,
                    policies=policies,
                    sock=sock,
                    background=background,
                    worker=worker,
                    team=team,
                    pages=pages,
                )
            )
            if on_ready is not None:
                on_ready(endpoint)
            else:
                if announced is not None:  # the pid-file first: a reader of the URL finds it
                    announced(endpoint)
                announce(endpoint, settings, as_json=as_json, clients=clients)

    # Everything that can fail before serving fails here, outside trio, so the
    # user reads one line naming the cause instead of an exception group.
    check_bind(settings)
    if settings.token_file is not None:
        ensure_token_file(settings.token_file)
    if settings.caller_key_file is not None:
        ensure_caller_key(settings.caller_key_file)
    if sock is None:
        sock = open_listening_socket(settings.host, settings.port)
    pace_for_serving()
    try:
        trio.run(main)
    except BaseExceptionGroup as group:
        raise _sole_error(group) from None
    return 0


def _sole_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception inside nested single-member groups (the group itself otherwise)."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


__all__ = [
    "LISTEN_FAILED_CODE",
    "ClientSnippets",
    "GatewayEndpoint",
    "announce",
    "client_configuration",
    "open_listening_socket",
    "run_resident",
    "serve_gateway",
]
