"""The real ``gno-trio mcp`` server over a real index, seen from outside the process.

One index is built per module over the shared ``gno-evals`` corpus plus a
two-note collection written here (the shared corpus carries no tags) and an
empty memory-managed collection; it is only ever read. Write tools get a fresh
index of their own per test. The wire tests spawn ``python -m gno_trio mcp``
and talk to it either through the official Python SDK client (``mcp`` 2.3.0)
in each of its modes, or through a raw JSON-RPC pipe for what that client
hides. Tool arguments are fuzzed in process against the same index. The last
tests drive :class:`~gno_trio.runtime.Runtime` directly: a cancelled engine
call interrupts its SQLite statement and hands its connection back.
"""

from __future__ import annotations

import importlib.metadata
import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from gno_trio.compose import build_app
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.protocol.versions import Era
from gno_trio.runtime import ENGINE_THREADS, Runtime
from gno_trio.server.context import RequestContext
from gno_trio.server.dispatch import McpApp
from gno_trio.server.schemas import output_schema_errors
from gno_trio.tools import CATALOGUE, CORE_READ
from nurseries.stagger import StaggeredLimiter
from tests.support.shared import EVALS_CORPUS, required
from tests.support.stdio_session import (
    full_environment,
    modern,
    notification_line,
    raw_initialize_params,
    request_line,
    server_command,
    spawn,
)
from tests.support.tool_results import sdk_error_code, tool_error_code, tool_error_message

REPO_ROOT = Path(__file__).resolve().parents[2]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"

# Written into the index's own temp folder: small notes that carry tags.
NOTES = {
    "alpha.md": (
        "---\ntitle: Alpha note\ntags: [project/alpha, urgent]\nauthor: Ada\n---\n"
        "# Alpha\n\nDeploy the zebra service before Friday. See [[Beta]].\n"
    ),
    "beta.md": "---\ntags: [project/beta]\n---\n# Beta\n\nZebra crossing sketches.\n",
}
API_REFERENCE = "gno://evals/en/api-reference.md"
TROUBLESHOOTING = "gno://evals/en/troubleshooting-guide.md"
DOCUMENT_COUNT = 11  # nine shared documents plus the two notes
SCOPE = "project:gno-trio"

# One call per implemented tool, and what a user would check in its answer.
TOOL_CALLS: dict[str, dict[str, Any]] = {
    "gno_search": {"query": "ECONNREFUSED"},
    "gno_query": {"query": "refresh an expired token"},
    "gno_query_diagnose": {"query": "refresh an expired token", "target": TROUBLESHOOTING},
    "gno_diff": {"ref": "gno://notes/alpha.md"},
    "gno_get": {"ref": API_REFERENCE, "fromLine": 1, "lineCount": 1},
    "gno_multi_get": {"pattern": "notes/*.md"},
    "gno_peek": {},
    "gno_status": {},
    "gno_changes": {"collection": "notes"},
    "gno_list_tags": {"collection": "notes"},
    "gno_recall": {"query": "release day", "collection": "facts", "scopes": [SCOPE]},
    "gno_context": {"goal": "refresh an expired token", "budgetTokens": 12000},
    "gno_links": {"ref": "gno://notes/alpha.md"},
    "gno_backlinks": {"ref": "gno://notes/beta.md"},
    "gno_job_status": {"jobId": "no-such-job"},
    "gno_list_jobs": {},
    "gno_egress_policy_get": {"collection": "notes"},
    "gno_egress_check": {
        "collections": ["notes"],
        "action": "serve",
        "destinationZone": "remote",
        "caller": {"authenticated": True, "operationAuthorized": True},
        "contentClass": "source",
    },
    "gno_graph_neighbors": {"ref": "gno://notes/beta.md"},
    "gno_graph_path": {"from": "gno://notes/beta.md", "to": "gno://notes/alpha.md"},
    "gno_graph": {"collection": "notes"},
    "gno_graph_query": {"ref": "gno://notes/alpha.md"},
    "gno_impact": {"ref": "gno://notes/beta.md"},
    "gno_egress_audit_list": {"limit": 10},
    "gno_egress_audit_show": {"auditId": "no-such-receipt"},
    "gno_egress_audit_status": {},
    "gno_trace_list": {},
    "gno_trace_show": {"traceId": "no-such-trace"},
    "gno_section": {"action": "create", "ref": "gno://notes/alpha.md", "line": 6},
    "gno_context_verify": {"capsule": {"schemaVersion": "1.1"}},
    "gno_audit": {"category": "links", "collections": ["notes"]},
    "gno_ask": {"query": "how do I refresh an expired token", "verify": True},
    "gno_vsearch": {"query": "the database server refuses my connection", "limit": 3},
    "gno_similar": {"ref": TROUBLESHOOTING, "threshold": 0, "limit": 3},
}
# Calls whose right answer, on this read-only server, is a tool error.
ERROR_ANSWERS = {
    "gno_job_status": "NOT_FOUND",
    "gno_egress_audit_show": "NOT_FOUND",
    "gno_trace_show": "NOT_FOUND",
    "gno_context_verify": "invalid_input",
}


