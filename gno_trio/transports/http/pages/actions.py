"""The pages that change things: collections (add, sync, embed, with job progress) and capture.

A form posts to its page; the page runs the write tool an agent would call
(refused, as over ``/mcp``, unless the server was started with writes on)
and answers 303 back to a page that shows the outcome, so a reload never
posts twice. Job progress is ``gno_list_jobs`` / ``gno_job_status``: the
collections page shows it, and its live panel (``/collections/live``: the
collections' counts and the jobs) is what the page's script reloads whenever
the event stream reports a job, and while one runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlencode

from gno_trio.transports.http.pages.calls import Outcome, run_tool, served, writes_enabled
from gno_trio.transports.http.pages.html import page, see_other
from gno_trio.transports.http.pages.views import chrome, collection_choices, doc_link, first
from gno_trio.transports.http.surfaces import HttpCall
from gno_trio.transports.http.wire import Reply

JOB_LIST_LIMIT: Final = 10
COLLECTION_ACTIONS: Final[dict[str, str]] = {
    "sync": "gno_sync",
    "embed": "gno_embed",
}
"""The per-collection buttons, and the tool each one runs."""


async def _jobs(call: HttpCall) -> Outcome:
    if not served(call, "gno_list_jobs"):
        return Outcome(data={"active": [], "recent": []})
    listing = await run_tool(call, "gno_list_jobs", {"limit": JOB_LIST_LIMIT})
    if not listing.ok:
        return listing
    detailed: dict[str, list[Mapping[str, Any]]] = {}
    for group in ("active", "recent"):
        rows: list[Mapping[str, Any]] = []
        for job in listing.data.get(group, ()):
            full = await run_tool(call, "gno_job_status", {"jobId": job["jobId"]})
            rows.append(full.data if full.ok else job)
        detailed[group] = rows
    return Outcome(data=detailed)


async def _live(call: HttpCall) -> dict[str, Any]:
    """What the live panel shows: each collection's counts and the jobs with their progress."""
    jobs = await _jobs(call)  # first: counts read after a job is seen done include its work
    return {
        "index": await run_tool(call, "gno_status", {}),
        "jobs": jobs,
        "actions": list(COLLECTION_ACTIONS),
    }


async def collections(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/collections``: the live panel and the form that adds a collection."""
    return page(
        "collections.html",
        **chrome(call, "collections"),
        **await _live(call),
        notice=first(params, "notice"),
        failed=first(params, "failed"),
    )


async def live_panel(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/collections/live``: the live panel alone, for the page's script to swap in."""
    return page("live.html", **await _live(call), writes=writes_enabled(call))


def _back(path: str, outcome: Outcome, done: str) -> Reply:
    """303 to ``path`` saying what happened (the message is shown as text)."""
    if outcome.ok:
        return see_other(path + "?" + urlencode({"notice": done}))
    return see_other(path + "?" + urlencode({"failed": f"{outcome.code}: {outcome.message}"}))


async def add_collection(call: HttpCall, form: Mapping[str, list[str]]) -> Reply:
    """POST ``/collections/add``: ``gno_add_collection``; its first sync runs as a job."""
    arguments: dict[str, Any] = {"path": first(form, "path")}
    if first(form, "name"):
        arguments["name"] = first(form, "name")
    outcome = await run_tool(call, "gno_add_collection", arguments)
    named = outcome.data.get("collection", arguments.get("name", arguments["path"]))
    return _back("/collections", outcome, f"Collection {named} added; indexing as a job")


async def collection_action(call: HttpCall, form: Mapping[str, list[str]]) -> Reply:
    """POST ``/collections/run``: sync or embed one collection (or all) as a job."""
    action = first(form, "action")
    tool = COLLECTION_ACTIONS.get(action)
    if tool is None:
        return _back("/collections", Outcome(code="INVALID_INPUT", message="Unknown action"), "")
    arguments: dict[str, Any] = {}
    if first(form, "collection"):
        arguments["collection"] = first(form, "collection")
    outcome = await run_tool(call, tool, arguments)
    return _back("/collections", outcome, f"{action.capitalize()} started")


async def capture_form(call: HttpCall, params: Mapping[str, list[str]]) -> Reply:
    """``/capture``: a new note's form (writes on), or why it is not offered."""
    return page(
        "capture.html",
        **chrome(call, "capture"),
        collections=await collection_choices(call),
        failed=first(params, "failed"),
    )


async def capture(call: HttpCall, form: Mapping[str, list[str]]) -> Reply:
    """POST ``/capture``: ``gno_capture``, then the new note's own page."""
    arguments: dict[str, Any] = {
        "collection": first(form, "collection"),
        "content": form.get("content", [""])[0],
    }
    if first(form, "title"):
        arguments["title"] = first(form, "title")
    tags = [t.strip() for t in first(form, "tags").split(",") if t.strip()]
    if tags:
        arguments["tags"] = tags
    outcome = await run_tool(call, "gno_capture", arguments)
    if not outcome.ok:
        return _back("/capture", outcome, "")
    return see_other(doc_link(str(outcome.data["uri"])))


__all__ = [
    "COLLECTION_ACTIONS",
    "add_collection",
    "capture",
    "capture_form",
    "collection_action",
    "collections",
    "live_panel",
]
