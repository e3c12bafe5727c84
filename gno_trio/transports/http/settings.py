"""Gateway settings: where they come from, whether they are safe, what they mean once bound.

Three layers, highest first: command-line flags, the ``gateway`` key of
``index.yml``, built-in defaults. The result is checked before any socket is
opened: a wildcard or non-loopback listener needs a bearer token file plus
explicit Host and Origin allow-lists, and ``serve`` (which would one day share
its listener with a browser UI) never leaves loopback. Only once the socket is
bound, and so the real port known, are the loopback default allow-lists
derived (:func:`bind_listener`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from gno_trio.config import Gateway, GatewayLimits
from gno_trio.config.rules import ConfigValueError
from gno_trio.errors import GnoError
from gno_trio.protocol.subscriptions import LISTEN_LIFETIME_SECONDS
from gno_trio.server.registry import parse_profile
from gno_trio.transports.deadlines import ANSWER_DEADLINE_SECONDS, SEND_GRACE_SECONDS

Mode = Literal["serve", "daemon"]

MCP_PATH: Final = "/mcp"
STATUS_PATH: Final = "/api/resident/status"
METRICS_PATH: Final = "/api/resident/metrics"
SIGNIN_PATH: Final = "/signin"
"""The workspace's sign-in page: reachable without credentials, like its static files."""
STATIC_PREFIX: Final = "/static/"
API_PREFIX: Final = "/api/"
"""Every path under it (but the two resident paths above) belongs to the REST API."""

UNSAFE_BIND_CODE: Final = "GATEWAY_BIND_REFUSED"
_WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", "[::]", "*", ""})


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """Everything the gateway needs before it binds, already merged and validated."""

    mode: Mode = "serve"
    host: str = "127.0.0.1"
    port: int = 3000
    token_file: Path | None = None
    allowed_hosts: tuple[str, ...] | None = None
    """``None``: derive loopback defaults; an explicit empty tuple allows nothing."""
    allowed_origins: tuple[str, ...] | None = None
    enable_write: bool = False
    tool_profile: str = "full"
    limits: GatewayLimits = field(default_factory=GatewayLimits)
    body_timeout: float = 30.0
    """Seconds a client gets to deliver a whole request body (slow-drip protection)."""
    drain_timeout: float = 10.0
    """Seconds work other than MCP requests (a session's DELETE) gets after SIGINT/SIGTERM."""
    answer_deadline: float = ANSWER_DEADLINE_SECONDS
    """Each MCP request's own deadline once the gateway drains, from when it was read."""
    stream_keepalive: float = 15.0
    """Seconds between SSE comment lines on an idle GET stream."""
    stream_lifetime: float = LISTEN_LIFETIME_SECONDS
    """Seconds a long stream (``subscriptions/listen``, ``/api/events``) lives before the
    server ends it with a final event (the client opens a new one)."""
    caller_key_file: Path | None = None
    """The key file callers are labelled with (one per data directory, shared by every
    worker); ``None``: a key of this process alone (its instance id)."""

    @property
    def longest_drain(self) -> float:
        """The longest a drain may wait: a request read just before it, then sent."""
        return max(self.drain_timeout, self.answer_deadline + SEND_GRACE_SECONDS)

    @property
    def write_timeout(self) -> float:
        """Seconds a client gets to take each 64 KiB of an answer (or one SSE event).

        A client that does not read within it loses its connection, and with it
        every slot its request held.
        """
        return self.limits.write_timeout_ms / 1000.0

    @property
    def keep_alive_timeout(self) -> float:
        """Seconds an idle keep-alive connection stays open between requests."""
        return self.limits.keep_alive_timeout_ms / 1000.0

    @property
    def loopback_bind(self) -> bool:
        return is_loopback_host(self.host)

    @property
    def auth_required(self) -> bool:
        """A bearer token is demanded off loopback, or whenever a token file is configured."""
        return self.token_file is not None or not self.loopback_bind

    @property
    def serves_workspace(self) -> bool:
        """The web workspace at ``/`` is for the person at this machine: ``serve`` only."""
        return self.mode == "serve"


def is_wildcard_host(host: str) -> bool:
    return host.strip() in _WILDCARD_HOSTS