def check_tool_answer(name: str, structured: Mapping[str, Any]) -> None:
    """The facts about this index each tool's answer must show."""
    if name == "gno_search":
        assert structured["results"][0]["uri"] == TROUBLESHOOTING
    elif name == "gno_query":
        assert TROUBLESHOOTING in {hit["uri"] for hit in structured["results"]}
    elif name == "gno_query_diagnose":
        assert structured["target"]["status"] == "diagnosed"
        fusion = next(stage for stage in structured["stages"] if stage["id"] == "fusion")
        assert fusion["survived"] is True and fusion["rank"] is not None
    elif name == "gno_diff":
        assert structured["status"] == "available"
        assert structured["change"]["kind"] == "create"
        assert structured["content"]["status"] == "not_retained"
    elif name == "gno_get":
        assert structured["uri"] == API_REFERENCE
        assert structured["returnedLines"] == {"start": 1, "end": 1}
        assert structured["content"] == "1: # REST API Reference"
    elif name == "gno_multi_get":
        uris = {doc["uri"] for doc in structured["documents"]}
        assert uris == {"gno://notes/alpha.md", "gno://notes/beta.md"}
    elif name == "gno_peek":
        assert structured["initialized"] is True
        assert structured["counts"]["documents"] == DOCUMENT_COUNT
    elif name == "gno_status":
        assert structured["totalDocuments"] == DOCUMENT_COUNT
        assert {c["name"] for c in structured["collections"]} == {"evals", "facts", "notes"}
    elif name == "gno_changes":
        assert {c["kind"] for c in structured["changes"]} == {"create"}
        assert len(structured["changes"]) == 2
    elif name == "gno_list_tags":
        assert {t["tag"]: t["count"] for t in structured["tags"]} == {
            "project/alpha": 1,
            "project/beta": 1,
            "urgent": 1,
        }
    elif name == "gno_recall":
        assert structured["facts"] == []
        assert structured["receipt"]["caller"] == "mcp"  # the SDK's default client name
    elif name == "gno_context":
        assert TROUBLESHOOTING in {e["uri"] for e in structured["evidence"]}
    elif name == "gno_links":
        assert [link.get("resolvedUri") for link in structured["links"]] == ["gno://notes/beta.md"]
    elif name == "gno_backlinks":
        assert [b["sourceUri"] for b in structured["backlinks"]] == ["gno://notes/alpha.md"]
    elif name == "gno_list_jobs":
        assert structured["active"] == [] and structured["recent"] == []
    elif name == "gno_egress_policy_get":
        assert (structured["configuredPolicy"], structured["effectivePolicy"]) == (
            None,
            "local_only",
        )
        assert structured["source"] == "config_default"
    elif name == "gno_egress_check":
        assert structured["mode"] == "denied"
        assert structured["decision"]["reason"] == "POLICY_LOCAL_ONLY"
    elif name == "gno_graph_neighbors":
        assert [(n["uri"], n["direction"]) for n in structured["neighbors"]] == [
            ("gno://notes/alpha.md", "in")
        ]
    elif name == "gno_graph_path":
        assert [n["uri"] for n in structured["nodes"]] == [
            "gno://notes/beta.md",
            "gno://notes/alpha.md",
        ]
        assert structured["steps"][0]["direction"] == "backward"
    elif name == "gno_graph":
        assert [(n["relPath"], n["degree"]) for n in structured["nodes"]] == [
            ("alpha.md", 1),
            ("beta.md", 1),
        ]
        assert [link["type"] for link in structured["links"]] == ["wiki"]
        assert structured["meta"]["collection"] == "notes"
    elif name == "gno_graph_query":
        # The notes carry no frontmatter relations, so the walk stays at its root.
        assert [n["uri"] for n in structured["nodes"]] == ["gno://notes/alpha.md"]
        assert structured["edges"] == []
    elif name == "gno_impact":
        assert [e["document"]["uri"] for e in structured["impacted"]] == ["gno://notes/alpha.md"]
        assert structured["impacted"][0]["evidencePath"][0]["edgeSource"] == "wikilink"
    elif name == "gno_egress_audit_list":
        assert structured["receipts"] == [] and structured["nextCursor"] is None
    elif name == "gno_egress_audit_status":
        assert structured["receipts"] == 0 and structured["retention"]["maxAgeDays"] == 30
    elif name == "gno_section":
        assert structured["target"]["headingPath"] == ["Alpha"]
        assert structured["target"]["quote"]["exact"].startswith("Deploy the zebra service")
    elif name == "gno_audit":
        assert structured["status"] == "complete"
        assert structured["counts"]["examined"]["documents"] == 2
    elif name == "gno_ask":
        assert structured["verification"]["mode"] == "closed_capsule"
        assert structured["meta"]["answerGenerated"] is False  # no model is configured
        assert structured["meta"]["abstained"] is (structured["citations"] == [])
    elif name == "gno_trace_list":  # tracing is off by default: nothing recorded
        assert structured["traces"] == [] and structured["nextCursor"] is None
    elif name == "gno_vsearch":
        assert structured["meta"]["mode"] == "vector"
        assert structured["results"][0]["uri"] == TROUBLESHOOTING
    elif name == "gno_similar":
        uris = [item["uri"] for item in structured["similar"]]
        assert len(uris) == 3 and TROUBLESHOOTING not in uris
        assert structured["meta"]["uri"] == TROUBLESHOOTING
    else:  # a new tool must be given an expectation here
        raise AssertionError(f"no expectation for {name}")


