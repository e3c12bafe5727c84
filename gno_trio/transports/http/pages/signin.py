"""Signing a browser in once when the server has a token.

The sign-in form posts the token; when it matches the token file the answer
sets it as an ``HttpOnly``, ``SameSite=Strict`` cookie, which the boundary
then accepts in place of the ``Authorization`` header (for pages, and for
``/api`` reads the pages make). The boundary re-reads the token file on every
request, so replacing the token signs every browser out as it does every
MCP client. On loopback without a token there is nothing to sign in to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import quote

from gno_trio.transports.http.boundary import SESSION_COOKIE
from gno_trio.transports.http.pages.html import page, see_other
from gno_trio.transports.http.pages.views import chrome, first
from gno_trio.transports.http.settings import SIGNIN_PATH
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.tokens import (
    MAX_TOKEN_CHARS,
    digests_match,
    read_token_file,
    token_digest,
)
from gno_trio.transports.http.wire import Reply, is_visible_ascii

_COOKIE_FLAGS: Final = "; Path=/; HttpOnly; SameSite=Strict"
_URL_SAFE: Final = "/?&=%#+:;,@!$'()*~-._"


def local_target(raw: str) -> str:
    """Where to go after signing in: a path on this server only (never another site)."""
    if raw.startswith("/") and not raw.startswith(("//", "/\\")) and raw.isprintable():
        return quote(raw, safe=_URL_SAFE)  # a Location header carries ASCII only
    return "/"


def _token_matches(call: HttpCall, token: str) -> bool:
    token_file = call.state.settings.token_file
    if token_file is None or not token or len(token) > MAX_TOKEN_CHARS:
        return False
    if not is_visible_ascii(token):
        return False
    held = read_token_file(token_file)
    return held.digest is not None and digests_match(token_digest(token), held.digest)


async def form(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """GET ``/signin``: the form (or straight on when no token is configured)."""
    target = local_target(first(params, "next", "/"))
    if not call.state.settings.auth_required:
        return see_other(target)
    return page("signin.html", **chrome(call, "signin"), target=target, failed=False)


async def submit(call: HttpCall, fields: Mapping[str, list[str]]) -> Reply:
    """POST ``/signin``: a matching token becomes the session cookie."""
    target = local_target(first(fields, "next", "/"))
    if not call.state.settings.auth_required:
        return see_other(target)
    token = first(fields, "token")
    if not _token_matches(call, token):
        return page("signin.html", 401, **chrome(call, "signin"), target=target, failed=True)
    cookie = f"{SESSION_COOKIE}={token}{_COOKIE_FLAGS}".encode("ascii")
    return see_other(target, headers=((b"set-cookie", cookie),))


async def signout(call: HttpCall, fields: Mapping[str, list[str]]) -> Reply:
    """POST ``/signout``: the cookie is dropped."""
    cookie = f"{SESSION_COOKIE}={_COOKIE_FLAGS}; Max-Age=0".encode("ascii")
    return see_other(SIGNIN_PATH, headers=((b"set-cookie", cookie),))


__all__ = ["form", "local_target", "signout", "submit"]
