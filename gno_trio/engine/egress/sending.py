"""Sending to a judged destination: the bytes go to the URL egress policy judged, nowhere else.

An egress decision is made on the configured endpoint's URL (its network
zone). Python's default HTTP opener would then send the request through a
proxy named by ``http_proxy``/``https_proxy`` (a host nobody judged, which
sees every passage in clear on plain HTTP) and follow a redirect to wherever
the server points. The opener here does neither: it never reads proxy
variables, and a redirect is refused (:class:`RedirectRefused`) rather than
followed, since its target was never judged; the configured URL must name
the server itself.

Every model endpoint (query expansion and reranking, embeddings, answer
generation) is spoken to the same way, :func:`post_json`: a JSON body POSTed
through that opener, an answer read up to a byte limit and parsed as JSON.
What can go wrong is one :class:`PostFailed` with its :data:`FailureKind`;
each caller words it for its own users and error code.
"""

from __future__ import annotations

import email.message
import json
import urllib.error
import urllib.request
from typing import IO, Any, Final, Literal, NamedTuple
from urllib.parse import urlsplit


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


FailureKind = Literal["redirected", "status", "timeout", "unreachable", "too_large", "not_json"]
"""Why a POST got no usable answer: refused redirect, HTTP error status, no answer in
time, no connection, an answer over the byte limit, an answer that is not JSON."""

_DETAIL_BYTES: Final = 512
_JSON_HEADERS: Final = {"Content-Type": "application/json", "Accept": "application/json"}


class PostFailed(Exception):
    """A :func:`post_json` that got no usable answer, and why."""

    def __init__(
        self, kind: FailureKind, *, reason: str = "", status: int = 0, detail: str = ""
    ) -> None:
        self.kind: FailureKind = kind
        self.reason = reason  # what the network layer said (redirected, timeout, unreachable)
        self.status = status  # the HTTP status ("status")
        self.detail = detail  # the start of the error body ("status"), stripped
        super().__init__(kind, reason or status or detail)


def _error_body(error: urllib.error.HTTPError) -> str:
    try:
        return error.read(_DETAIL_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return ""


class Endpoint(NamedTuple):
    """A model endpoint named as ``http(s)://host/path#model``."""

    url: str  # what is judged and POSTed to (the fragment is not sent)
    model: str  # the fragment: the model name to ask for ("" when there is none)
    last_segment: str  # the URL path's last segment (a name some callers fall back on)


def parse_endpoint(uri: str) -> Endpoint | None:
    """``uri`` as an :class:`Endpoint`, or ``None`` when it is not an HTTP(S) URL with a host."""
    url, _, fragment = uri.partition("#")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return Endpoint(url, fragment, parts.path.rstrip("/").rpartition("/")[2])


def post_json(url: str, body: Any, *, timeout: float, max_bytes: int) -> Any:
    """POST ``body`` as JSON (UTF-8) to ``url`` through :func:`open_judged`; the parsed answer.

    Raises :class:`PostFailed`; nothing is retried.
    """
    request = urllib.request.Request(
        url,
        data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        headers=_JSON_HEADERS,
        method="POST",
    )
    try:
        with open_judged(request, timeout=timeout) as response:
            raw = response.read(max_bytes + 1)
    except RedirectRefused as exc:
        raise PostFailed("redirected", reason=str(exc.reason)) from None
    except urllib.error.HTTPError as exc:
        raise PostFailed("status", status=exc.code, detail=_error_body(exc)) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        timed_out = isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError)
        raise PostFailed("timeout" if timed_out else "unreachable", reason=str(reason)) from None
    if len(raw) > max_bytes:
        raise PostFailed("too_large")
    try:
        return json.loads(raw)
    except ValueError:
        raise PostFailed("not_json") from None


__all__ = [
    "Endpoint",
    "FailureKind",
    "PostFailed",
    "RedirectRefused",
    "open_judged",
    "parse_endpoint",
    "post_json",
]