@pytest.fixture(scope="module")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Environment that points ``gno-trio`` at one freshly built index."""
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    base = tmp_path_factory.mktemp("gno-mcp-index")
    notes = base / "notes"
    notes.mkdir()
    facts = base / "facts"
    facts.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(EVALS_CORPUS), name="evals")
        engine.collections.add(str(notes), name="notes")
        engine.collections.add(str(facts), name="facts", memory_managed=True)
        reports = engine.sync()
        embedded = engine.vectors.embed()
    assert sum(r.added for r in reports) == DOCUMENT_COUNT
    assert embedded.embedded > 0 and embedded.errors == 0
    yield {
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
    }


# ---------------------------------------------------------------------------
# The official SDK client, every mode
# ---------------------------------------------------------------------------

EXPECTED_VERSION = {"legacy": LEGACY, MODERN: MODERN, "auto": MODERN}


@pytest.mark.parametrize("mode", ["legacy", MODERN, "auto"])
async def test_official_client_lists_calls_every_tool_and_reads(
    mode: str, server_env: dict[str, str]
) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=server_command()[1:], env=server_env, cwd=REPO_ROOT
    )
    with trio.fail_after(120):
        async with Client(params, mode=mode, cache=None) as client:
            assert client.protocol_version == EXPECTED_VERSION[mode]
            if mode != MODERN:  # a pinned modern client never asks who we are
                assert client.server_info is not None and client.server_info.name == "gno"

            listed = (await client.list_tools()).tools
            names = [tool.name for tool in listed]
            assert names == CATALOGUE.select("full", False)
            assert set(names) <= set(TOOL_CALLS), "every served tool needs a call above"

            for tool in listed:
                result = await client.call_tool(tool.name, TOOL_CALLS[tool.name])
                if tool.name in ERROR_ANSWERS:
                    assert result.is_error, tool.name
                    assert sdk_error_code(result) == ERROR_ANSWERS[tool.name], result
                    continue
                assert not result.is_error, (tool.name, result.content)
                structured = result.structured_content
                assert isinstance(structured, dict), tool.name
                assert tool.output_schema is not None, tool.name
                assert output_schema_errors(tool.output_schema, structured) == [], tool.name
                check_tool_answer(tool.name, structured)

            bad = await client.call_tool("gno_search", {"query": "token", "limit": 500})
            assert bad.is_error
            assert "limit" in bad.content[0].text  # type: ignore[union-attr]

            with pytest.raises(MCPError) as unknown:
                await client.call_tool("gno_nope", {})
            assert unknown.value.error.code == -32602

            resources = (await client.list_resources()).resources
            uris = {str(resource.uri) for resource in resources}
            assert len(uris) == DOCUMENT_COUNT
            assert {API_REFERENCE, "gno://notes/alpha.md"} <= uris
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.name for t in templates] == ["document", "tags"]

            document = (await client.read_resource(API_REFERENCE)).contents
            assert len(document) == 1 and document[0].mime_type == "text/markdown"
            text = document[0].text  # type: ignore[union-attr]
            assert "1: # REST API Reference" in text and "docid: #" in text

            tags = (await client.read_resource("gno://tags?collection=notes")).contents
            tag_list = json.loads(tags[0].text)  # type: ignore[union-attr]
            assert {t["tag"] for t in tag_list["tags"]} == {
                "project/alpha",
                "project/beta",
                "urgent",
            }
            all_tags = (await client.read_resource("gno://tags")).contents
            assert json.loads(all_tags[0].text)["tags"] == tag_list["tags"]  # type: ignore[union-attr]

            with pytest.raises(MCPError) as missing:
                await client.read_resource("gno://notes/no-such-note.md")
            assert missing.value.error.code == (-32002 if mode == "legacy" else -32602)


@pytest.fixture
def write_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A fresh index for tools that write: an empty note folder and an empty fact folder."""
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        for name in ("drafts", "facts"):
            (tmp_path / name).mkdir()
            engine.collections.add(str(tmp_path / name), name=name, memory_managed=name == "facts")
        engine.sync()
    yield {
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
    }


FACT = "Releases ship on Fridays after the smoke tests pass."
WRITE_FLOWS = frozenset(
    {
        "gno_remember",
        "gno_capture",
        "gno_add_collection",
        "gno_sync",
        "gno_remove_collection",
        "gno_create_folder",
        "gno_duplicate_note",
        "gno_egress_policy_set",
        "gno_egress_audit_delete",
        "gno_egress_audit_purge",
        "gno_trace_label",
        "gno_trace_export",
        "gno_trace_delete",
        "gno_trace_purge",
        "gno_rename_note",
        "gno_move_note",
        "gno_embed",
        "gno_index",
        "gno_clear_collection_embeddings",
    }
)


