"""What a request handler may know about the request it serves.

A transport builds one :class:`RequestContext` per request from the protocol
layer's :class:`~gno_trio.protocol.connection.Admission`; tool handlers receive a
:class:`ToolCallContext` view of it. Identity (``client_name``, ``session_id``)
comes from the transport and the handshake/envelope, never from tool arguments.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gno_trio.protocol.connection import Admission
from gno_trio.protocol.jsonrpc import ProgressToken, RequestId
from gno_trio.protocol.names import PROGRESS_NOTIFICATION
from gno_trio.protocol.subscriptions import ResourceSubscriptions
from gno_trio.protocol.versions import Era

DEFAULT_CLIENT_NAME: Final = "mcp"

NotificationSender = Callable[[str, Mapping[str, Any]], Awaitable[None]]
"""Sends one notification that belongs to the current request (``method``, ``params``)."""


class Cancellation:
    """A one-way "the client gave up" flag that worker threads can observe.

    Async handlers are cancelled by the transport directly; this flag exists for
    work running in a thread (for example a SQLite statement), which can poll
    :attr:`is_cancelled` or register a callback that interrupts it.
    """

    __slots__ = ("_callbacks", "_cancelled", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: list[Callable[[], object]] = []

    @property
    def is_cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Set the flag and run each registered callback once (idempotent)."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` on cancellation (now, if already cancelled); returns an unregister."""
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)

                def unregister() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return unregister
        callback()
        return lambda: None


@dataclass(slots=True, kw_only=True, eq=False)
class RequestContext:
    """One request's era, identity, ``_meta`` and out-of-band channels."""

    era: Era
    protocol_version: str
    session_id: str
    request_id: RequestId | None = None
    client_name: str = DEFAULT_CLIENT_NAME
    client_capabilities: Mapping[str, Any] = field(default_factory=dict)
    log_level: str | None = None
    progress_token: ProgressToken | None = None
    custom_meta: Mapping[str, Any] = field(default_factory=dict)
    cancellation: Cancellation = field(default_factory=Cancellation)
    send_notification: NotificationSender | None = None
    # The connection's or session's resource subscriptions (None: not offered).
    subscriptions: ResourceSubscriptions | None = None
    _last_progress: float | None = field(default=None, init=False)
    _finished: bool = field(default=False, init=False)

    @classmethod
    def from_admission(
        cls,
        admission: Admission,
        *,
        session_id: str,
        request_id: RequestId | None = None,
        send_notification: NotificationSender | None = None,
        subscriptions: ResourceSubscriptions | None = None,
    ) -> RequestContext:
        return cls(
            era=admission.era,
            protocol_version=admission.protocol_version,
            session_id=session_id,
            request_id=request_id,
            client_name=admission.client_name or DEFAULT_CLIENT_NAME,
            client_capabilities=admission.client_capabilities,
            log_level=admission.log_level,
            progress_token=admission.progress_token,
            custom_meta=admission.custom_meta,
            send_notification=send_notification,
            subscriptions=subscriptions,
        )

    @property
    def finished(self) -> bool:
        return self._finished

    def finish(self) -> None:
        """Mark the response as sent: no notification may follow it."""
        self._finished = True

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` if the client asked for it; returns whether it was sent.

        Nothing is sent without a progress token, after the response, or when
        ``progress`` does not strictly increase (the spec requires it to).
        """
        if self.progress_token is None or self.send_notification is None or self._finished:
            return False
        if self._last_progress is not None and progress <= self._last_progress:
            return False
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.send_notification(PROGRESS_NOTIFICATION, params)
        return True


class ToolCallContext:
    """The view of a request a tool handler gets: its :class:`RequestContext` plus the tool name."""

    __slots__ = ("request", "tool_name")

    def __init__(self, request: RequestContext, tool_name: str) -> None:
        self.request = request
        self.tool_name = tool_name

    @property
    def era(self) -> Era:
        return self.request.era

    @property
    def protocol_version(self) -> str:
        return self.request.protocol_version

    @property
    def client_name(self) -> str:
        """Memory ``caller``: the client's implementation name, or ``"mcp"`` when it sent none."""
        return self.request.client_name

    @property
    def session_id(self) -> str:
        """Memory ``session``: the HTTP session id or the stdio server instance id."""
        return self.request.session_id

    @property
    def request_id(self) -> RequestId | None:
        return self.request.request_id

    @property
    def progress_token(self) -> ProgressToken | None:
        return self.request.progress_token

    @property
    def custom_meta(self) -> Mapping[str, Any]:
        """``_meta`` keys other than the reserved envelope keys, exactly as the client sent them."""
        return self.request.custom_meta

    @property
    def cancellation(self) -> Cancellation:
        return self.request.cancellation

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        return await self.request.report_progress(progress, total, message)