def is_loopback_host(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1``; wildcards are never loopback."""
    value = host.strip().strip("[]")
    if value.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(value).is_loopback
    except ValueError:
        return False


def settings_from_config(
    gateway: Gateway,
    *,
    mode: Mode,
    host: str | None = None,
    port: int | None = None,
    token_file: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    enable_write: bool = False,
    tool_profile: str | None = None,
    caller_key_file: Path | None = None,
) -> GatewaySettings:
    """Merge flags over ``gateway`` config; bad values raise ``GnoError('VALIDATION')``.

    A flag left at ``None`` (or an empty repeatable flag) defers to the config;
    ``enable_write`` can only switch writes on, never off. ``caller_key_file``
    is passed through (:attr:`GatewaySettings.caller_key_file`).
    """
    changes: dict[str, Any] = {}
    if host is not None:
        changes["host"] = host
    if port is not None:
        changes["port"] = port
    if token_file is not None:
        changes["token_file"] = Path(token_file)
    if allowed_hosts:
        changes["allowed_hosts"] = tuple(allowed_hosts)
    if allowed_origins:
        changes["allowed_origins"] = tuple(allowed_origins)
    try:
        merged = attrs.evolve(gateway, **changes)
    except (ConfigValueError, ValueError, TypeError) as exc:
        raise GnoError("VALIDATION", f"Invalid gateway option: {exc}") from None
    profile = parse_profile(tool_profile if tool_profile is not None else merged.tool_profile)
    token_path = merged.token_file.expanduser() if merged.token_file is not None else None
    return GatewaySettings(
        mode=mode,
        host=merged.host.strip(),
        port=merged.port,
        token_file=token_path,
        allowed_hosts=merged.allowed_hosts,
        allowed_origins=merged.allowed_origins,
        enable_write=enable_write or merged.enable_write,
        tool_profile=profile,
        limits=merged.limits,
        caller_key_file=caller_key_file,
    )


def check_bind(settings: GatewaySettings) -> None:
    """Refuse listeners that would be reachable without all three controls.

    Raises ``GnoError(GATEWAY_BIND_REFUSED)`` (a runtime failure, exit 2).
    """
    if settings.loopback_bind:
        return
    where = "a wildcard address" if is_wildcard_host(settings.host) else repr(settings.host)
    if settings.mode == "serve":
        raise GnoError(
            UNSAFE_BIND_CODE,
            f"serve listens on loopback only (asked for {where}); "
            "use `daemon` for an authenticated non-loopback MCP listener",
        )
    missing = []
    if settings.token_file is None:
        missing.append("a bearer token file (--mcp-token-file / gateway.tokenFile)")
    if not settings.allowed_hosts:
        missing.append("an exact Host allow-list (--mcp-allowed-host / gateway.allowedHosts)")
    if not settings.allowed_origins:
        missing.append("an exact Origin allow-list (--mcp-allowed-origin / gateway.allowedOrigins)")
    if missing:
        raise GnoError(
            UNSAFE_BIND_CODE,
            f"refusing to listen on {where} without " + ", ".join(missing),
        )


def _url_host(host: str) -> str:
    value = host.strip().strip("[]")
    if value.lower() == "localhost":
        return "127.0.0.1"
    return f"[{value}]" if ":" in value else value


def bind_address(host: str) -> tuple[str, int]:
    """The address family-neutral host to bind (``localhost`` binds ``127.0.0.1``)."""
    value = host.strip().strip("[]")
    if value.lower() == "localhost":
        return "127.0.0.1", 4
    if value in ("", "*"):
        return "0.0.0.0", 4
    return value, 6 if ":" in value else 4


@dataclass(frozen=True, slots=True)
class Listener:
    """The settings as they apply to one bound socket (real port known)."""

    settings: GatewaySettings
    port: int
    allowed_hosts: frozenset[str]
    allowed_origins: frozenset[str]
    url: str

    @property
    def mcp_url(self) -> str:
        return self.url + MCP_PATH


def bind_listener(settings: GatewaySettings, port: int) -> Listener:
    """Fill in the loopback default allow-lists for the port actually bound.

    Entries compare case-insensitively, so they are stored lower-cased.
    """
    url_host = _url_host(settings.host)
    if settings.allowed_hosts is not None:
        hosts = tuple(settings.allowed_hosts)
    elif settings.loopback_bind:
        hosts = (f"{url_host}:{port}", f"localhost:{port}")
    else:
        hosts = ()
    if settings.allowed_origins is not None:
        origins = tuple(settings.allowed_origins)
    elif settings.loopback_bind:
        origins = tuple(f"http://{entry}" for entry in hosts)
    else:
        origins = ()
    if settings.loopback_bind or not hosts:
        base = f"http://{url_host}:{port}"
    else:
        base = f"http://{hosts[0]}"
    return Listener(
        settings=settings,
        port=port,
        allowed_hosts=frozenset(entry.lower() for entry in hosts),
        allowed_origins=frozenset(entry.lower() for entry in origins),
        url=base,
    )


__all__ = [
    "API_PREFIX",
    "MCP_PATH",
    "METRICS_PATH",
    "SIGNIN_PATH",
    "STATIC_PREFIX",
    "STATUS_PATH",
    "UNSAFE_BIND_CODE",
    "GatewaySettings",
    "Listener",
    "Mode",
    "bind_address",
    "bind_listener",
    "check_bind",
    "is_loopback_host",
    "is_wildcard_host",
    "settings_from_config",
]