@pytest.mark.parametrize("mode", ["legacy", MODERN, "auto"])
async def test_official_client_calls_the_write_tools_when_enabled(
    mode: str, write_env: dict[str, str]
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=server_command("--enable-write")[1:],
        env=write_env,
        cwd=REPO_ROOT,
    )
    with trio.fail_after(300):
        async with Client(params, mode=mode, cache=None) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert list(listed) == CATALOGUE.select("full", True)
            served_writes = {name for name in listed if name in CATALOGUE.write_names}
            assert served_writes <= WRITE_FLOWS, "every served write tool needs a flow here"

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
                structured = result.structured_content
                assert isinstance(structured, dict)
                schema = listed[name].output_schema
                assert schema is not None and output_schema_errors(schema, structured) == []
                return structured

            if "gno_remember" in listed:
                remember = {"text": FACT, "collection": "facts", "scopes": [SCOPE]}
                proposed = await call("gno_remember", remember)
                assert proposed["outcome"] == "candidates" and proposed["candidates"] == []
                added = await call("gno_remember", {**remember, "decision": "add"})
                assert added["outcome"] == "added"
                assert (added["record"]["text"], added["record"]["caller"]) == (FACT, "mcp")
                again = await call("gno_remember", {**remember, "decision": "add"})
                assert again["outcome"] == "existing"
                recalled = await call(
                    "gno_recall",
                    {"query": "when do releases ship", "collection": "facts", "scopes": [SCOPE]},
                )
                assert [fact["text"] for fact in recalled["facts"]] == [FACT]
                unscoped = await call(
                    "gno_recall", {"query": "releases", "collection": "facts", "scopes": ["x"]}
                )
                assert unscoped["facts"] == []

            if "gno_capture" in listed:
                note = {
                    "collection": "drafts",
                    "title": "Launch checklist",
                    "content": "Check the quokka dashboards before the launch.",
                    "tags": ["launch"],
                }
                receipt = await call("gno_capture", note)
                assert receipt["uri"].startswith("gno://drafts/")
                found = await call("gno_search", {"query": "quokka"})
                assert [hit["uri"] for hit in found["results"]] == [receipt["uri"]]

            if "gno_egress_policy_set" in listed:
                read = await call("gno_egress_policy_get", {"collection": "drafts"})
                confirmation = {
                    "collection": "drafts",
                    "currentPolicy": read["effectivePolicy"],
                    "currentRevision": read["revision"],
                    "targetPolicy": "lan",
                    "acknowledged": True,
                }
                unconfirmed = await client.call_tool(
                    "gno_egress_policy_set", {"collection": "drafts", "policy": "lan"}
                )
                assert unconfirmed.is_error
                relaxed = await call(
                    "gno_egress_policy_set",
                    {"collection": "drafts", "policy": "lan", "confirmation": confirmation},
                )
                assert relaxed["change"] == "relaxed"
                assert relaxed["current"]["revision"] == read["revision"] + 1
                replayed = await client.call_tool(
                    "gno_egress_policy_set",
                    {
                        "collection": "drafts",
                        "policy": "remote",
                        "confirmation": {**confirmation, "targetPolicy": "remote"},
                    },
                )
                assert replayed.is_error
                tightened = await call(
                    "gno_egress_policy_set", {"collection": "drafts", "policy": "local_only"}
                )
                assert tightened["change"] == "tightened"

            if "gno_egress_audit_purge" in listed:
                missing = await client.call_tool("gno_egress_audit_delete", {"auditId": "none"})
                assert missing.is_error
                assert sdk_error_code(missing) == "NOT_FOUND"
                purged = await call("gno_egress_audit_purge", {"confirm": True})
                assert purged["deleted"] == 0

            if "gno_trace_purge" in listed:  # tracing is off here: nothing to judge or export
                for name, arguments in [
                    ("gno_trace_label", {"traceId": "t", "label": "relevant", "targetRef": "x/y"}),
                    ("gno_trace_export", {"traceIds": ["t"]}),
                ]:
                    refused = await client.call_tool(name, arguments)
                    assert sdk_error_code(refused) == "NOT_FOUND", name
                assert (await call("gno_trace_delete", {"traceId": "t"}))["deleted"] is False
                assert (await call("gno_trace_purge", {"confirm": True}))["traces"] == 0

            if "gno_capture" in listed and "gno_rename_note" in listed:
                draft = await call(
                    "gno_capture",
                    {"collection": "drafts", "title": "Refactor me", "content": "A vole note."},
                )
                confirmed = {"schemaVersion": "1.0", "confirmation": "apply", "confirm": True}
                rename = {"ref": draft["uri"], "name": f"vole-{mode}"}
                plan = await call("gno_rename_note", {"action": "preview", **rename})
                assert plan["canApply"] is True
                renamed = await call(
                    "gno_rename_note",
                    {**rename, **confirmed, "action": "apply", "planDigest": plan["planDigest"]},
                )
                assert renamed["status"] == "applied"
                await call("gno_create_folder", {"collection": "drafts", "name": f"moved-{mode}"})
                move = {"ref": renamed["target"]["uri"], "folderPath": f"moved-{mode}"}
                plan = await call("gno_move_note", {"action": "preview", **move})
                moved = await call(
                    "gno_move_note",
                    {**move, **confirmed, "action": "apply", "planDigest": plan["planDigest"]},
                )
                assert moved["target"]["relPath"] == f"moved-{mode}/vole-{mode}.md"

            if "gno_capture" in listed and "gno_create_folder" in listed:
                made = await call("gno_create_folder", {"collection": "drafts", "name": "kept"})
                assert made["folderPath"] == "kept"
                copy = await call(
                    "gno_duplicate_note",
                    {"ref": receipt["uri"], "folderPath": "kept", "name": "checklist-copy"},
                )
                assert copy["uri"] == "gno://drafts/kept/checklist-copy.md"
                assert copy["sync"]["status"] == "completed"
                found = await call("gno_search", {"query": "quokka"})
                assert {hit["uri"] for hit in found["results"]} == {receipt["uri"], copy["uri"]}

            if "gno_add_collection" in listed:
                extra = Path(write_env["GNO_DATA_DIR"]).parent / f"extra-{mode}"
                extra.mkdir()
                (extra / "wombat.md").write_text("# Wombat\n\nBurrow notes.\n", encoding="utf-8")
                name = f"extra-{mode}".replace("2026-07-28", "modern")
                started = await call("gno_add_collection", {"path": str(extra), "name": name})
                job = await wait_for_job(call, started["jobId"])
                assert job["status"] == "completed", job
                found = await call("gno_search", {"query": "wombat"})
                assert [hit["uri"] for hit in found["results"]] == [f"gno://{name}/wombat.md"]
                (extra / "numbat.md").write_text("# Numbat\n\nTermite diet.\n", encoding="utf-8")
                synced = await call("gno_sync", {"collection": name})
                assert (await wait_for_job(call, synced["jobId"]))["status"] == "completed"
                found = await call("gno_search", {"query": "numbat"})
                assert [hit["uri"] for hit in found["results"]] == [f"gno://{name}/numbat.md"]
                if "gno_embed" in listed:
                    await embed_flow(call, name)
                removed = await call("gno_remove_collection", {"collection": name})
                assert removed["removed"] is True and removed["indexedDataRetained"] is True
                gone = await client.call_tool("gno_search", {"query": "numbat"})
                assert gone.structured_content["results"] == []  # type: ignore[index]


