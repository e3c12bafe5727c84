"""Request guards shared by both protocol eras, run after admission and before the era split.

* the write gate: a write tool is refused with 403 before dispatch unless the
  gateway was started with writes enabled (a bearer token never grants writes);
* egress: every request that can return collection content is judged against
  the socket peer's zone and the current policy of each collection it touches
  (403 ``EGRESS_DENIED`` with the redacted audit);
* the authorization epoch: collection policies are re-read when ``index.yml``
  changes, and a request judged under one epoch whose answer is ready under
  another is answered 409 ``EGRESS_POLICY_CHANGED`` instead. In team mode
  ``index.yml`` mirrors the store's config row, and the row's revision is
  looked up before that last check, so a change made on any host counts.

Caller identity lives in :mod:`.identity`, runtime handles in
:mod:`.runtime_admission`, counters in :mod:`.metrics`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import trio

from gno_trio.config import Collection, load_config
from gno_trio.engine.egress_rules import (
    EGRESS_DENIED_MESSAGE,
    EGRESS_METHODS,
    CollectionPolicy,
    egress_scope_of,
    evaluate_egress,
)
from gno_trio.errors import GnoError
from gno_trio.protocol.jsonrpc import Request
from gno_trio.server.unavailable import HTTP_SWITCHES
from gno_trio.transports.http.boundary import Caller
from gno_trio.transports.http.wire import BOUNDARY_ERROR_CODE, Reply, jsonrpc_reply

logger = logging.getLogger("gno_trio.transports.http")

EGRESS_ERROR_CODE: Final = -32003
WRITE_DISABLED_CODE: Final = "WRITE_DISABLED"
POLICY_CHANGED_CODE: Final = "EGRESS_POLICY_CHANGED"
POLICY_CHANGED_MESSAGE: Final = "Collection policy changed; retry"


# -- write gate -------------------------------------------------------------------------


def write_gate(
    request: Request, *, write_enabled: bool, write_tools: Container[str]
) -> Reply | None:
    """403 for a ``tools/call`` of a write tool while writes are disabled.

    The refusal echoes the request id and names the flag that allows the
    call (``WRITE_DISABLED`` in ``data.code``, as GNO's tools report it).
    """
    if write_enabled or request.method != "tools/call" or request.params is None:
        return None
    name = request.params.get("name")
    if not isinstance(name, str) or name not in write_tools:
        return None
    flag = HTTP_SWITCHES.enable_write
    return jsonrpc_reply(
        403,
        request.id,
        {
            "code": BOUNDARY_ERROR_CODE,
            "message": f"Tool {name} is a write tool and writes are disabled on this gateway; "
            f"start it with {flag} to allow it",
            "data": {"code": WRITE_DISABLED_CODE, "name": name, "enabledBy": [flag]},
        },
        reason="write-disabled",
    )


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
        self,
        config_path: Path | None,
        collections: Iterable[Collection] | None = None,
        *,
        follow: Callable[[], object] | None = None,
    ) -> None:
        """``collections`` are the policies in force now (read from ``config_path`` if None).

        ``follow`` (team mode) brings ``config_path`` up to the shared
        configuration's revision; it blocks, so it runs in a worker thread,
        and only before a judged request's answer (:func:`epoch_guard`).
        """
        self._path = config_path
        self._follow = follow
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

    async def confirm(self) -> None:
        """:meth:`refresh`, after catching up with the shared configuration (team mode).

        ``GnoError`` when the store cannot say which revision is current.
        """
        if self._follow is not None:
            await trio.to_thread.run_sync(self._follow)
        self.refresh()


@dataclass(frozen=True, slots=True)
class EgressTicket:
    """Proof that a request passed egress under ``epoch`` (checked again before answering)."""

    epoch: int


def egress_guard(
    request: Request, caller: Caller, book: PolicyBook, tool_classes: Mapping[str, str]
) -> Reply | EgressTicket | None:
    """Judge one request; ``None`` when it needs no judging (loopback, or no content).

    ``tool_classes``: each tool's egress content class, as its module declares it.
    """
    if request.method not in EGRESS_METHODS or caller.zone == "loopback":
        return None
    book.refresh()
    policies = book.policies
    decision = evaluate_egress(
        zone=caller.zone,
        scope=egress_scope_of(request.method, request.params, policies.keys(), tool_classes),
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


async def epoch_guard(
    request: Request, ticket: EgressTicket | None, book: PolicyBook
) -> Reply | None:
    """409 when the policies changed while the request was being served.

    A team store that cannot confirm its revision fails closed: the answer
    is withheld and the caller gets the store's error (it may retry).
    """
    if ticket is None:
        return None
    try:
        await book.confirm()
    except GnoError as exc:
        logger.warning("policy revision unconfirmed, answer withheld: %s", exc.message)
        return jsonrpc_reply(
            exc.kind.http_status,
            request.id,
            {"code": EGRESS_ERROR_CODE, "message": exc.message, "data": {"code": exc.code}},
            reason="epoch",
        )
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


__all__ = [
    "EgressTicket",
    "PolicyBook",
    "egress_guard",
    "epoch_guard",
    "write_gate",
]
