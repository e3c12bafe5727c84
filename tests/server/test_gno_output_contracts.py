"""Every tool's answer keeps GNO's own output contract, over the wire, in both eras.

Each :data:`READ_CALLS` / :data:`WRITE_CALLS` row is one real call: the tool,
its arguments, and the GNO output schema its ``structuredContent`` must
satisfy (``None`` where GNO publishes none; the official client still holds
it to the schema we advertise). Calls go through the official ``mcp`` client
over stdio, whose own output-schema validation is on, in the 2025-11-25 and
2026-07-28 eras, and each answer is then validated with formats asserted
against GNO 1.35's published schema (the seed's for memory).

A tool the server lists without a row here fails the test: adding a tool
means adding its row, one line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from tests.conftest import gno_schema_errors
from tests.support.http_gateway_support import engine_app, running_gateway
from tests.support.official_walk import APPLY, EGRESS_CHECK
from tests.support.shared import EVALS_CORPUS, required
from tests.support.stdio_session import server_environment
from tests.support.tool_results import sdk_error_code

REPO_ROOT = Path(__file__).resolve().parents[2]
ERAS = ("legacy", "2026-07-28", "auto")  # auto settles on 2026-07-28 over stdio
SCOPE = "project:gno-trio"

# Arguments: a mapping, or a function of the answers so far (tool name ->
# last structuredContent) for calls that need an id another call returned.
Arguments = Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call and the GNO contract its answer is held to."""

    tool: str
    arguments: Arguments = field(default_factory=dict)
    gno_schema: str | None = None
    # The tool error code that is the right answer here, if any.
    error: str | None = None
    # Wait for the jobs started before (one job at a time is GNO's rule).
    after_jobs: bool = False


ALPHA = "gno://notes/alpha.md"
BETA = "gno://notes/beta.md"
QUERY_MODES = [
    {"mode": "term", "text": "zebra"},
    {"mode": "intent", "text": "release planning"},
    {"mode": "hyde", "text": "The zebra service launches in June after the billing move."},
]