async def embed_flow(call: Any, name: str) -> None:
    """Embed a collection, find it by meaning, re-index it, clear its vectors."""
    status = await call("gno_status", {})
    assert status["embeddingBacklog"] > 0
    started = await call("gno_embed", {"collection": name})
    assert started["model"] == "builtin:use-multilingual-v3"
    job = await wait_for_job(call, started["jobId"], seconds=120)
    assert job["status"] == "completed", job
    assert job["typedResult"]["kind"] == "embed"
    assert job["typedResult"]["value"]["embedded"] == 2
    found = await call(
        "gno_vsearch", {"query": "what it eats: ants and termites", "collection": name}
    )
    assert found["results"][0]["uri"] == f"gno://{name}/numbat.md"
    fused = await call("gno_query", {"query": "what it eats", "collection": name})
    assert fused["meta"]["mode"] == "hybrid" and fused["meta"]["vectorsUsed"] is True
    indexed = await call("gno_index", {"collection": name})
    assert indexed["phases"] == ["sync", "embed"]
    job = await wait_for_job(call, indexed["jobId"], seconds=120)
    assert job["status"] == "completed" and job["typedResult"]["kind"] == "index", job
    assert job["typedResult"]["value"]["embed"]["embedded"] == 0  # nothing changed
    cleared = await call("gno_clear_collection_embeddings", {"collection": name, "mode": "all"})
    assert cleared["deletedVectors"] == 2 and cleared["mode"] == "all"
    status = await call("gno_status", {})
    row = next(c for c in status["collections"] if c["name"] == name)
    assert row["embeddedCount"] == 0 and status["embeddingBacklog"] >= 2


async def wait_for_job(call: Any, job_id: str, *, seconds: float = 15) -> dict[str, Any]:
    """Poll gno_job_status until the job leaves ``running`` (bounded)."""
    with trio.fail_after(seconds):
        while True:
            job: dict[str, Any] = await call("gno_job_status", {"jobId": job_id})
            if job["status"] != "running":
                return job
            await trio.sleep(0.05)


# ---------------------------------------------------------------------------
# Raw JSON-RPC over the pipes
# ---------------------------------------------------------------------------


def search_call(query: str, **arguments: Any) -> dict[str, Any]:
    return {"name": "gno_search", "arguments": {"query": query, **arguments}}


NEGOTIATION = {
    "1999-01-01": LEGACY,  # unknown: counter-offer the newest legacy version
    "2025-06-18": "2025-06-18",  # older and supported: echoed
    MODERN: LEGACY,  # not a handshake version
}


