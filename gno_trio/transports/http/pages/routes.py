"""The workspace's routes: every path outside ``/mcp`` and ``/api/``.

Reads are GET; changes are form POSTs, each of which must come from one of
the server's own pages: an ``Origin`` header is required (the boundary has
already refused any origin outside the allow-list), so a form on another
site can neither post here nor, with the cookie ``SameSite=Strict``, post as
a signed-in browser. Page work runs admitted (a capacity slot and a runtime
slot, cancelled when the browser goes away); static files and the sign-in
form do not need the runtime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Final
from urllib.parse import parse_qs

from gno_trio.transports.http.pages import actions, signin, views
from gno_trio.transports.http.pages.calls import writes_enabled
from gno_trio.transports.http.pages.html import page, static_reply
from gno_trio.transports.http.settings import SIGNIN_PATH, STATIC_PREFIX
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Refused, Reply

Params = Mapping[str, list[str]]
View = Callable[[HttpCall, Params], Awaitable[Reply]]

READS: Final[dict[str, View]] = {
    "/": views.search,
    "/search": views.search,
    "/doc": views.document,
    "/browse": views.browse,
    "/ask": views.ask,
    "/status": views.status,
    "/collections": actions.collections,
    "/collections/live": actions.live_panel,
    "/capture": actions.capture_form,
}
WRITES: Final[dict[str, View]] = {
    "/collections/add": actions.add_collection,
    "/collections/run": actions.collection_action,
    "/capture": actions.capture,
}
"""Form POSTs that run a write tool (refused unless writes are enabled)."""
SESSION: Final[dict[str, tuple[View, View | None]]] = {
    SIGNIN_PATH: (signin.form, signin.submit),
    "/signout": (signin.form, signin.signout),
}
_FORM: Final = "application/x-www-form-urlencoded"
_MAX_FIELDS: Final = 32


def _refused(call: HttpCall, status: int, message: str) -> Refused:
    return Refused(
        page("error.html", status, **views.chrome(call, "error"), message=message),
    )


def _allow(path: str) -> list[str]:
    methods = []
    if path in READS or path in SESSION:
        methods.append("GET")
    if path in WRITES or path in SESSION:
        methods.append("POST")
    return methods


async def _form(call: HttpCall) -> Params | None:
    """The posted form, or a refusal: a POST not from one of our pages, or not a form."""
    headers = call.exchange.headers
    if headers.get("origin") is None:
        raise _refused(call, 403, "A form must be sent from one of this server's pages")
    kind = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if kind != _FORM:
        raise _refused(call, 415, "Forms are sent as application/x-www-form-urlencoded")
    body = await call.read_body()
    if body is None:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused(call, 400, "The form is not UTF-8") from None
    return _fields(call, text, keep_blank=True)


def _fields(call: HttpCall, text: str, *, keep_blank: bool) -> Params:
    try:
        return parse_qs(text, keep_blank_values=keep_blank, max_num_fields=_MAX_FIELDS)
    except ValueError:
        raise _refused(call, 400, "Too many fields") from None


async def serve(call: HttpCall) -> None:
    """Answer one request for the workspace (a :data:`~.surfaces.Surface`)."""
    path, method = call.path, call.method
    if path.startswith(STATIC_PREFIX) and method == "GET":
        reply = static_reply(path[len(STATIC_PREFIX) :])
        if reply is None:
            raise _refused(call, 404, "No such file")
        await call.send_reply(reply)
        return
    allowed = _allow(path)
    if not allowed:
        raise _refused(call, 404, f"No page at {path}")
    if method not in allowed:
        refusal = page("error.html", 405, **views.chrome(call, "error"), message="Wrong method")
        allow = (b"allow", ", ".join(allowed).encode("ascii"))
        raise Refused(replace(refusal, headers=(*refusal.headers, allow)))
    call.state.metrics.requests["pages"] += 1
    if method == "GET":
        params = _fields(call, call.query_string.decode("utf-8", "replace"), keep_blank=False)
        if path in SESSION:
            await call.send_reply(await SESSION[path][0](call, params))
            return
        if path == "/capture" and not writes_enabled(call):
            raise _refused(call, 403, "Capture needs a server started with writes enabled")
        view = READS[path]
    else:
        form = await _form(call)
        if form is None:
            return
        params = form
        submit = SESSION[path][1] if path in SESSION else None
        if submit is not None:
            await call.send_reply(await submit(call, params))
            return
        view = WRITES[path]

    async def work() -> None:
        await call.send_reply(await view(call, params))

    await call.admitted(work)


__all__ = ["READS", "SESSION", "WRITES", "serve"]