READ_CALLS: tuple[Call, ...] = (
    Call("gno_search", {"query": "zebra"}, "search-results"),
    Call(
        "gno_search",
        {"query": "zebra", "tagsAll": ["urgent"], "since": "2020-01-01"},
        "search-results",
    ),
    Call(
        "gno_context",
        {"goal": "When does the zebra service launch?", "budgetTokens": 1000},
        "context-capsule-v1",
    ),
    Call(
        "gno_context",
        {"goal": "zebra launch", "budgetTokens": 3000, "depthPolicy": "fast"},
        "context-capsule-v1",
    ),
    Call(
        "gno_context",
        {"goal": "zebra launch", "budgetTokens": 1000, "uriPrefix": None},  # GNO admits null
        "context-capsule-v1",
    ),
    # GNO's own input bounds refuse these, and so do we.
    Call("gno_diff", {"ref": "gno://notes/" + "a" * 4096}, error="INVALID_INPUT"),
    Call("gno_impact", {"ref": "gno://notes/" + "a" * 4096}, error="INVALID_INPUT"),
    Call("gno_egress_policy_get", {"collection": "n" * 65}, error="INVALID_INPUT"),
    Call(
        "gno_ask",
        {"query": "zebra", "queryModes": [{"mode": "term", "text": "zebra", "weight": 2}]},
        error="INVALID_INPUT",
    ),
    Call("gno_query", {"query": "zebra launch"}, "search-results"),
    Call("gno_query", {"query": "zebra launch", "queryModes": QUERY_MODES}, "search-results"),
    Call("gno_query", {"query": "zebra launch", "explain": True, "lang": "en"}, "search-results"),
    Call("gno_query_diagnose", {"query": "zebra launch", "target": ALPHA}, "query-diagnose"),
    Call(
        "gno_query_diagnose",
        {"query": "zebra launch", "target": "gno://notes/none.md"},
        "query-diagnose",
    ),
    Call("gno_get", {"ref": ALPHA}, "get"),
    Call("gno_get", {"ref": ALPHA, "fromLine": 2, "lineCount": 2}, "get"),
    Call("gno_multi_get", {"pattern": "notes/*.md"}, "multi-get"),
    Call("gno_multi_get", {"refs": [ALPHA, "gno://notes/none.md"]}, "multi-get"),
    Call("gno_peek"),
    Call("gno_status", {}, "status"),
    Call("gno_changes", {}, "changes"),
    Call("gno_diff", {"ref": ALPHA}, "document-diff"),
    Call("gno_impact", {"ref": BETA}, "impact"),
    Call("gno_list_tags", {}, "tags-list"),
    Call(
        "gno_recall",
        {"query": "release day", "collection": "facts", "scopes": [SCOPE]},
        "memory-recall",
    ),
    Call("gno_links", {"ref": ALPHA}, "links-list"),
    Call("gno_backlinks", {"ref": BETA}, "backlinks"),
    Call("gno_job_status", {"jobId": "no-such-job"}, error="NOT_FOUND"),
    Call("gno_list_jobs", {}, "mcp-job-list"),
    Call("gno_egress_policy_get", {"collection": "notes"}, "collection-egress-policy"),
    Call("gno_egress_check", EGRESS_CHECK, "collection-egress-check"),
    Call("gno_graph", {}, "graph"),
    Call("gno_graph", {"collection": "notes", "linkedOnly": False}, "graph"),
    Call("gno_graph_query", {"ref": ALPHA}, "graph-query"),
    Call("gno_graph_neighbors", {"ref": BETA, "collection": "notes", "limit": 5000}),
    Call("gno_graph_path", {"from": BETA, "to": ALPHA, "edgeLimit": 50000}),
    Call("gno_graph_query", {"ref": ALPHA, "depth": 1}, "graph-query"),
    Call(
        "gno_context_verify",
        lambda seen: {"capsule": seen["gno_context"]},
        "context-capsule-verification",
    ),
    Call("gno_ask", {"query": "When does the zebra service launch?", "verify": True}, "ask"),
    Call("gno_section", {"action": "create", "ref": ALPHA, "anchor": "alpha"}, "section"),
    Call(
        "gno_section",
        lambda seen: {"action": "resolve", "ref": ALPHA, "target": seen["gno_section"]["target"]},
        "section",
    ),
    Call("gno_audit", {}, "audit-report"),
    Call("gno_audit", {"category": "links", "orphanRoots": [ALPHA]}, "audit-report"),
    Call("gno_egress_audit_list", {}, "egress-audit-management"),
    Call("gno_egress_audit_show", {"auditId": "no-such-receipt"}, error="NOT_FOUND"),
    Call("gno_egress_audit_status", {}, "egress-audit-management"),
    Call("gno_trace_list", {}, "retrieval-trace-list"),
    Call("gno_trace_show", {"traceId": "no-such-trace"}, error="NOT_FOUND"),
    Call("gno_vsearch", {"query": "zebra launch"}, "search-results"),
    Call("gno_vsearch", {"query": "zebra launch", "collection": "notes", "limit": 3}),
    Call("gno_similar", {"ref": ALPHA}, "similar"),
)

CAPTURE = {
    "collection": "drafts",
    "title": "Launch checklist",
    "content": "Check the quokka board.",
}
REMEMBER = {"text": "Releases ship on Fridays.", "collection": "facts", "scopes": [SCOPE]}