async def test_initialize_negotiates_a_handshake_version(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    negotiated: dict[str, str] = {}

    async def negotiate(requested: str) -> None:
        async with spawn(server_env, tmp_path) as wire:
            answer = await wire.call(1, "initialize", raw_initialize_params(requested))
            negotiated[requested] = answer["result"]["protocolVersion"]
            # The identity is the installed package's, as pyproject.toml declares it.
            assert answer["result"]["serverInfo"] == {
                "name": "gno",
                "version": importlib.metadata.version("gno-trio"),
            }
            assert set(answer["result"]["capabilities"]) == {"tools", "resources"}

    async with trio.open_nursery() as nursery:
        for requested in NEGOTIATION:
            nursery.start_soon(negotiate, requested)
    assert negotiated == NEGOTIATION


async def test_legacy_connection_serves_tools_and_refuses_the_modern_envelope(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path) as wire:
        early = await wire.call(1, "tools/list")
        assert early["error"]["code"] == -32602  # before initialize
        await wire.handshake()
        found = (await wire.call(2, "tools/call", search_call("ECONNREFUSED")))["result"]
        assert "resultType" not in found and "_meta" not in found
        assert found["structuredContent"]["results"][0]["uri"] == TROUBLESHOOTING
        assert found["content"][0]["text"].startswith('Found 1 results for "ECONNREFUSED"')
        enveloped = await wire.call(3, "tools/list", modern())
        assert enveloped["error"]["code"] == -32600


async def test_modern_connection_is_pinned_by_discover(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path) as wire:
        discover = (await wire.call(1, "server/discover", modern()))["result"]
        assert discover["supportedVersions"] == [MODERN]
        assert discover["resultType"] == "complete"
        assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "gno"

        listed = (await wire.call(2, "tools/list", modern()))["result"]
        schemas = {tool["name"]: tool["outputSchema"] for tool in listed["tools"]}
        found = await wire.call(3, "tools/call", modern(**search_call("token", limit=3)))
        result = found["result"]
        assert result["resultType"] == "complete"
        assert len(result["structuredContent"]["results"]) == 3
        assert output_schema_errors(schemas["gno_search"], result["structuredContent"]) == []

        late = await wire.call(4, "initialize", raw_initialize_params())
        assert late["error"]["code"] == -32022
        assert late["error"]["data"]["supported"] == [MODERN]

        bare = await wire.call(5, "tools/call", search_call("token"))
        assert bare["error"]["code"] == -32602  # no envelope on a modern connection
        gone = await wire.call(6, "ping", modern())
        assert gone["error"]["code"] == -32601  # ping does not exist in 2026-07-28

        read = (await wire.call(7, "resources/read", modern(uri="gno://tags")))["result"]
        assert json.loads(read["contents"][0]["text"])["meta"]["totalTags"] == 3
        missing = await wire.call(8, "resources/read", modern(uri="gno://evals/nope.md"))
        assert missing["error"]["code"] == -32602
        assert missing["error"]["data"] == {"uri": "gno://evals/nope.md"}


async def test_core_profile_hides_the_other_tools(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path, "--tool-profile", "core") as wire:
        await wire.handshake()
        listed = [tool["name"] for tool in (await wire.call(1, "tools/list"))["result"]["tools"]]
        assert listed == CATALOGUE.select("core", False)
        assert set(listed) == set(CORE_READ) & set(CATALOGUE.definitions)
        assert {"gno_search", "gno_get"} <= set(listed) and "gno_status" not in listed
        hidden = await wire.call(2, "tools/call", {"name": "gno_status", "arguments": {}})
        assert hidden["error"]["code"] == -32602
        assert hidden["error"]["data"] == {
            "name": "gno_status",
            "writeTool": False,
            "profile": "core",
            "enabledBy": ["--tool-profile full"],
        }
        assert "not in the core tool profile" in hidden["error"]["message"]
        unknown = await wire.call(3, "tools/call", {"name": "gno_nope", "arguments": {}})
        assert unknown["error"]["code"] == -32602
        served = await wire.call(4, "tools/call", search_call("zebra"))
        assert len(served["result"]["structuredContent"]["results"]) == 2


BAD_ARGUMENTS = [
    ("gno_search", {"query": "token", "limit": 500}, "$.limit"),
    ("gno_search", {"query": 5}, "$.query"),
    ("gno_search", {}, "`query`"),
    ("gno_get", {"ref": API_REFERENCE, "fromLine": 0}, "$.fromLine"),
    ("gno_multi_get", {"maxBytes": "big"}, "$.maxBytes"),
    ("gno_changes", {"limit": -1}, "$.limit"),
]


async def test_bad_argument_is_a_tool_error_naming_the_field(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path) as wire:
        await wire.handshake()
        for request_id, (tool, arguments, field) in enumerate(BAD_ARGUMENTS, 1):
            answer = await wire.call(
                request_id, "tools/call", {"name": tool, "arguments": arguments}
            )
            result = answer["result"]
            assert result["isError"] is True, (tool, arguments)
            assert tool_error_code(result) == "INVALID_INPUT"
            assert field in tool_error_message(result), (tool, arguments)
            assert field in result["content"][0]["text"]


async def test_engine_failure_is_a_tool_error_with_its_code(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path) as wire:
        await wire.handshake()
        missing = await wire.call(
            1, "tools/call", {"name": "gno_get", "arguments": {"ref": "gno://notes/gone.md"}}
        )
        assert missing["result"]["isError"] is True
        assert tool_error_code(missing["result"]) == "NOT_FOUND"
        assert "gno://notes/gone.md" in tool_error_message(missing["result"])


async def test_malformed_lines_stdout_purity_and_eof_exit(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(server_env, tmp_path, "--verbose") as wire:
        await wire.handshake()
        await wire.send_bytes(b"{not json\n")
        assert (await wire.response(None))["error"]["code"] == -32700
        await wire.send_bytes(b"\xff\xfe\n")
        assert (await wire.response(None))["error"]["code"] == -32700
        await wire.send_bytes(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
        assert (await wire.response(None))["error"]["code"] == -32600
        await wire.send_bytes(b'{"jsonrpc":"2.0","id":2,"method":42}\n')
        assert (await wire.response(2))["error"]["code"] == -32600
        await wire.send_bytes(b"\n  \n")  # blank lines are skipped silently
        found = await wire.call(3, "tools/call", search_call("zebra", tagsAll=["urgent"]))
        hits = found["result"]["structuredContent"]["results"]
        assert [hit["uri"] for hit in hits] == ["gno://notes/alpha.md"]
        # Responses nobody asked for and stray notifications draw no output.
        await wire.send_bytes(b'{"jsonrpc":"2.0","id":99,"result":{}}\n')
        await wire.notify("notifications/progress", {"progressToken": 1, "progress": 1})
        assert (await wire.call(4, "ping"))["result"] == {}
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.exit_code() == 0
    assert wire.raw_lines, "the server answered nothing"
    for line in wire.raw_lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
        assert b"\n" not in line


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_cancelled_search_produces_no_response(
    server_env: dict[str, str], tmp_path: Path, era: str
) -> None:
    def params(**fields: Any) -> dict[str, Any]:
        return modern(**fields) if era == "modern" else fields

    async with spawn(server_env, tmp_path) as wire:
        if era == "legacy":
            await wire.handshake()
        else:
            await wire.call(0, "server/discover", modern())
        # The request and its cancellation arrive in one write, so the server
        # reads the cancel before the search can have answered.
        await wire.send_bytes(
            request_line(7, "tools/call", params(**search_call("token")))
            + notification_line("notifications/cancelled", {"requestId": 7, "reason": "gave up"})
        )
        after = await wire.call(8, "tools/call", params(**search_call("token")))
        assert after["result"]["structuredContent"]["results"]
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.exit_code() == 0
    assert all(json.loads(line).get("id") != 7 for line in wire.raw_lines)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_progress_token_on_a_read_tool_adds_no_stray_notifications(
    server_env: dict[str, str], tmp_path: Path, era: str
) -> None:
    """Read tools finish in one step: the response must be the next and only line.

    Progress notifications belong to long-running work (indexing, embedding);
    a read tool that emitted any would have to tie them to the caller's token
    and stop before its response, which ``Wire.response`` checks line by line.
    """
    async with spawn(server_env, tmp_path) as wire:
        if era == "legacy":
            await wire.handshake()
        for request_id, tool in enumerate(("gno_search", "gno_status", "gno_multi_get"), 1):
            arguments = TOOL_CALLS[tool] if tool != "gno_search" else {"query": "token"}
            fields: dict[str, Any] = {
                "name": tool,
                "arguments": arguments,
                "_meta": {"progressToken": f"p{request_id}"},
            }
            answer = await wire.call(
                request_id, "tools/call", modern(**fields) if era == "modern" else fields
            )
            assert "isError" not in answer["result"]


def test_unknown_tool_profile_fails_before_serving(server_env: dict[str, str]) -> None:
    completed = subprocess.run(
        server_command("--tool-profile", "bogus"),
        input=request_line(1, "initialize", raw_initialize_params()),
        capture_output=True,
        cwd=REPO_ROOT,
        env=full_environment(server_env),
        timeout=20,
        check=False,
    )
    assert completed.returncode != 0
    assert completed.stdout == b""
    assert b"VALIDATION" in completed.stderr
    assert b"bogus" in completed.stderr


# ---------------------------------------------------------------------------
# Untrusted tool arguments, fuzzed in process against the same index
# ---------------------------------------------------------------------------

SEARCH_FIELDS = (
    "query",
    "collection",
    "limit",
    "minScore",
    "lang",
    "intent",
    "exclude",
    "since",
    "until",
    "categories",
    "author",
    "tagsAll",
    "tagsAny",
    "projectHints",
    "unknownExtra",
)
# Text that exercises the query grammar: phrases, negation, prefixes, FTS5 syntax.
QUERY_TEXT = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(
            ['"', "-", "*", "(", ")", "NEAR", "AND", "OR", "NOT", ":", "^", "token", "zebra", " "]
        ),
        max_size=12,
    ).map("".join),
)
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    QUERY_TEXT,
)
JSON_VALUES = st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=4))
DATE_BOUNDS = st.one_of(
    st.sampled_from(["2024-01-01", "2026-03-01T09:00:00", "last week", "yesterday", "2026-13-45"]),
    st.text(max_size=12),
)
TAGS = st.lists(st.one_of(st.sampled_from(["urgent", "project/alpha", "project"]), st.text()))
# Well-typed arguments reach the engine; loosely typed ones test the decoder.
WELL_TYPED_SEARCH = st.fixed_dictionaries(
    {"query": QUERY_TEXT},
    optional={
        "limit": st.integers(min_value=1, max_value=100),
        "collection": st.one_of(st.sampled_from(["evals", "notes", "nope"]), st.text()),
        "minScore": st.floats(min_value=0, max_value=1),
        "lang": st.sampled_from(["en", "de", "fr", "zz"]),
        "intent": QUERY_TEXT,
        "exclude": st.lists(QUERY_TEXT, max_size=3),
        "since": DATE_BOUNDS,
        "until": DATE_BOUNDS,
        "categories": st.lists(st.text(max_size=8), max_size=2),
        "author": st.text(max_size=8),
        "tagsAll": TAGS,
        "tagsAny": TAGS,
    },
)
SEARCH_ARGUMENTS = st.one_of(
    WELL_TYPED_SEARCH,
    st.dictionaries(st.sampled_from(SEARCH_FIELDS), JSON_VALUES, max_size=6),
)
# Codes a caller can act on; RUNTIME would mean an unexpected exception escaped a handler.
EXPECTED_TOOL_ERRORS = {"INVALID_INPUT", "VALIDATION", "NOT_FOUND", "QUERY_SYNTAX"}


