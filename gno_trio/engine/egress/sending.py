"""Sending to a judged destination: the bytes go to the URL egress policy judged, nowhere else.

An egress decision is made on the configured endpoint's URL (its network
zone). Python's default HTTP opener would then send the request through a
proxy named by ``http_proxy``/``https_proxy`` (a host nobody judged, which
sees every passage in clear on plain HTTP) and follow a redirect to wherever
the server points. The opener here does neither: it never reads proxy
variables, and a redirect is refused (:class:`RedirectRefused`) rather than
followed, since its target was never judged; the configured URL must name
the server itself.
"""

from __future__ import annotations

import email.message
import urllib.error
import urllib.request
from typing import IO


class RedirectRefused(urllib.error.URLError):
    """The endpoint redirected the request elsewhere; it was not followed."""

    def __init__(self, status: int, location: str) -> None:
        self.status = status
        self.location = location
        super().__init__(
            f"it redirected (HTTP {status}) to {location}, which was not followed: egress is "
            "judged for the configured URL only, so it must name the server itself"
        )


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: email.message.Message,
        newurl: str,
    ) -> urllib.request.Request | None:
        raise RedirectRefused(code, newurl)


def _opener() -> urllib.request.OpenerDirector:
    # An empty ProxyHandler replaces the default one, which reads the environment.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _RefuseRedirects())


def open_judged(request: urllib.request.Request, timeout: float) -> IO[bytes]:
    """Send ``request`` straight to its URL: no proxy, no redirect (:class:`RedirectRefused`).

    Raises what ``urllib.request.urlopen`` raises otherwise (``HTTPError``,
    ``URLError``, ``OSError``); the response is a context manager like urlopen's.
    """
    response: IO[bytes] = _opener().open(request, timeout=timeout)
    return response


__all__ = ["RedirectRefused", "open_judged"]