WRITE_CALLS: tuple[Call, ...] = (
    Call("gno_capture", CAPTURE, "mcp-capture-result"),
    Call("gno_remember", {**REMEMBER, "decision": "add"}),
    Call("gno_create_folder", {"collection": "drafts", "name": "kept"}),
    Call(
        "gno_duplicate_note", lambda seen: {"ref": seen["gno_capture"]["uri"], "folderPath": "kept"}
    ),
    Call(
        "gno_add_collection",
        lambda seen: {"path": seen["extra"], "name": "extra"},
        "mcp-add-collection-result",
    ),
    Call(
        "gno_job_status",
        lambda seen: {"jobId": seen["gno_add_collection"]["jobId"]},
        "mcp-job-status",
    ),
    Call("gno_list_jobs", {}, "mcp-job-list"),
    Call("gno_sync", {"collection": "drafts"}, "mcp-sync-result"),
    Call(
        "gno_egress_policy_set",
        {"collection": "drafts", "policy": "local_only"},
        "collection-egress-policy-set",
    ),
    Call(
        "gno_rename_note",
        lambda seen: {"action": "preview", "ref": seen["gno_capture"]["uri"], "name": "renamed"},
        "file-refactor-preview",
    ),
    Call(
        "gno_rename_note",
        lambda seen: {
            **APPLY,
            "ref": seen["gno_capture"]["uri"],
            "name": "renamed",
            "planDigest": seen["gno_rename_note"]["planDigest"],
        },
        "file-refactor-apply-result",
    ),
    Call(
        "gno_move_note",
        {"action": "preview", "ref": "gno://drafts/renamed.md", "folderPath": "kept"},
        "file-refactor-preview",
    ),
    Call(
        "gno_move_note",
        lambda seen: {
            **APPLY,
            "ref": "gno://drafts/renamed.md",
            "folderPath": "kept",
            "planDigest": seen["gno_move_note"]["planDigest"],
        },
        "file-refactor-apply-result",
    ),
    Call("gno_egress_audit_delete", {"auditId": "no-such-receipt"}, error="NOT_FOUND"),
    Call("gno_egress_audit_purge", {"confirm": True}, "egress-audit-management"),
    Call(
        "gno_trace_label",
        {"traceId": "t", "label": "relevant", "targetRef": "gno://drafts/a.md"},
        error="NOT_FOUND",
    ),
    Call("gno_trace_export", {"traceIds": ["t"]}, error="NOT_FOUND"),
    Call("gno_trace_delete", {"traceId": "t"}, "retrieval-trace-delete"),
    Call("gno_trace_purge", {"confirm": True}, "retrieval-trace-purge"),
    Call("gno_remove_collection", {"collection": "extra"}, "mcp-remove-result"),
    Call("gno_embed", {"collection": "drafts"}),
    Call("gno_index", {"collection": "drafts"}, after_jobs=True),
    Call(
        "gno_clear_collection_embeddings",
        {"collection": "drafts", "mode": "all"},
        after_jobs=True,
    ),
)

NOTES = {
    "alpha.md": (
        "---\ntitle: Alpha note\ntags: [project/alpha, urgent]\nauthor: Ada\n"
        "date: 2024-05-14\nrelations:\n  depends_on: beta\n---\n"
        "# Alpha\n\nThe zebra service launches in June. See [[Beta]] and [the plan](beta.md).\n"
    ),
    "beta.md": "---\ntags: [project/beta]\n---\n# Beta\n\nZebra launch sketches.\n",
    "gamma.md": "# Gamma\n\nNothing links here; the zebra is only mentioned.\n",
}


def server(dirs: Dirs, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "gno_trio", "mcp", *flags],
        env=server_environment(dirs),
        cwd=REPO_ROOT,
    )


@pytest.fixture(scope="module")
def read_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dirs]:
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    base = tmp_path_factory.mktemp("contracts")
    for folder in ("notes", "facts"):
        (base / folder).mkdir()
    for name, text in NOTES.items():
        (base / "notes" / name).write_text(text, encoding="utf-8")
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(EVALS_CORPUS), name="evals")
        engine.collections.add(str(base / "notes"), name="notes")
        engine.collections.add(str(base / "facts"), name="facts", memory_managed=True)
        engine.sync()
        engine.vectors.embed()  # the semantic tools answer from vectors
    yield dirs


@pytest.fixture
def write_dirs(tmp_path: Path) -> Dirs:
    for folder in ("drafts", "facts", "extra"):
        (tmp_path / folder).mkdir()
    (tmp_path / "extra" / "wombat.md").write_text("# Wombat\n\nBurrows.\n", encoding="utf-8")
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(tmp_path / "drafts"), name="drafts")
        engine.collections.add(str(tmp_path / "facts"), name="facts", memory_managed=True)
        engine.sync()
    return dirs


