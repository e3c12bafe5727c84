"""Everything one gateway shares between requests, built once when it starts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gno_trio.server.dispatch import McpApp
from gno_trio.transports.deadlines import InFlightDeadlines
from gno_trio.transports.http.boundary import Caller
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.identity import CallerLabels
from gno_trio.transports.http.listen_book import EVENT_STREAMS, LISTEN_STREAMS, ListenBook
from gno_trio.transports.http.memory import MemoryReturn
from gno_trio.transports.http.metrics import TransportMetrics
from gno_trio.transports.http.runtime_admission import RuntimeAdmission
from gno_trio.transports.http.sessions import SessionStore
from gno_trio.transports.http.settings import GatewaySettings, Listener
from gno_trio.transports.http.wire import Receive, RequestHeaders, Send
from nurseries import AdmissionGate, Supervisor

if TYPE_CHECKING:
    from gno_trio.engine import Team


@dataclass(frozen=True, slots=True)
class WorkerSeat:
    """This process is worker ``index`` of several serving one port (``--workers N``)."""

    index: int
    registry_path: Path
    """The SQLite file holding the 2025-era sessions every worker shares."""


@dataclass(eq=False)
class GatewayState:
    """Shared gateway state; no global variables anywhere else."""

    app: McpApp
    listener: Listener
    supervisor: Supervisor
    policies: PolicyBook
    metrics: TransportMetrics
    sessions: SessionStore
    capacity: AdmissionGate
    """Transport capacity: active requests plus a short queue (429 past both)."""
    readers: RuntimeAdmission
    """Runtime admission: a handle on the resident runtime for each dispatch (503 once closing)."""
    labels: CallerLabels
    deadlines: InFlightDeadlines
    """The MCP requests being answered, each with its own deadline (armed by the drain)."""
    memory: MemoryReturn = field(default_factory=MemoryReturn)
    """Answered bytes since the heap was last trimmed (see :mod:`.memory`)."""
    started_at: float = field(default_factory=time.monotonic)
    shutdown_state: str = "none"
    listens: ListenBook = field(default_factory=lambda: ListenBook(LISTEN_STREAMS))
    """The open 2026-07-28 listen streams (bounded per identity, completed at drain)."""
    event_streams: ListenBook = field(default_factory=lambda: ListenBook(EVENT_STREAMS))
    """The open REST event streams (``/api/events``), bounded per identity the same way."""
    worker: WorkerSeat | None = None
    team: Team | None = None
    """The team this gateway is one of (team mode), else None."""

    @property
    def settings(self) -> GatewaySettings:
        return self.listener.settings


@dataclass(eq=False, slots=True)
class Exchange:
    """One HTTP request that passed the boundary."""

    receive: Receive
    send: Send
    headers: RequestHeaders
    caller: Caller


__all__ = ["Exchange", "GatewayState", "WorkerSeat"]
