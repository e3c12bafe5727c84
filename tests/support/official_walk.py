"""Every tool called twice, once well and once badly, through any MCP client.

An agent host lists the tools first (which arms its client's check of each
answer against the tool's ``outputSchema``), then calls them, and shows the
model either the answer or the error text. :func:`walk` does the same
through a :data:`Caller` (the official Python client, a TypeScript client
driven over a pipe, or the app in process) and reports, per call, what the
client handed back: a result in its wire form, or what it threw.

:data:`STEPS` holds one row per tool: a valid call (arguments may be built
from earlier answers: a trace id, a job id, a Capsule, a plan digest) and a
bad one (a missing required argument, an unknown collection or document, a
malformed query). :func:`walk_problems` turns a walk into the list of
everything a host would have got wrong; an empty list is a pass.

The walk writes (captures, folders, renames, a collection added and removed),
each name carrying the walk's own label, so several walks can share one
index one after another.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine

Outcome = dict[str, Any]
"""``{"result": <CallToolResult as on the wire>}`` or ``{"thrown": {name, code, message}}``."""

Caller = Callable[[str, dict[str, Any]], Awaitable[Outcome]]
"""Calls one tool through a client and reports what the client handed back."""

Arguments = Mapping[str, Any] | Callable[["WalkState"], Mapping[str, Any]]

SCOPE = "project:walk"
MISSING_DOC = "gno://notes/no-such-note.md"
MISSING_COLLECTION = "no-such-collection"
ERROR_TEXT = re.compile(r"^Error: ([A-Za-z][A-Za-z0-9_]*): (.+)", re.DOTALL)
APPLY = {"action": "apply", "schemaVersion": "1.0", "confirmation": "apply", "confirm": True}
EGRESS_CHECK = {
    "collections": ["notes"],
    "action": "serve",
    "destinationZone": "remote",
    "caller": {"authenticated": True, "operationAuthorized": True},
    "contentClass": "source",
    "partialResults": "explicit",
}
TRACING = (
    "retrievalTraces:\n  enabled: true\n  redactionMode: metadata\n"
    "  retention: {maxAgeDays: 30, maxTraces: 1000, maxRecordsPerTrace: 10000,"
    " maxBytes: 16777216}\n"
)

# The scratch notes every walk reads and writes: links, tags, a date, and
# two byte-identical files (one docid, two documents).
NOTES = {
    "alpha.md": (
        "---\ntitle: Alpha note\ntags: [project/alpha, urgent]\nauthor: Ada\n"
        "date: 2024-05-14\n---\n"
        "# Alpha\n\nThe zebra service launches in June. See [[Beta]] and [the plan](beta.md).\n"
    ),
    "beta.md": "---\ntags: [project/beta]\n---\n# Beta\n\nZebra launch sketches.\n",
    "beta-copy.md": "---\ntags: [project/beta]\n---\n# Beta\n\nZebra launch sketches.\n",
    "gamma.md": "# Gamma\n\nNothing links here; the zebra is only mentioned. [[Alpha]]\n",
}


@dataclass
class WalkState:
    """What the walk learnt so far: each tool's last answer, and the walk's own names."""

    label: str
    extra: Path
    doc: str = "gno://notes/alpha.md"
    other: str = "gno://notes/beta.md"
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def answer(self, tool: str) -> dict[str, Any]:
        """The last successful answer of ``tool`` (empty when it had none)."""
        return self.answers.get(tool, {})

    def trace_id(self) -> str:
        """A finished trace (the newest may still be open while its answer is sent)."""
        traces = self.answer("gno_trace_list").get("traces") or [{}]
        done = [t for t in traces if t.get("status") == "completed"] or traces
        return str(done[0].get("traceId", "no-trace-recorded"))


@dataclass(frozen=True, slots=True)
class Step:
    """One tool's two calls.

    ``bad`` None means "leave out every required argument" (no bad call
    for a tool that takes no argument). ``may_fail``
    names the codes a valid call may answer with on some index (no vectors
    yet, nothing recorded), which are still error results to check.
    """

    tool: str
    valid: Arguments = field(default_factory=dict)
    bad: Mapping[str, Any] | None = None
    may_fail: frozenset[str] = frozenset()
    after_jobs: bool = False
    # A second valid call of a tool whose bad call an earlier row made.
    again: bool = False


def _capture_uri(state: WalkState) -> str:
    return str(state.answer("gno_capture").get("uri", MISSING_DOC))


def _renamed_uri(state: WalkState) -> str:
    target = state.answer("gno_rename_note").get("target") or {}
    return str(target.get("uri", MISSING_DOC))


NO_VECTORS = frozenset({"VECTORS_UNAVAILABLE"})

READ_STEPS: tuple[Step, ...] = (
    Step("gno_search", {"query": "zebra"}, {"query": '"unmatched'}),
    Step("gno_query", {"query": "zebra launch"}, {"query": "zebra", "collection": "nope"}),
    Step(
        "gno_vsearch",
        {"query": "zebra launch"},
        {"query": "zebra", "collection": "nope"},
        may_fail=NO_VECTORS,
    ),
    Step("gno_query_diagnose", lambda s: {"query": "zebra launch", "target": s.doc}),
    Step("gno_get", lambda s: {"ref": s.doc}, {"ref": MISSING_DOC}),
    Step("gno_multi_get", lambda s: {"refs": [s.doc, s.other]}, {}),
    Step("gno_peek"),
    Step("gno_status"),
    Step(
        "gno_section",
        {"action": "create", "ref": "gno://notes/alpha.md", "anchor": "alpha"},
        {"action": "create", "ref": MISSING_DOC, "line": 1},
    ),
    Step("gno_audit", {}, {"collections": [MISSING_COLLECTION]}),
    Step("gno_egress_policy_get", {"collection": "notes"}, {"collection": MISSING_COLLECTION}),
    Step("gno_egress_check", EGRESS_CHECK),
    Step("gno_egress_audit_list", {}, {"limit": 0}),
    Step(
        "gno_egress_audit_show",
        {"auditId": "no-such-receipt"},
        {},
        may_fail=frozenset({"NOT_FOUND"}),
    ),
    Step("gno_egress_audit_status", {}, {"unexpected": True}),
    # Before the trace steps: a Capsule's trace is completed at once, a search's stays
    # open for follow-ups, and only a finished trace can be exported.
    Step(
        "gno_context",
        {"goal": "When does the zebra service launch?", "budgetTokens": 2000},
        {"goal": "zebra", "budgetTokens": 9000, "collections": [MISSING_COLLECTION]},
    ),
    Step("gno_context_verify", lambda s: {"capsule": s.answer("gno_context")}, {"capsule": {}}),
    Step("gno_changes", {}, {"since": "not-a-date"}),
    Step("gno_diff", lambda s: {"ref": s.doc}, {"ref": MISSING_DOC}),
    Step("gno_impact", lambda s: {"ref": s.other}, {"ref": MISSING_DOC}),
    Step("gno_trace_list", {}, {"limit": 0}),
    Step(
        "gno_trace_show",
        lambda s: {"traceId": s.trace_id()},
        {"traceId": "no-such-trace"},
        may_fail=frozenset({"NOT_FOUND"}),
    ),
    Step("gno_list_tags", {}, {"collection": MISSING_COLLECTION}),
    Step("gno_links", lambda s: {"ref": s.doc}, {"ref": MISSING_DOC}),
    Step("gno_backlinks", lambda s: {"ref": s.other}, {"ref": MISSING_DOC}),
    Step(
        "gno_similar",
        lambda s: {"ref": s.doc, "threshold": 0},
        {"ref": MISSING_DOC},
        may_fail=NO_VECTORS,
    ),
    Step("gno_graph", {}, {"collection": MISSING_COLLECTION}),
    Step("gno_graph_query", lambda s: {"ref": s.doc}, {"ref": MISSING_DOC}),
    Step("gno_graph_neighbors", lambda s: {"ref": s.other}, {"ref": MISSING_DOC}),
    Step(
        "gno_graph_path",
        lambda s: {"from": s.other, "to": s.doc},
        {"from": MISSING_DOC, "to": "gno://notes/alpha.md"},
    ),
    Step(
        "gno_recall",
        {"query": "release day", "collection": "facts", "scopes": [SCOPE]},
        {"query": "release day", "collection": MISSING_COLLECTION, "scopes": [SCOPE]},
    ),
    Step(
        "gno_ask",
        {"query": "When does the zebra service launch?", "verify": True},
        {"query": "zebra", "verify": True, "collection": MISSING_COLLECTION},
    ),
)
WRITE_STEPS: tuple[Step, ...] = (
    Step(
        "gno_capture",
        lambda s: {
            "collection": "notes",
            "title": f"Walk {s.label}",
            "content": "A quokka note.",
            "collisionPolicy": "create_with_suffix",
        },
        {"collection": MISSING_COLLECTION, "content": "x"},
    ),
    Step(
        "gno_remember",
        lambda s: {
            "text": f"Walk {s.label} ships on Fridays.",
            "collection": "facts",
            "scopes": [SCOPE],
            "decision": "add",
        },
        {"text": "x", "collection": MISSING_COLLECTION, "scopes": [SCOPE], "decision": "add"},
    ),
    Step(
        "gno_create_folder",
        lambda s: {"collection": "notes", "name": f"walk-{s.label}"},
        {"collection": MISSING_COLLECTION, "name": "x"},
    ),
    Step(
        "gno_duplicate_note",
        lambda s: {"ref": _capture_uri(s), "folderPath": f"walk-{s.label}"},
        {"ref": MISSING_DOC},
    ),
    Step(
        "gno_rename_note",
        lambda s: {"action": "preview", "ref": _capture_uri(s), "name": f"renamed-{s.label}"},
        {"action": "preview", "ref": MISSING_DOC, "name": "x"},
    ),
    Step(
        "gno_rename_note",
        lambda s: {
            **APPLY,
            "ref": _capture_uri(s),
            "name": f"renamed-{s.label}",
            "planDigest": s.answer("gno_rename_note").get("planDigest", ""),
        },
        again=True,
    ),
    Step(
        "gno_move_note",
        lambda s: {"action": "preview", "ref": _renamed_uri(s), "folderPath": f"walk-{s.label}"},
        {"action": "preview", "ref": MISSING_DOC, "folderPath": "x"},
    ),
    Step(
        "gno_egress_policy_set",
        {"collection": "notes", "policy": "local_only"},
        {"collection": MISSING_COLLECTION, "policy": "local_only"},
    ),
    Step(
        "gno_egress_audit_delete",
        {"auditId": "no-such-receipt"},
        {},
        may_fail=frozenset({"NOT_FOUND"}),
    ),
    Step("gno_egress_audit_purge", {"confirm": True}),
    Step(
        "gno_trace_label",
        lambda s: {"traceId": s.trace_id(), "label": "relevant", "targetRef": s.doc},
        {"traceId": "no-such-trace", "label": "relevant", "targetRef": MISSING_DOC},
    ),
    Step(
        "gno_trace_export", lambda s: {"traceIds": [s.trace_id()]}, {"traceIds": ["no-such-trace"]}
    ),
    Step("gno_trace_delete", lambda s: {"traceId": s.trace_id()}),
    Step("gno_trace_purge", {"confirm": True}),
    Step(
        "gno_add_collection",
        lambda s: {"path": str(s.extra), "name": f"extra-{s.label}"},
        {"path": str(Path("/nonexistent") / "walk-notes")},
    ),
    Step(
        "gno_job_status",
        lambda s: {"jobId": s.answer("gno_add_collection").get("jobId", "")},
        {"jobId": "no-such-job"},
    ),
    Step("gno_list_jobs", {}, {"limit": 0}),
    Step("gno_sync", {"collection": "empty"}, {"collection": MISSING_COLLECTION}, after_jobs=True),
    Step("gno_embed", {"collection": "empty"}, {"collection": MISSING_COLLECTION}, after_jobs=True),
    Step("gno_index", {"collection": "empty"}, {"collection": MISSING_COLLECTION}, after_jobs=True),
    Step(
        "gno_clear_collection_embeddings",
        {"collection": "empty", "mode": "all"},
        {"collection": MISSING_COLLECTION},
        after_jobs=True,
    ),
    Step(
        "gno_remove_collection",
        lambda s: {"collection": f"extra-{s.label}"},
        {"collection": MISSING_COLLECTION},
        after_jobs=True,
    ),
)
STEPS = READ_STEPS + WRITE_STEPS


def fixture_read_steps(query: str) -> tuple[Step, ...]:
    """The read steps over the ``fixture`` collection: its first hits for ``query`` are read."""
    search = Step("gno_search", {"query": query, "collection": "fixture"}, {"query": '"unmatched'})
    return (search, *READ_STEPS[1:])


@dataclass(frozen=True, slots=True)
class Called:
    """One call of the walk and what the client handed back."""

    tool: str
    kind: str  # "valid" or "bad"
    arguments: Mapping[str, Any]
    outcome: Outcome
    may_fail: frozenset[str] = frozenset()

    @property
    def result(self) -> dict[str, Any] | None:
        found = self.outcome.get("result")
        return found if isinstance(found, dict) else None

    def describe(self) -> str:
        shown = repr(dict(self.arguments))
        return f"{self.tool} ({self.kind}) {shown[:160]}"


def build_walk_index(base: Path, *, fixture: Path | None = None, embed: bool = False) -> Dirs:
    """An index for walks under ``base``: the scratch notes, facts, an empty collection.

    ``fixture`` adds a read-only corpus as collection ``fixture``; ``embed``
    gives every chunk a vector (loads the bundled model once). Retrieval
    tracing is on, so the trace tools have traces to show.
    """
    notes = base / "notes"
    notes.mkdir(parents=True)
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    for folder in ("facts", "empty"):
        (base / folder).mkdir()
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    dirs.config.mkdir(parents=True)
    (dirs.config / "index.yml").write_text(TRACING, encoding="utf-8")
    with Engine.open(dirs=dirs) as engine:
        if fixture is not None:
            engine.collections.add(str(fixture), name="fixture")
        engine.collections.add(str(notes), name="notes")
        engine.collections.add(str(base / "facts"), name="facts", memory_managed=True)
        engine.collections.add(str(base / "empty"), name="empty")
        engine.sync()
        if embed:
            engine.vectors.embed()
    return dirs


def walk_extra_folder(base: Path, label: str) -> Path:
    """A folder with one note for the walk's ``gno_add_collection``."""
    extra = base / f"extra-{label}"
    extra.mkdir()
    (extra / "wombat.md").write_text("# Wombat\n\nBurrow notes.\n", encoding="utf-8")
    return extra


