"""``--workers N``: several gateway processes serving one port.

The parent reserves the port (a bound, never-listening socket with
``SO_REUSEPORT``), wipes the shared session table, and starts N isolated children
(:mod:`gno_trio.children`), each running the ``entry`` function the caller names. A child
calls :func:`accept_launch`: it receives the caller's opaque launch object
(for the CLI, the parsed command line) on stdin and binds its own
``SO_REUSEPORT`` listener on that port; the entry then opens its own engine
and runs the ordinary gateway with the :class:`WorkerSeat` it was given. The kernel spreads new
connections across the children's listeners. The parent announces the
endpoint once every child listens, forwards SIGINT/SIGTERM to all of them and
exits 0 when all of them drained and exited 0. A child whose parent dies
(killed, so it could not forward anything) drains and exits by itself.

Only worker 0 runs the daemon's start-up sync. Each worker keeps its own
rate-limit windows, admission slots and metrics; 2025-era sessions are shared
(:mod:`.shared_sessions`); GET streams are per worker.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Final

from gno_trio.children import isolated_call
from gno_trio.engine import FileSessionRegistry
from gno_trio.errors import GnoError
from gno_trio.transports.http.server import (
    ClientSnippets,
    GatewayEndpoint,
    announce,
    open_listening_socket,
)
from gno_trio.transports.http.settings import GatewaySettings
from gno_trio.transports.http.state import WorkerSeat
from gno_trio.transports.http.tokens import ensure_token_file

logger = logging.getLogger("gno_trio.transports.http")

REGISTRY_NAME: Final = "gateway-sessions-{port}.sqlite"
_READY_TIMEOUT: Final = 60.0
_STOP_GRACE: Final = 5.0
_POLL: Final = 0.2
_ORPHAN_CHECK_EVERY: Final = 0.5


@dataclass(frozen=True, slots=True)
class WorkerLaunch:
    """What a child needs beyond the command line: its seat, its listener, whom to tell."""

    seat: WorkerSeat
    sock: socket.socket
    on_ready: Callable[[GatewayEndpoint], None]


def _start_child(entry: str, payload: bytes) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(isolated_call(entry), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    child.stdin.write(payload)
    child.stdin.close()
    return child


def _await_ready(child: subprocess.Popen[bytes], deadline: float) -> GatewayEndpoint:
    """The endpoint a child reports once it listens; ``GnoError`` if it dies or stalls."""
    stdout: IO[bytes] | None = child.stdout
    assert stdout is not None
    readable, _, _ = select.select([stdout], [], [], max(0.0, deadline - time.monotonic()))
    line = stdout.readline() if readable else b""
    if not line:
        if child.poll() is None:
            raise GnoError("RUNTIME", "a gateway worker did not start listening in time")
        raise GnoError("RUNTIME", f"gateway worker exited before listening (code {child.wait()})")
    fields = json.loads(line)
    return GatewayEndpoint(
        url=fields["url"],
        mcp_url=fields["mcp_url"],
        status_url=fields["status_url"],
        port=fields["port"],
    )


def _stop(children: list[subprocess.Popen[bytes]], grace: float) -> list[int]:
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    codes = []
    for child in children:
        try:
            codes.append(child.wait(timeout=max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            child.kill()
            codes.append(child.wait())
    return codes


def run_workers(
    launch: object,
    *,
    entry: str,
    settings: GatewaySettings,
    data_dir: Path,
    workers: int,
    as_json: bool,
    clients: ClientSnippets | None = None,
    announced: Callable[[GatewayEndpoint], None] | None = None,
) -> int:
    """Parent of ``workers`` gateway processes; blocks until they all stopped.

    ``launch`` (picklable) reaches every child through :func:`accept_launch`;
    ``entry`` names the child's main function; ``announced`` as for
    :func:`~gno_trio.transports.http.server.run_resident`.
    """
    if not hasattr(socket, "SO_REUSEPORT"):
        raise GnoError("VALIDATION", "--workers needs SO_REUSEPORT, which this system lacks")
    if settings.token_file is not None:
        ensure_token_file(settings.token_file)
    reserved = open_listening_socket(settings.host, settings.port, reuse_port=True, listen=False)
    port: int = reserved.getsockname()[1]
    data_dir.mkdir(parents=True, exist_ok=True)
    registry_path = data_dir / REGISTRY_NAME.format(port=port)
    FileSessionRegistry.create_fresh(registry_path).close()
    stop_requested = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    children: list[subprocess.Popen[bytes]] = []
    try:
        for index in range(workers):
            payload = pickle.dumps((launch, WorkerSeat(index, registry_path), settings.host, port))
            children.append(_start_child(entry, payload))
        deadline = time.monotonic() + _READY_TIMEOUT
        endpoints = [_await_ready(child, deadline) for child in children]
        if announced is not None:  # the pid-file first: a reader of the URL finds it
            announced(endpoints[0])
        announce(endpoints[0], settings, as_json=as_json, clients=clients)
        while not stop_requested:
            ended = [child for child in children if child.poll() is not None]
            if ended:
                logger.error("a gateway worker exited (code %s); stopping", ended[0].returncode)
                _stop(children, settings.longest_drain + _STOP_GRACE)
                return 2
            time.sleep(_POLL)
        codes = _stop(children, settings.longest_drain + _STOP_GRACE)
        return 0 if all(code == 0 for code in codes) else 2
    finally:
        if any(child.poll() is None for child in children):
            _stop(children, _STOP_GRACE)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        reserved.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{registry_path}{suffix}").unlink(missing_ok=True)


def _report_ready(endpoint: GatewayEndpoint) -> None:
    """Tell the parent this worker listens (one JSON line on the pipe it reads)."""
    fields = {
        "url": endpoint.url,
        "mcp_url": endpoint.mcp_url,
        "status_url": endpoint.status_url,
        "port": endpoint.port,
    }
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def _stop_when_orphaned(parent: int) -> None:
    """Ask this worker to drain (SIGTERM to itself) once ``parent`` is no longer its parent.

    A parent that was killed (``kill -9``, the OOM killer) cannot stop its
    workers; without this they would go on serving the port for good.
    """
    while os.getppid() == parent:
        time.sleep(_ORPHAN_CHECK_EVERY)
    logger.warning("the gateway's parent process is gone; this worker stops")
    os.kill(os.getpid(), signal.SIGTERM)


def accept_launch() -> tuple[object, WorkerLaunch]:
    """In a child: the parent's launch object, and this worker's seat and listener.

    From here on the worker stops by itself if its parent dies.
    """
    parent = os.getppid()
    launch, seat, host, port = pickle.loads(sys.stdin.buffer.read())
    sock = open_listening_socket(host, port, reuse_port=True)
    threading.Thread(
        target=_stop_when_orphaned, args=(parent,), name="orphan-watch", daemon=True
    ).start()
    return launch, WorkerLaunch(seat=seat, sock=sock, on_ready=_report_ready)


__all__ = ["REGISTRY_NAME", "WorkerLaunch", "accept_launch", "run_workers"]
