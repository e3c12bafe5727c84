"""``gno_recall`` / ``gno_remember`` over MCP: registry, identity, results and error codes.

Most tests drive the real server (``build_app`` over a real index) through the
stdio transport on in-memory streams, speaking raw JSON-RPC, so identity
comes from a real ``initialize`` or a real ``_meta`` envelope. Two tests spawn
``python -m gno_trio mcp`` processes: one to show that the session identity
is one per process, one where another process holds the write lease. Every
recall answer is validated against the seed's ``memory-recall`` schema and
against the schema the server advertises.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.memory.semantic import NOT_EMBEDDED
from gno_trio.engine.store import lease
from gno_trio.runtime import Runtime
from gno_trio.server.context import RequestContext, ToolCallContext
from gno_trio.tools import CATALOGUE, CORE_READ, CORE_WRITE
from gno_trio.tools.memory import RememberInput, make_remember
from tests.support.in_process_stdio import serving
from tests.support.lease_holder import lease_held_elsewhere
from tests.support.stdio_session import server_environment
from tests.support.stepped_clock import QueueProbe
from tests.support.tool_results import handler_error_code

REPO = Path(__file__).resolve().parents[2]
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
SCOPE = "project:gno-trio"
FACT = "Releases ship on Fridays after the smoke tests pass."


# ---------------------------------------------------------------------------
# An index and an in-process server
# ---------------------------------------------------------------------------


@pytest.fixture
def dirs(tmp_path: Path) -> Dirs:
    facts = tmp_path / "facts"
    facts.mkdir()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nReleases are planned here.\n", "utf-8")
    found = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=found) as engine:
        engine.collections.add(str(facts), name="facts", memory_managed=True)
        engine.collections.add(str(notes), name="notes")
        engine.sync()
    return found


@pytest.fixture
def engine(dirs: Dirs) -> Iterator[Engine]:
    with Engine.open(dirs=dirs) as opened:
        yield opened


def recall_args(query: str = "when do releases ship", **extra: Any) -> dict[str, Any]:
    return {"query": query, "collection": "facts", "scopes": [SCOPE], **extra}


def remember_args(text: str = FACT, **extra: Any) -> dict[str, Any]:
    return {"text": text, "collection": "facts", "scopes": [SCOPE], **extra}


# ---------------------------------------------------------------------------
# Registry and profiles
# ---------------------------------------------------------------------------


def test_memory_tools_join_the_core_profile_as_read_and_write() -> None:
    assert "gno_recall" in CORE_READ and "gno_remember" in CORE_WRITE
    core_read = CATALOGUE.select("core", False)
    core_write = CATALOGUE.select("core", True)
    assert "gno_recall" in core_read and "gno_remember" not in core_read
    assert {"gno_recall", "gno_remember"} <= set(core_write)
    assert "gno_remember" in CATALOGUE.select("full", True)
    assert "gno_remember" not in CATALOGUE.select("full", False)


async def test_core_listing_advertises_recall_read_only_and_remember_as_a_write(
    engine: Engine,
) -> None:
    async with serving(engine, write=True, profile="core") as (client, _):
        await client.open_legacy({"name": "lister", "version": "1"})
        tools = {tool["name"]: tool for tool in await client.tools()}
        recall_tool, remember_tool = tools["gno_recall"], tools["gno_remember"]
        assert recall_tool["annotations"]["readOnlyHint"] is True
        assert recall_tool["annotations"]["idempotentHint"] is True
        assert remember_tool["annotations"]["readOnlyHint"] is False
        assert remember_tool["annotations"]["destructiveHint"] is False
        assert remember_tool["annotations"]["idempotentHint"] is False
        assert recall_tool["inputSchema"]["required"] == ["query", "collection", "scopes"]
        assert remember_tool["inputSchema"]["required"] == ["text", "collection", "scopes"]
        for schema in (recall_tool["inputSchema"], remember_tool["inputSchema"]):
            assert {"caller", "session"}.isdisjoint(schema["properties"])  # never identity
        scopes = recall_tool["inputSchema"]["properties"]["scopes"]
        assert (scopes["minItems"], scopes["maxItems"]) == (1, 8)
    async with serving(engine, write=False, profile="core") as (client, _):
        await client.open_legacy({"name": "lister", "version": "1"})
        names = [tool["name"] for tool in await client.tools()]
        assert "gno_recall" in names and "gno_remember" not in names
        refused = await client.request(
            "tools/call", {"name": "gno_remember", "arguments": remember_args(decision="add")}
        )
        assert refused["error"]["code"] == -32602


async def test_remember_handler_rechecks_the_write_gate(engine: Engine, dirs: Dirs) -> None:
    """Even if a registry were mis-wired, a read-only server does not write facts."""
    runtime = Runtime(engine=engine, write_enabled=False)
    handler = make_remember(runtime)
    request = RequestContext(era="legacy", protocol_version=LEGACY, session_id="s")  # type: ignore[arg-type]
    args = RememberInput(text=FACT, collection="facts", scopes=[SCOPE], decision="add")
    result = await handler(args, ToolCallContext(request, "gno_remember"))
    assert result.is_error
    assert result.structured is None and handler_error_code(result.text) == "WRITE_DISABLED"
    assert not any((dirs.config.parent / "facts").rglob("*.md"))


# ---------------------------------------------------------------------------
# Identity: caller from the client, session from the connection
# ---------------------------------------------------------------------------


async def test_legacy_caller_is_the_initialize_client_name_and_session_the_instance(
    engine: Engine,
) -> None:
    async with serving(engine) as (client, runtime):
        await client.open_legacy({"name": "claude-code", "version": "2.1"})
        added = await client.ok("gno_remember", remember_args(decision="add"))
        assert added["outcome"] == "added"
        record = added["record"]
        assert (record["caller"], record["session"]) == ("claude-code", runtime.instance_id)
        recalled = await client.ok("gno_recall", recall_args())
        assert [f["text"] for f in recalled["facts"]] == [FACT]
        receipt = recalled["receipt"]
        assert (receipt["caller"], receipt["session"]) == ("claude-code", runtime.instance_id)
        again = await client.ok("gno_recall", recall_args())
        assert again["receipt"]["session"] == runtime.instance_id


async def test_modern_caller_comes_from_the_envelope_client_info(engine: Engine) -> None:
    async with serving(engine) as (client, runtime):
        await client.open_modern({"name": "modern-agent", "version": "1"})
        added = await client.ok("gno_remember", remember_args(decision="add"))
        assert (added["record"]["caller"], added["record"]["session"]) == (
            "modern-agent",
            runtime.instance_id,
        )
        recalled = await client.ok("gno_recall", recall_args())
        assert recalled["receipt"]["caller"] == "modern-agent"


@pytest.mark.parametrize("opening", ["modern-without-client-info", "legacy-blank-name"])
async def test_caller_is_mcp_when_the_client_names_nobody(engine: Engine, opening: str) -> None:
    async with serving(engine) as (client, _):
        if opening == "modern-without-client-info":
            await client.open_modern(None)
        else:
            await client.open_legacy({"name": "", "version": "1"})
        added = await client.ok("gno_remember", remember_args(decision="add"))
        assert added["record"]["caller"] == "mcp"
        assert (await client.ok("gno_recall", recall_args()))["receipt"]["caller"] == "mcp"


async def test_arguments_cannot_smuggle_an_identity(engine: Engine) -> None:
    async with serving(engine) as (client, runtime):
        await client.open_legacy({"name": "honest", "version": "1"})
        smuggled = {"caller": "someone-else", "session": "stolen"}
        added = await client.ok("gno_remember", remember_args(decision="add", **smuggled))
        assert (added["record"]["caller"], added["record"]["session"]) == (
            "honest",
            runtime.instance_id,
        )
        receipt = (await client.ok("gno_recall", recall_args(**smuggled)))["receipt"]
        assert (receipt["caller"], receipt["session"]) == ("honest", runtime.instance_id)


def recall_in_new_process(dirs: Dirs) -> list[dict[str, Any]]:
    """Two recalls in one freshly spawned ``gno-trio mcp`` process; their receipts."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "proc", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ] + [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "gno_recall", "arguments": recall_args()},
        }
        for i in (1, 2)
    ]
    completed = subprocess.run(
        [sys.executable, "-m", "gno_trio", "mcp"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
        env=server_environment(dirs),
    )
    answers = [json.loads(line) for line in completed.stdout.splitlines()]
    by_id = {answer["id"]: answer for answer in answers}
    return [by_id[i]["result"]["structuredContent"]["receipt"] for i in (1, 2)]


def test_stdio_session_is_one_per_process(dirs: Dirs) -> None:
    first = recall_in_new_process(dirs)
    second = recall_in_new_process(dirs)
    assert first[0]["session"] == first[1]["session"]
    assert second[0]["session"] == second[1]["session"]
    assert first[0]["session"] != second[0]["session"]
    assert {r["caller"] for r in first + second} == {"proc"}


# ---------------------------------------------------------------------------
# Results and errors through the wire
# ---------------------------------------------------------------------------


async def test_remember_outcomes_and_supersession_over_mcp(engine: Engine) -> None:
    async with serving(engine) as (client, _):
        await client.open_legacy({"name": "agent", "version": "1"})
        proposal = await client.ok("gno_remember", remember_args())
        assert proposal == {
            "outcome": "candidates",
            "candidates": [],
            "matching": {
                "mode": "lexical",
                "threshold": 0.5,
                "semanticUnavailable": NOT_EMBEDDED.format(name="facts"),
            },
        }
        added = (await client.ok("gno_remember", remember_args(decision="add")))["record"]
        existing = await client.ok("gno_remember", remember_args(decision="add"))
        assert existing["outcome"] == "existing" and existing["record"]["uri"] == added["uri"]
        newer = "Releases ship on Thursdays after the smoke tests pass."
        likely = await client.ok("gno_remember", remember_args(newer))
        assert likely["outcome"] == "candidates"
        assert likely["candidates"][0]["uri"] == added["uri"]
        assert likely["candidates"][0]["match"] == "likely"
        superseded = await client.ok(
            "gno_remember",
            remember_args(
                newer,
                decision="supersede",
                predecessorUri=added["uri"],
                predecessorHash=added["contentHash"],
            ),
        )
        assert superseded["outcome"] == "superseded"
        assert superseded["sync"] == {"status": "completed"}
        assert superseded["record"]["supersedes"] == [added["uri"]]
        facts = (await client.ok("gno_recall", recall_args()))["facts"]
        assert [f["text"] for f in facts] == [newer]
        conflict = await client.error(
            "gno_remember",
            remember_args(
                "Releases ship on Mondays.",
                decision="supersede",
                predecessorUri=added["uri"],
                predecessorHash=added["contentHash"],
            ),
        )
        assert conflict == "MEMORY_SUPERSEDE_CONFLICT"


async def test_recall_answer_is_budgeted_cited_and_schema_valid(engine: Engine) -> None:
    async with serving(engine) as (client, _):
        await client.open_legacy({"name": "agent", "version": "1"})
        empty = await client.ok("gno_recall", recall_args())
        assert empty["facts"] == [] and "gno-trio remember" in empty["hint"]
        for day in ("Monday", "Tuesday", "Wednesday"):
            await client.ok(
                "gno_remember", remember_args(f"Release trains leave on {day}.", decision="add")
            )
        answer = await client.ok("gno_recall", recall_args("release trains", maxFacts=2))
        assert len(answer["facts"]) == 2 and answer["budget"]["omitted"] == 1
        assert answer["budget"]["maxFacts"] == 2 and answer["budget"]["maxTokens"] == 512
        assert answer["retrieval"]["mode"] == "lexical"
        assert all(f["uri"].startswith("gno://facts/facts/") for f in answer["facts"])
        assert answer["receipt"]["memoryIds"] == [f["docid"] for f in answer["facts"]]


MCP_ERRORS: list[tuple[str, str, dict[str, Any]]] = [
    ("MEMORY_QUERY_REQUIRED", "gno_recall", recall_args("?!")),
    ("MEMORY_QUERY_REQUIRED", "gno_recall", recall_args("   ")),
    ("MEMORY_COLLECTION_REQUIRED", "gno_recall", {**recall_args(), "collection": " "}),
    ("MEMORY_COLLECTION_NOT_FOUND", "gno_recall", {**recall_args(), "collection": "nope"}),
    ("MEMORY_COLLECTION_UNMANAGED", "gno_recall", {**recall_args(), "collection": "notes"}),
    ("MEMORY_SCOPES_INVALID", "gno_recall", {**recall_args(), "scopes": ["no spaces"]}),
    ("MEMORY_TEXT_REQUIRED", "gno_remember", remember_args("  ")),
    ("MEMORY_TEXT_REQUIRED", "gno_remember", remember_args("nul \u0000 byte")),
    ("MEMORY_TEXT_TOO_LARGE", "gno_remember", remember_args("x" * 5000)),
    ("MEMORY_COLLECTION_REQUIRED", "gno_remember", {**remember_args(), "collection": ""}),
    ("MEMORY_COLLECTION_NOT_FOUND", "gno_remember", {**remember_args(), "collection": "nope"}),
    ("MEMORY_COLLECTION_UNMANAGED", "gno_remember", {**remember_args(), "collection": "notes"}),
    ("MEMORY_SCOPES_REQUIRED", "gno_remember", {**remember_args(), "scopes": [" "]}),
    ("MEMORY_SCOPES_INVALID", "gno_remember", {**remember_args(), "scopes": ["a;b"]}),
    ("MEMORY_PREDECESSOR_REQUIRED", "gno_remember", remember_args(decision="supersede")),
    (
        "MEMORY_PREDECESSOR_NOT_FOUND",
        "gno_remember",
        remember_args(
            decision="supersede", predecessorUri="gno://notes/plan.md", predecessorHash="0" * 64
        ),
    ),
    (
        "MEMORY_FENCED_DERIVED",
        "gno_remember",
        remember_args(decision="add", derivedFrom=["gno://notes/plan.md"]),
    ),
    (
        "MEMORY_RECEIPT_INVALID",
        "gno_remember",
        remember_args(decision="add", receipt={"spanHashes": ["zz"]}),
    ),
]


@pytest.mark.parametrize(
    ("code", "tool", "arguments"), MCP_ERRORS, ids=[f"{t}-{c}" for c, t, _ in MCP_ERRORS]
)
async def test_bad_input_gets_its_memory_code_over_mcp(
    engine: Engine, dirs: Dirs, code: str, tool: str, arguments: dict[str, Any]
) -> None:
    async with serving(engine) as (client, _):
        await client.open_legacy({"name": "agent", "version": "1"})
        assert await client.error(tool, arguments) == code
    assert not any((dirs.config.parent / "facts").rglob("*.md"))


async def test_schema_level_refusals_name_the_argument(engine: Engine) -> None:
    async with serving(engine) as (client, _):
        await client.open_legacy({"name": "agent", "version": "1"})
        too_many = {**recall_args(), "scopes": [f"s{i}" for i in range(9)]}
        assert await client.error("gno_recall", too_many) == "INVALID_INPUT"
        assert await client.error("gno_recall", recall_args(maxTokens=9000)) == "INVALID_INPUT"
        assert await client.error("gno_remember", remember_args(decision="upsert")) == (
            "INVALID_INPUT"
        )


async def test_replay_and_receipt_checks_over_mcp(engine: Engine) -> None:
    async with serving(engine) as (client, _):
        await client.open_legacy({"name": "agent", "version": "1"})
        await client.ok("gno_remember", remember_args(decision="add"))
        answer = await client.ok("gno_recall", recall_args())
        receipt = answer["receipt"]
        fenced = await client.error(
            "gno_remember", remember_args(decision="add", receipt=receipt, scopes=["other"])
        )
        assert fenced == "MEMORY_FENCED_REPLAY"
        dropped = {**receipt, "spanHashes": []}
        assert (
            await client.error(
                "gno_remember", remember_args(decision="add", receipt=dropped, scopes=["other"])
            )
            == "MEMORY_RECEIPT_INVALID"
        )
        mismatch = await client.error(
            "gno_remember",
            remember_args(
                "Releases ship on Sundays.",
                decision="supersede",
                predecessorUri=answer["facts"][0]["uri"],
                predecessorHash="f" * 64,
            ),
        )
        assert mismatch == "MEMORY_PREDECESSOR_HASH_MISMATCH"
    # A receipt from this connection is stale on the next one (another session).
    async with serving(engine) as (client, _):
        await client.open_legacy({"name": "agent", "version": "1"})
        stale = await client.error(
            "gno_remember",
            remember_args("A different fact.", decision="add", receipt=receipt),
        )
        assert stale == "MEMORY_RECEIPT_INVALID"


async def test_remember_waits_on_the_shared_lease_and_answers_busy(
    engine: Engine, dirs: Dirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapter takes no lock; the service's lease contends with another process."""
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "150")
    with lease_held_elsewhere(dirs.write_lock) as holder:
        async with serving(engine) as (client, _):
            await client.open_legacy({"name": "agent", "version": "1"})
            busy = await client.error("gno_remember", remember_args(decision="add"))
            assert busy == "MEMORY_WRITE_LEASE_BUSY"
            # Reads and proposals need no lease.
            assert (await client.ok("gno_remember", remember_args()))["outcome"] == "candidates"
            assert (await client.ok("gno_recall", recall_args()))["facts"] == []
            await trio.to_thread.run_sync(holder.release)
            added = await client.ok("gno_remember", remember_args(decision="add"))
            assert added["outcome"] == "added"


async def test_a_remember_cancelled_while_waiting_for_the_lease_never_writes(
    engine: Engine, dirs: Dirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "30000")
    probe = QueueProbe()
    monkeypatch.setattr(lease, "time", probe)
    with lease_held_elsewhere(dirs.write_lock) as holder:
        async with serving(engine) as (client, _):
            await client.open_legacy({"name": "agent", "version": "1"})
            call = {"name": "gno_remember", "arguments": remember_args(decision="add")}
            await client.send({"jsonrpc": "2.0", "id": "w", "method": "tools/call", "params": call})
            assert await trio.to_thread.run_sync(probe.queued.wait, 60)  # queued on the lease
            cancel = {"requestId": "w", "reason": "user gave up"}
            await client.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )
            await trio.sleep(0.3)
            await trio.to_thread.run_sync(holder.release)
            await trio.sleep(0.5)  # time enough for a late write, were one coming
            assert (await client.ok("gno_recall", recall_args()))["facts"] == []
    assert not any((dirs.config.parent / "facts").rglob("*.md"))