@pytest.fixture
def served_app(server_env: dict[str, str]) -> Iterator[McpApp]:
    dirs = Dirs(
        config=Path(server_env["GNO_CONFIG_DIR"]),
        data=Path(server_env["GNO_DATA_DIR"]),
        cache=Path(server_env["GNO_CACHE_DIR"]),
    )
    with Engine.open(dirs=dirs, create=False) as engine:
        yield build_app(Runtime(engine=engine))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arguments=SEARCH_ARGUMENTS, tool=st.sampled_from(["gno_search", "gno_query"]))
async def test_fuzzed_search_arguments_get_a_result_or_an_actionable_tool_error(
    served_app: McpApp, arguments: dict[str, Any], tool: str
) -> None:
    ctx = RequestContext(era=Era.LEGACY, protocol_version=LEGACY, session_id="fuzz")
    schema = served_app.tools[tool].spec.output_schema
    assert schema is not None
    answer = await served_app.handle_request(
        "tools/call", {"name": tool, "arguments": arguments}, ctx
    )
    if answer.get("isError"):
        assert tool_error_code(answer) in EXPECTED_TOOL_ERRORS, (arguments, answer)
        assert tool_error_message(answer)
    else:
        structured = answer["structuredContent"]
        assert output_schema_errors(schema, structured) == [], arguments
        assert len(structured["results"]) <= arguments.get("limit", 5)


async def test_peek_of_an_index_without_collections_matches_its_schema(tmp_path: Path) -> None:
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        app = build_app(Runtime(engine=engine))
        ctx = RequestContext(era=Era.LEGACY, protocol_version=LEGACY, session_id="peek")
        answer = await app.handle_request("tools/call", {"name": "gno_peek", "arguments": {}}, ctx)
    schema = app.tools["gno_peek"].spec.output_schema
    assert schema is not None
    structured = answer["structuredContent"]
    assert output_schema_errors(schema, structured) == []
    assert (structured["initialized"], structured["counts"], structured["recent"]) == (
        False,
        None,
        [],
    )
    assert "no collections" in answer["content"][0]["text"]


# ---------------------------------------------------------------------------
# Runtime: a cancelled engine call interrupts SQLite
# ---------------------------------------------------------------------------

# Counting to 10**9 in a recursive CTE takes minutes; only an interrupt ends it fast.
SLOW_SQL = (
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000000) "
    "SELECT count(*) FROM n"
)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        yield Runtime(engine=engine)