async def _jobs_idle(call: Caller, deadline_s: float = 120) -> None:
    """Wait until no job runs (one job at a time is GNO's rule)."""
    with trio.fail_after(deadline_s):
        while True:
            listing = (await call("gno_list_jobs", {})).get("result") or {}
            if not (listing.get("structuredContent") or {}).get("active"):
                return
            await trio.sleep(0.05)


def takes_arguments(tool: Mapping[str, Any]) -> bool:
    """Whether a listed tool has any argument to get wrong (``gno_status`` has none)."""
    return bool(tool.get("inputSchema", {}).get("properties"))


async def walk(
    call: Caller,
    listed: Mapping[str, Mapping[str, Any]],
    state: WalkState,
    steps: Sequence[Step] = STEPS,
) -> list[Called]:
    """Call every step's valid and bad arguments; what each call handed back, in order."""
    called: list[Called] = []
    for step in steps:
        if step.tool not in listed:
            continue
        if step.after_jobs:
            await _jobs_idle(call)
        arguments = dict(step.valid(state) if callable(step.valid) else step.valid)
        outcome = await call(step.tool, arguments)
        called.append(Called(step.tool, "valid", arguments, outcome, step.may_fail))
        result = outcome.get("result") or {}
        if not result.get("isError") and isinstance(result.get("structuredContent"), dict):
            state.answers[step.tool] = result["structuredContent"]
        if step.tool == "gno_search" and state.answers.get("gno_search", {}).get("results"):
            hits = state.answers["gno_search"]["results"]
            state.doc = hits[0]["uri"]
            state.other = hits[-1]["uri"]
        if step.again:
            continue
        if step.bad is None and not takes_arguments(listed[step.tool]):
            continue
        bad = dict(step.bad) if step.bad is not None else {}
        called.append(Called(step.tool, "bad", bad, await call(step.tool, bad)))
    await _jobs_idle(call)
    return called


