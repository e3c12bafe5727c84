"""The external boundary: every HTTP request passes here before a byte of JSON is parsed.

Checks, in order, each answering the closed ``mcp-http-error`` body:

1. peer: the socket address hypercorn reports (``scope["client"]``), never a
   ``Forwarded``/``X-Forwarded-*`` header; a loopback listener serves loopback
   peers only (403);
2. ``Host`` exactly in the allow-list, ``Origin`` (when sent) exactly in its
   allow-list (403);
3. the bearer token, when required: the token file is re-read now; a file that
   changed since the last request revokes authenticated sessions, a file that
   is unusable refuses everyone (503), a missing or wrong token is 401.
   Outside ``/mcp`` a signed-in browser's ``HttpOnly`` cookie carries the same
   token; on a request that changes state it counts only beside an ``Origin``
   header (which check 2 has held to the allow-list), so another site's form
   never acts with it. The sign-in page and the static files need no token.
   Failed attempts draw on their own per-peer budget (429 once spent), so a
   flood of bad or missing tokens never uses up a token holder's budget;
4. the rate limit of the caller (429, with ``Retry-After``): per token when
   authenticated, per peer otherwise;
5. the declared body length (413). The streamed length and the time to deliver
   the body are enforced by :func:`read_body`.

Every loopback address (``127.0.0.0/8``, ``::1``) is one peer for both
budgets: on one machine, picking another source address is free.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import trio

from gno_trio.engine.egress_rules import Zone, classify_peer
from gno_trio.transports.http.settings import MCP_PATH, SIGNIN_PATH, STATIC_PREFIX, Listener
from gno_trio.transports.http.tokens import (
    MAX_TOKEN_CHARS,
    TokenFileState,
    digests_match,
    read_token_file,
    token_digest,
)
from gno_trio.transports.http.wire import (
    Receive,
    Reply,
    RequestHeaders,
    Scope,
    boundary_reply,
    is_visible_ascii,
    jsonrpc_reply,
)
from nurseries import FixedWindowRateLimiter

LOOPBACK_IDENTITY: Final = "loopback"
ANONYMOUS_IDENTITY: Final = "anonymous"
"""A caller without credentials on a path that needs none (the sign-in page, static files)."""
SESSION_COOKIE: Final = "gno_token"
"""The cookie a signed-in browser holds the token in (``HttpOnly``, ``SameSite=Strict``)."""
_SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
RATE_WINDOW_SECONDS: Final = 60.0
FAILED_AUTH_PER_WINDOW: Final = 30
"""Failed authentications one peer may make per rate window before it gets 429."""
MAX_RATE_KEYS: Final = 4096
_MAX_ZONE_CACHE: Final = 4096
_WWW_AUTHENTICATE: Final = ((b"www-authenticate", b"Bearer"),)
_BEARER_PREFIX: Final = "bearer "


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is on the other end of one request, as far as the boundary can tell."""

    peer: str | None
    zone: Zone
    identity: str
    """``"loopback"`` for unauthenticated loopback callers, else ``"bearer:<sha256 hex>"``."""
    authenticated: bool


BEARER_PREFIX: Final = "bearer:"


def bearer_identity(digest: bytes) -> str:
    """The security identity of a token holder: its digest, never the token."""
    return BEARER_PREFIX + digest.hex()