async def test_cancelled_engine_call_interrupts_sqlite_and_returns_its_connection(
    runtime: Runtime,
) -> None:
    slow_conn: list[sqlite3.Connection] = []
    outcome: list[BaseException | int] = []
    finished = trio.Event()
    token = trio.lowlevel.current_trio_token()

    def slow() -> int:
        try:
            with runtime.engine.connection() as conn:
                slow_conn.append(conn)
                count: int = conn.execute(SLOW_SQL).fetchone()[0]
            outcome.append(count)
            return count
        except BaseException as exc:
            outcome.append(exc)
            raise
        finally:
            token.run_sync_soon(finished.set)

    # The count takes minutes uninterrupted: the generous bounds below only catch a
    # cancel that waits for it, or a thread that is abandoned without an interrupt.
    with trio.fail_after(60):
        with trio.move_on_after(0.3) as deadline:
            await runtime.run(slow)
    assert deadline.cancelled_caught

    # The abandoned thread stops because its statement was interrupted.
    with trio.fail_after(60):
        await finished.wait()
    assert len(outcome) == 1 and isinstance(outcome[0], sqlite3.OperationalError)
    assert "interrupt" in str(outcome[0])

    # Its connection comes back to the pool before its thread slot does (the
    # slot is given back once the work has returned), and the most recently
    # returned connection is handed out next: once no slot is borrowed, the next
    # call gets the interrupted connection, and it answers queries again.
    # Probing in a loop instead races: a probe that starts before the slow
    # thread has released its connection returns its own on top of it.
    with trio.fail_after(10.0):  # generous: a loaded machine schedules the return late
        while runtime.limiter.borrowed_tokens:
            await trio.sleep(0.01)

    def probe() -> tuple[sqlite3.Connection, int]:
        with runtime.engine.connection() as conn:
            return conn, conn.execute("SELECT count(*) FROM documents").fetchone()[0]

    reused, documents = await runtime.run(probe)
    assert reused is slow_conn[0]
    assert documents == 0


async def test_engine_call_cancelled_before_its_thread_starts_returns_its_connection(
    runtime: Runtime,
) -> None:
    def which() -> sqlite3.Connection:
        with runtime.engine.connection() as conn:
            return conn

    pooled = await runtime.run(which)  # the pool now holds exactly this idle connection
    ran: list[bool] = []

    def never() -> None:
        ran.append(True)

    with trio.CancelScope() as scope:
        scope.cancel()
        await runtime.run(never)
    assert scope.cancelled_caught
    await trio.sleep(0.05)  # a wrongly started thread would have run by now
    assert ran == []
    assert await runtime.run(which) is pooled


async def test_an_abandoned_engine_call_keeps_its_thread_slot_until_it_returns(
    tmp_path: Path,
) -> None:
    """Cancelling a request frees the request at once but not the thread it left running."""
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        runtime = Runtime(engine=engine, limiter=trio.CapacityLimiter(1))
        release = threading.Event()

        def stuck() -> int:
            release.wait(10)
            return 1

        def answer() -> int:
            return 2

        with trio.move_on_after(0.1) as abandoned:
            await runtime.run(stuck)
        assert abandoned.cancelled_caught
        assert runtime.limiter.borrowed_tokens == 1  # its thread still runs
        with trio.move_on_after(0.2) as queued:
            await runtime.run(answer)
        assert queued.cancelled_caught  # and no second call may start beside it
        release.set()
        with trio.fail_after(10):
            assert await runtime.run(answer) == 2
        assert runtime.limiter.borrowed_tokens == 0


async def test_queued_engine_calls_hold_no_connection_until_they_run(tmp_path: Path) -> None:
    """A burst of requests opens at most one connection per worker slot."""
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        runtime = Runtime(engine=engine, limiter=trio.CapacityLimiter(2))
        used: list[sqlite3.Connection] = []

        def query() -> int:
            with engine.connection() as conn:
                used.append(conn)
                time.sleep(0.005)
                value: int = conn.execute("SELECT 1").fetchone()[0]
            return value

        async with trio.open_nursery() as nursery:
            for _ in range(20):
                nursery.start_soon(runtime.run, query)
        assert len(used) == 20
        assert len({id(conn) for conn in used}) <= 2


async def test_quick_engine_calls_run_one_at_a_time_and_a_slow_one_holds_them_back_briefly(
    runtime: Runtime,
) -> None:
    """Quick calls (searches) run one after another, never side by side contending for
    the GIL; a slow call holds a quick one back only about ENGINE_STAGGER, after which
    the quick one runs beside it. (The one-at-a-time part runs with a stagger no quick
    call reaches on a loaded machine; the default's is 10 ms.)"""
    assert isinstance(runtime.limiter, StaggeredLimiter)
    patient = Runtime(engine=runtime.engine, limiter=StaggeredLimiter(ENGINE_THREADS, 5.0))
    running = 0
    most = 0
    lock = threading.Lock()

    def quick() -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        with runtime.engine.connection() as conn:
            value: int = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        with lock:
            running -= 1
        return value

    async with trio.open_nursery() as nursery:
        for _ in range(40):
            nursery.start_soon(patient.run, quick)
    assert most == 1

    release = threading.Event()
    slow_running = trio.Event()
    token = trio.lowlevel.current_trio_token()

    def slow() -> int:
        token.run_sync_soon(slow_running.set)
        release.wait(120)
        return 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.run, slow)
        await slow_running.wait()
        # The quick call finishes while the slow one still holds its thread: it was
        # held back only by the stagger, not until the slow one let go.
        with trio.fail_after(60):
            assert await runtime.run(quick) == 0
        assert not release.is_set() and runtime.limiter.borrowed_tokens == 1
        release.set()