def type_arrays(node: Any, path: str = "") -> list[str]:
    """Where a schema uses a ``type`` array (``["string", "null"]``)."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("type"), list):
            found.append(path or "/")
        for key, value in node.items():
            found += type_arrays(value, f"{path}/{key}")
    elif isinstance(node, list):
        for position, value in enumerate(node):
            found += type_arrays(value, f"{path}/{position}")
    return found


async def jobs_finished(client: Client) -> None:
    """Poll ``gno_list_jobs`` until no job is running."""
    while True:
        listing = (await client.call_tool("gno_list_jobs", {})).structured_content or {}
        if not listing.get("active"):
            return
        await trio.sleep(0.1)


async def run_calls(
    params: StdioServerParameters, mode: str, calls: tuple[Call, ...], seen: dict[str, Any]
) -> tuple[set[str], list[str]]:
    """Make every call; returns the tools listed and every contract problem found."""
    problems: list[str] = []
    async with Client(params, mode=mode, cache=None) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for tool in listed.values():
            assert tool.output_schema is not None, tool.name
            arrays = type_arrays(tool.output_schema)
            assert arrays == [], (tool.name, arrays)
        for call in calls:
            if call.tool not in listed:
                problems.append(f"{call.tool}: not listed")
                continue
            arguments = call.arguments(seen) if callable(call.arguments) else call.arguments
            if call.after_jobs:
                await jobs_finished(client)
            try:
                result = await client.call_tool(call.tool, dict(arguments))
            except RuntimeError as error:  # the client's own output-schema check
                problems.append(f"{call.tool} {dict(arguments)}: client: {error}")
                continue
            structured = result.structured_content or {}
            if call.error is not None:
                assert sdk_error_code(result) == call.error, result
                continue
            assert not result.is_error, (call.tool, result.content)
            seen[call.tool] = structured
            if call.gno_schema is not None:
                problems += [
                    f"{call.tool} {dict(arguments)}: {problem}"
                    for problem in gno_schema_errors(call.gno_schema, structured)
                ]
    return set(listed), problems


@pytest.mark.parametrize("mode", ERAS)
async def test_every_read_tool_keeps_gnos_output_contract(mode: str, read_dirs: Dirs) -> None:
    with trio.fail_after(60):
        listed, problems = await run_calls(server(read_dirs), mode, READ_CALLS, {})
    assert listed == {call.tool for call in READ_CALLS}, "every listed tool needs a row"
    assert problems == []


@pytest.mark.parametrize("mode", ERAS)
async def test_every_write_tool_keeps_gnos_output_contract(mode: str, write_dirs: Dirs) -> None:
    seen: dict[str, Any] = {"extra": str(write_dirs.config.parent / "extra")}
    with trio.fail_after(60):
        listed, problems = await run_calls(
            server(write_dirs, "--enable-write"), mode, WRITE_CALLS, seen
        )
    covered = {call.tool for call in (*READ_CALLS, *WRITE_CALLS)}
    assert listed <= covered, "every listed tool needs a row"
    assert {call.tool for call in WRITE_CALLS} <= listed
    assert problems == []


@pytest.mark.parametrize("mode", ERAS)
async def test_status_over_stdio_describes_a_standalone_stdio_process(
    mode: str, read_dirs: Dirs
) -> None:
    with trio.fail_after(30):
        async with Client(server(read_dirs), mode=mode, cache=None) as client:
            result = await client.call_tool("gno_status", {})
    status: Any = result.structured_content
    assert gno_schema_errors("status", status) == []
    resident = status["resident"]
    assert (resident["mode"], resident["resident"], resident["listenerPort"]) == (
        "stdio",
        False,
        None,
    )
    assert resident["transport"]["activeSessions"] == 0
    readers = resident["readers"]
    assert readers["limit"] >= 1 and 0 <= readers["active"] <= readers["limit"]
    assert resident["generations"]["index"] > 0  # the index has a change history
    activation = {item["collection"]: item for item in status["activation"]["collections"]}
    assert activation["notes"]["ready"] is True
    assert activation["facts"]["ready"] is False  # an empty collection is not usable yet
    assert activation["facts"]["remediation"]["code"] == "no_documents"
    assert status["bootstrap"]["policy"]["allowDownload"] is False


async def test_status_over_http_describes_the_gateway_it_came_through(read_dirs: Dirs) -> None:
    with engine_app(read_dirs) as (app, _):
        async with (
            running_gateway(app) as running,
            Client(running.url, mode="legacy", cache=None) as client,
        ):
            result = await client.call_tool("gno_status", {})
            status: Any = result.structured_content
            assert gno_schema_errors("status", status) == []
            resident = status["resident"]
            assert (resident["mode"], resident["resident"]) == ("serve", True)
            assert resident["listenerPort"] == running.endpoint.port
            assert resident["transport"]["activeSessions"] >= 1