class Boundary:
    """Stateful checks (rate windows, the last token revision) for one listener."""

    def __init__(
        self,
        listener: Listener,
        *,
        token_state: TokenFileState | None,
        on_credentials_changed: Callable[[], None],
    ) -> None:
        settings = listener.settings
        self._listener = listener
        self._loopback_only = settings.loopback_bind
        self._auth_required = settings.auth_required
        self._token_file = settings.token_file
        self._max_body = settings.limits.max_body_bytes
        self._rate = FixedWindowRateLimiter(
            settings.limits.max_requests_per_minute, RATE_WINDOW_SECONDS, MAX_RATE_KEYS
        )
        self._failed_auth = FixedWindowRateLimiter(
            FAILED_AUTH_PER_WINDOW, RATE_WINDOW_SECONDS, MAX_RATE_KEYS
        )
        self._last_revision = token_state.revision if token_state is not None else None
        self._on_credentials_changed = on_credentials_changed
        self._zones: dict[str | None, Zone] = {}

    def _zone(self, peer: str | None) -> Zone:
        zone = self._zones.get(peer)
        if zone is None:
            if len(self._zones) >= _MAX_ZONE_CACHE:
                self._zones.clear()
            zone = self._zones[peer] = classify_peer(peer)
        return zone

    def check(self, scope: Scope, headers: RequestHeaders) -> Caller | Reply:
        """Run checks 1-5; a :class:`Reply` means the request is refused."""
        client = scope.get("client")
        peer: str | None = client[0] if client else None
        zone = self._zone(peer)
        if self._loopback_only and zone != "loopback":
            return boundary_reply(403, "peer")
        host = headers.get("host")
        if host is None or headers.repeated("host"):
            return boundary_reply(403, "host")
        if host.strip().lower() not in self._listener.allowed_hosts:
            return boundary_reply(403, "host")
        origin = headers.get("origin")
        if origin is not None and (
            headers.repeated("origin")
            or origin.strip().lower() not in self._listener.allowed_origins
        ):
            return boundary_reply(403, "origin")
        peer_key = LOOPBACK_IDENTITY if zone == "loopback" else peer
        path: str = scope.get("path", "")
        method: str = scope.get("method", "GET")
        if self._auth_required:
            identity_or_refusal = self._authenticate(headers, path, method)
            if isinstance(identity_or_refusal, Reply):
                if identity_or_refusal.status != 401:
                    return identity_or_refusal
                if _needs_no_token(path, method):
                    caller = Caller(peer, zone, ANONYMOUS_IDENTITY, authenticated=False)
                    rate_key: str | None = peer_key
                else:
                    spent = _over_budget(self._failed_auth, peer_key, "auth-rate")
                    return spent if spent is not None else identity_or_refusal
            else:
                caller = Caller(peer, zone, identity_or_refusal, authenticated=True)
                rate_key = identity_or_refusal
        else:
            caller = Caller(peer, zone, LOOPBACK_IDENTITY, authenticated=False)
            rate_key = peer_key
        spent = _over_budget(self._rate, rate_key, "rate")
        if spent is not None:
            return spent
        declared = headers.get("content-length")
        if declared is not None:
            try:
                too_large = int(declared) > self._max_body
            except ValueError:
                return jsonrpc_reply(
                    400,
                    None,
                    {"code": -32600, "message": "Invalid Content-Length"},
                    reason="content-length",
                    close=True,
                )
            if too_large:
                return boundary_reply(413, "body-declared", close=True)
        return caller

    def _authenticate(self, headers: RequestHeaders, path: str, method: str) -> str | Reply:
        presented = _bearer_digest(headers)
        cookie_allowed = method in _SAFE_METHODS or headers.get("origin") is not None
        if presented is None and path != MCP_PATH and cookie_allowed:
            presented = _cookie_digest(headers)
        if presented is None:  # nothing to check, so no reason to read the file
            return boundary_reply(401, "auth", headers=_WWW_AUTHENTICATE)
        digest = self.current_digest()
        if digest is None:
            return boundary_reply(503, "credentials-unavailable")
        if not digests_match(presented, digest):
            return boundary_reply(401, "auth", headers=_WWW_AUTHENTICATE)
        return bearer_identity(digest)

    def current_digest(self) -> bytes | None:
        """Re-read the token file: the digest it holds (None when unusable).

        A file that changed since the last reading starts revoking
        authenticated sessions (and with them their GET streams); a caller
        with the old token is refused from now on either way.
        """
        assert self._token_file is not None
        state = read_token_file(self._token_file)
        if state.transient:  # out of descriptors: refuse this request, revoke nothing
            return None
        if state.revision != self._last_revision:
            self._last_revision = state.revision
            self._on_credentials_changed()
        return state.digest


def _over_budget(limiter: FixedWindowRateLimiter, key: str | None, reason: str) -> Reply | None:
    """Count one request against ``key``'s budget; the 429 to answer once it is spent."""
    decision = limiter.check(key)
    if decision.allowed:
        return None
    retry = str(max(1, math.ceil(decision.retry_after))).encode("ascii")
    return boundary_reply(429, reason, headers=((b"retry-after", retry),))


def _needs_no_token(path: str, method: str) -> bool:
    """The sign-in page (to show and post it) and the static files it uses."""
    if path == SIGNIN_PATH:
        return method in _SAFE_METHODS or method == "POST"
    return path.startswith(STATIC_PREFIX) and method in _SAFE_METHODS


def _cookie_digest(headers: RequestHeaders) -> bytes | None:
    """The digest of the token a signed-in browser's session cookie holds."""
    raw = headers.get("cookie")
    if raw is None:
        return None
    for pair in raw.split(";"):
        name, sep, value = pair.strip().partition("=")
        if sep and name == SESSION_COOKIE:
            return _token_digest_of(value.strip())
    return None


def _token_digest_of(token: str) -> bytes | None:
    if not token or len(token) > MAX_TOKEN_CHARS or not is_visible_ascii(token):
        return None
    return token_digest(token)


def _bearer_digest(headers: RequestHeaders) -> bytes | None:
    if headers.repeated("authorization"):
        return None
    value = headers.get("authorization")
    if value is None or value[: len(_BEARER_PREFIX)].lower() != _BEARER_PREFIX:
        return None
    return _token_digest_of(value[len(_BEARER_PREFIX) :].strip())


class ClientGone(Exception):
    """The client disconnected before its request body arrived."""


async def read_body(receive: Receive, *, max_bytes: int, timeout: float) -> bytes | Reply:
    """The whole request body, or a refusal: 413 past ``max_bytes``, 408 past ``timeout``.

    Both refusals close the connection, since the rest of the body is never read.
    Raises :class:`ClientGone` when the client hangs up first.
    """
    chunks: list[bytes] = []
    size = 0
    with trio.move_on_after(timeout):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk: bytes = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > max_bytes:
                    return boundary_reply(413, "body-streamed", close=True)
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return jsonrpc_reply(
        408,
        None,
        {"code": -32000, "message": "Request body timeout"},
        reason="body-timeout",
        close=True,
    )


__all__ = [
    "ANONYMOUS_IDENTITY",
    "BEARER_PREFIX",
    "LOOPBACK_IDENTITY",
    "SESSION_COOKIE",
    "Boundary",
    "Caller",
    "ClientGone",
    "bearer_identity",
    "read_body",
]