def walk_problems(called: Sequence[Called], listed: Mapping[str, Any]) -> list[str]:
    """Everything a host would have got wrong in this walk (empty: all good).

    Every listed tool was called with valid and with bad input; nothing was
    thrown by the client (a client-side schema check, a JSON-RPC error); a
    bad call is an error result; every error result's text is
    ``Error: CODE: message`` and it carries no ``structuredContent``; a valid
    call answers with ``structuredContent`` unless it failed with one of its
    expected codes.
    """
    problems: list[str] = []
    for kind in ("valid", "bad"):
        expected = {n for n, tool in listed.items() if kind == "valid" or takes_arguments(tool)}
        missing = expected - {c.tool for c in called if c.kind == kind}
        if missing:
            problems.append(f"never called with {kind} input: {sorted(missing)}")
    for c in called:
        thrown = c.outcome.get("thrown")
        if thrown is not None:
            problems.append(f"{c.describe()}: the client threw {thrown}")
            continue
        result = c.result or {}
        if result.get("isError"):
            code = _error_code(result)
            if code is None:
                problems.append(f"{c.describe()}: error text names no code: {result}")
            elif "structuredContent" in result:
                problems.append(f"{c.describe()}: error result carries structuredContent")
            elif c.kind == "valid" and code not in c.may_fail:
                problems.append(f"{c.describe()}: failed: {result['content'][0]['text']}")
        elif c.kind == "bad":
            problems.append(f"{c.describe()}: bad input answered without an error")
        elif not isinstance(result.get("structuredContent"), dict):
            problems.append(f"{c.describe()}: no structuredContent: {result}")
    return problems


def _error_code(result: Mapping[str, Any]) -> str | None:
    content = result.get("content") or []
    if not content or content[0].get("type") != "text":
        return None
    matched = ERROR_TEXT.match(content[0].get("text", ""))
    return matched.group(1) if matched else None
