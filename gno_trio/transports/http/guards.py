"""Guards shared by both protocol eras, run after admission and before the era split.

* the write gate: a write tool is refused with 403 before dispatch unless the
  gateway was started with writes enabled (a bearer token never grants writes);
* egress: every request that can return collection content is judged against
  the socket peer's zone and the current policy of each collection it touches
  (403 ``EGRESS_DENIED`` with the redacted audit);
* the authorization epoch: collection policies are re-read when ``index.yml``
  changes, and a request judged under one epoch whose answer is ready under
  another is answered 409 ``EGRESS_POLICY_CHANGED`` instead;
* identity: the opaque per-caller label the sessionless leg hands to tools;
* transport metrics: counters the metrics endpoint reports.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trio

from gno_trio.config import Collection, load_config
from gno_trio.egress import (
    EGRESS_DENIED_MESSAGE,
    EGRESS_METHODS,
    CollectionPolicy,
    evaluate,
    scope_of,
)
from gno_trio.errors import GnoError
from gno_trio.protocol.jsonrpc import Request
from gno_trio.server.registry import WRITE_TOOL_NAMES
from gno_trio.transports.http.boundary import Caller
from gno_trio.transports.http.wire import Reply, boundary_reply, jsonrpc_reply
from nurseries import Draining

logger = logging.getLogger("gno_trio.transports.http")

EGRESS_ERROR_CODE: Final = -32003
POLICY_CHANGED_CODE: Final = "EGRESS_POLICY_CHANGED"
POLICY_CHANGED_MESSAGE: Final = "Collection policy changed; retry"
CALLER_LABEL_PREFIX: Final = "http:"


# -- write gate -------------------------------------------------------------------------


def write_gate(request: Request, *, write_enabled: bool) -> Reply | None:
    """403 for a ``tools/call`` of a write tool while writes are disabled."""
    if write_enabled or request.method != "tools/call" or request.params is None:
        return None
    name = request.params.get("name")
    if isinstance(name, str) and name in WRITE_TOOL_NAMES:
        return boundary_reply(403, "write-disabled")
    return None


# -- egress and the authorization epoch ---------------------------------------------------


def _policies_of(collections: Iterable[Collection]) -> dict[str, CollectionPolicy]:
    return {
        c.name: CollectionPolicy(c.name, c.effective_egress_policy, c.egress_policy_source)
        for c in collections
    }


class PolicyBook:
    """Collection policies as ``index.yml`` says right now, with an epoch that counts changes.

    :meth:`refresh` costs one ``stat`` when the file is unchanged. A file that
    no longer parses leaves no policy in force, which makes every collection
    ``local_only``: failing closed.
    """

    def __init__(
        self, config_path: Path | None, collections: Iterable[Collection] | None = None
    ) -> None:
        """``collections`` are the policies in force now (read from ``config_path`` if None)."""
        self._path = config_path
        self._stamp = self._stat()
        if collections is None:
            collections = self._load()
        self._policies = _policies_of(collections)
        self.epoch = 0

    def _load(self) -> Iterable[Collection]:
        if self._path is None:
            return ()
        try:
            return load_config(self._path).collections
        except GnoError as exc:
            logger.warning("config unreadable, egress fails closed: %s", exc.message)
            return ()

    def _stat(self) -> tuple[int, ...] | None:
        if self._path is None:
            return None
        try:
            st = os.stat(self._path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    @property
    def policies(self) -> Mapping[str, CollectionPolicy]:
        return self._policies

    def refresh(self) -> None:
        """Re-read the policies if the config file changed; bump the epoch if they did."""
        if self._path is None:
            return
        stamp = self._stat()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        policies = _policies_of(self._load())
        if policies != self._policies:
            self._policies = policies
            self.epoch += 1


@dataclass(frozen=True, slots=True)
class EgressTicket:
    """Proof that a request passed egress under ``epoch`` (checked again before answering)."""

    epoch: int


def egress_guard(request: Request, caller: Caller, book: PolicyBook) -> Reply | EgressTicket | None:
    """Judge one request; ``None`` when it needs no judging (loopback, or no content)."""
    if request.method not in EGRESS_METHODS or caller.zone == "loopback":
        return None
    book.refresh()
    policies = book.policies
    decision = evaluate(
        zone=caller.zone,
        scope=scope_of(request.method, request.params, policies.keys()),
        policies=policies,
        authenticated=caller.authenticated,
    )
    if not decision.allowed:
        return jsonrpc_reply(
            403,
            request.id,
            {
                "code": EGRESS_ERROR_CODE,
                "message": EGRESS_DENIED_MESSAGE,
                "data": decision.denial_data(),
            },
            reason="egress",
        )
    return EgressTicket(book.epoch)


def epoch_guard(request: Request, ticket: EgressTicket | None, book: PolicyBook) -> Reply | None:
    """409 when the policies changed while the request was being served."""
    if ticket is None:
        return None
    book.refresh()
    if book.epoch == ticket.epoch:
        return None
    return jsonrpc_reply(
        409,
        request.id,
        {
            "code": EGRESS_ERROR_CODE,
            "message": POLICY_CHANGED_MESSAGE,
            "data": {"code": POLICY_CHANGED_CODE, "message": POLICY_CHANGED_MESSAGE},
        },
        reason="epoch",
    )


# -- runtime admission ------------------------------------------------------------------


class RuntimeAdmission:
    """Handles on the resident runtime: one per dispatch, none once it is closing.

    The transport capacity gate already bounds and queues requests; this is
    the runtime's own count of who is using it, so shutdown can refuse new
    work (503) and wait for the last handle before the engine closes. Taking
    a handle is synchronous (a counter), so it costs no scheduler round trip.
    """

    __slots__ = ("_idle", "active", "closing", "limit", "refused")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self.refused = 0
        self.closing = False
        self._idle: trio.Event | None = None

    def __enter__(self) -> None:
        if self.closing or self.active >= self.limit:
            self.refused += 1
            raise Draining("the resident runtime is closing")
        self.active += 1

    def __exit__(self, *exc_info: object) -> None:
        self.active -= 1
        if self.active == 0 and self._idle is not None:
            self._idle.set()

    async def drain(self, timeout: float) -> bool:
        """Refuse new handles; wait up to ``timeout`` seconds for the last one to go."""
        self.closing = True
        if self.active:
            self._idle = trio.Event()
            with trio.move_on_after(timeout):
                await self._idle.wait()
        return self.active == 0


# -- identity -----------------------------------------------------------------------------


class CallerLabels:
    """``http:<16 hex>`` per security identity, unique to this server instance.

    The label is a hash of the instance id and the identity, so two callers
    with different tokens never share a memory session, unauthenticated
    loopback callers all share one, and the bearer digest itself never
    reaches a stored record.
    """

    def __init__(self, instance_id: str) -> None:
        self._instance_id = instance_id
        self._labels: dict[str, str] = {}

    def label(self, identity: str) -> str:
        """The memory session label of ``identity`` (cached; the cache is bounded)."""
        label = self._labels.get(identity)
        if label is None:
            digest = hashlib.sha256(f"{self._instance_id}\x00{identity}".encode()).hexdigest()
            label = CALLER_LABEL_PREFIX + digest[:16]
            if len(self._labels) < 4096:
                self._labels[identity] = label
        return label


def session_belongs_to(session_identity: str, caller: Caller) -> bool:
    """A 2025-era session may only be used by the identity that created it."""
    return session_identity == caller.identity


# -- metrics ------------------------------------------------------------------------------


class TransportMetrics:
    """Counters of what the transport did; no caller, path or content is recorded."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.refusals: Counter[str] = Counter()
        self.sessions: Counter[str] = Counter()
        self.streams: Counter[str] = Counter()

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": dict(sorted(self.requests.items())),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "refusals": dict(sorted(self.refusals.items())),
            "sessions": dict(sorted(self.sessions.items())),
            "streams": dict(sorted(self.streams.items())),
        }


__all__ = [
    "CallerLabels",
    "EgressTicket",
    "PolicyBook",
    "RuntimeAdmission",
    "TransportMetrics",
    "egress_guard",
    "epoch_guard",
    "session_belongs_to",
    "write_gate",
]
