"""Opt-in retrieval traces: recorded by the retrieval tools, bounded, judged, exported, deleted.

Each test builds a real index with ``retrievalTraces`` configured, spawns
``python -m gno_trio mcp`` and talks raw JSON-RPC to it (the trace id travels
in ``_meta``, which the official client hides). Every answer is checked
against the schema the server advertises and against GNO's own
``retrieval-trace-*`` schemas.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from gno_trio.config.features import RetrievalTraces, TraceRetention
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.traces import store as trace_store
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import Pipe, mcp_server, write_tree

NOTES = {
    "launch.md": "# Launch\n\nThe okapi launch is on Friday.\nBring the okapi slides.\n",
    "other.md": "# Other\n\nNothing about the event here.\n",
}


def traced_engine(engine: Engine, tmp_path: Path, mode: str | None, **retention: int) -> Engine:
    notes = write_tree(tmp_path / "vault" / "notes", NOTES)
    engine.collections.add(str(notes), name="notes")
    engine.sync()
    settings = (
        RetrievalTraces(enabled=True, redaction_mode=mode, retention=TraceRetention(**retention))  # type: ignore[arg-type]
        if mode is not None
        else RetrievalTraces()
    )
    engine.update_config(lambda current: attrs.evolve(current, retrieval_traces=settings))
    return engine


def trace_id_of(result: dict[str, Any]) -> str:
    trace_id = result["_meta"]["gno"]["retrievalTrace"]["traceId"]
    assert isinstance(trace_id, str) and trace_id
    return trace_id


async def search(pipe: Pipe, query: str = "okapi") -> dict[str, Any]:
    result = await pipe.session.tool("gno_search", {"query": query, "limit": 3})
    assert not result.get("isError"), result
    pipe.checked("gno_search", result)
    return result


def trace_rows(engine: Engine) -> int:
    conn = sqlite3.connect(engine.location.db_path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM retrieval_traces").fetchone()[0])
    finally:
        conn.close()


async def test_disabled_tracing_adds_no_meta_and_writes_nothing(
    engine: Engine, tmp_path: Path
) -> None:
    traced_engine(engine, tmp_path, None)
    async with mcp_server(server_environment(engine.location.dirs)) as pipe:
        result = await search(pipe)
        assert "_meta" not in result
        got = await pipe.session.tool(
            "gno_get", {"ref": "notes/launch.md", "fromLine": 1, "lineCount": 2, "traceId": "x"}
        )
        assert "_meta" not in got and not got.get("isError")
        assert (await pipe.tool("gno_trace_list", {}))["traces"] == []
    assert trace_rows(engine) == 0


async def test_replay_traces_record_search_and_follow_up_reads(
    engine: Engine, tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    traced_engine(engine, tmp_path, "replay")
    async with mcp_server(server_environment(engine.location.dirs)) as pipe:
        result = await search(pipe)
        trace_id = trace_id_of(result)
        hit = result["structuredContent"]["results"][0]
        assert hit["uri"] == "gno://notes/launch.md"
        got = await pipe.session.tool(
            "gno_get", {"ref": hit["uri"], "fromLine": 3, "lineCount": 2, "traceId": trace_id}
        )
        assert trace_id_of(got) == trace_id
        # an unknown trace is not continued, and the read still answers
        other = await pipe.session.tool(
            "gno_get", {"ref": hit["uri"], "fromLine": 3, "lineCount": 1, "traceId": "nope"}
        )
        assert "_meta" not in other and not other.get("isError")

        listed = await pipe.tool("gno_trace_list", {})
        schema_check("retrieval-trace-list", listed)
        summary = listed["traces"][0]
        assert summary["traceId"] == trace_id and summary["status"] == "open"
        assert "queryText" not in summary and summary["queryShape"] == {"characters": 5, "terms": 1}
        shown = await pipe.tool("gno_trace_show", {"traceId": trace_id})
        schema_check("retrieval-trace-show", shown)
        assert shown["trace"]["queryText"] == "okapi"
        assert shown["trace"]["filters"] == {"limit": 3}
        kinds = [run["kind"] for run in shown["runs"]]
        assert kinds == ["retrieval", "get"]
        assert shown["runs"][1]["payload"]["evidence"][0]["startLine"] == 3
        assert [e["kind"] for e in shown["events"]] == ["query", "retrieval", "get", "open"]
        small = await pipe.tool("gno_trace_show", {"traceId": trace_id, "detailLimit": 1})
        assert small["truncated"]["events"] is True and small["totals"]["events"] == 4
        # nothing in a trace is source text
        assert "Bring the okapi slides" not in repr(shown)
        assert await pipe.tool_error("gno_trace_show", {"traceId": "nope"}) == "NOT_FOUND"


async def test_metadata_mode_keeps_only_shapes(engine: Engine, tmp_path: Path) -> None:
    traced_engine(engine, tmp_path, "metadata")
    async with mcp_server(server_environment(engine.location.dirs)) as pipe:
        trace_id = trace_id_of(await search(pipe, "okapi launch"))
        trace = (await pipe.tool("gno_trace_show", {"traceId": trace_id}))["trace"]
        assert trace["queryText"] is None and trace["queryDigest"] is None
        assert trace["replayCapable"] is False
        assert trace["queryShape"] == {"characters": 12, "terms": 2}
        assert trace["filters"] == {
            "shape": {"type": "object", "fields": {"limit": {"type": "number"}}}
        }


async def test_labels_exports_and_deletes(
    engine: Engine, tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    traced_engine(engine, tmp_path, "replay")
    async with mcp_server(server_environment(engine.location.dirs), "--enable-write") as pipe:
        trace_id = trace_id_of(await search(pipe))
        relevant = {"traceId": trace_id, "label": "relevant", "targetRef": "gno://notes/launch.md"}
        judged = await pipe.tool("gno_trace_label", relevant)
        schema_check("retrieval-trace-judgment", judged)
        assert judged["result"] == "inserted"
        assert judged["judgment"]["target"]["uri"] == "gno://notes/launch.md"
        assert (await pipe.tool("gno_trace_label", relevant))["result"] == "duplicate"
        not_recorded = {**relevant, "targetRef": "notes/other.md"}
        assert await pipe.tool_error("gno_trace_label", not_recorded) == "INVALID_INPUT"
        missing = {**relevant, "label": "missing_expected", "targetRef": "gno://notes/other.md"}
        assert (await pipe.tool("gno_trace_label", missing))["result"] == "inserted"
        for bad in ("/etc/passwd", "just some text"):
            assert (
                await pipe.tool_error("gno_trace_label", {**missing, "targetRef": bad})
                == "INVALID_INPUT"
            )

        # an open trace is not exported; a finished one (a Capsule's) is, once
        assert await pipe.tool_error("gno_trace_export", {"traceIds": [trace_id]}) == (
            "INVALID_INPUT"
        )
        capsule = await pipe.session.tool(
            "gno_context", {"goal": "when is the okapi launch", "budgetTokens": 12000}
        )
        assert not capsule.get("isError"), capsule
        finished = trace_id_of(capsule)
        exported = await pipe.tool("gno_trace_export", {"traceIds": [finished, finished]})
        schema_check("retrieval-trace-export", exported)
        assert exported["result"] == "inserted"
        assert exported["manifest"]["traceIds"] == [finished]
        trace = exported["artifact"]["traces"][0]
        assert [run["kind"] for run in trace["runs"]] == ["context"]
        assert trace["trace"]["status"] == "completed"
        again = await pipe.tool("gno_trace_export", {"traceIds": [finished]})
        assert again["result"] == "duplicate"
        assert again["manifest"]["artifactHash"] == exported["manifest"]["artifactHash"]
        assert await pipe.tool_error("gno_trace_export", {"traceIds": ["nope"]}) == "NOT_FOUND"
        # the export was judged against the egress policy, and left a receipt
        receipts = (await pipe.tool("gno_egress_audit_list", {}))["receipts"]
        assert [(r["action"], r["destinationZone"], r["decision"]) for r in receipts] == [
            ("export", "local_process", "allow"),
            ("export", "local_process", "allow"),
        ]

        shown = await pipe.tool("gno_trace_show", {"traceId": finished})
        assert shown["totals"]["exports"] == 1
        deleted = await pipe.tool("gno_trace_delete", {"traceId": finished})
        schema_check("retrieval-trace-delete", deleted)
        assert deleted["deleted"] is True and deleted["counts"]["exports"] == 1
        assert deleted["counts"]["runs"] == 1 and deleted["counts"]["exportLinks"] == 1
        assert (await pipe.tool("gno_trace_delete", {"traceId": finished}))["deleted"] is False
        assert await pipe.tool_error("gno_trace_purge", {"confirm": False}) == "INVALID_INPUT"
        purged = await pipe.tool("gno_trace_purge", {"confirm": True})
        schema_check("retrieval-trace-purge", purged)
        assert purged["traces"] == 1 and purged["judgments"] == 2
        assert (await pipe.tool("gno_trace_list", {}))["traces"] == []
        # the egress receipts are not traces: still there
        assert len((await pipe.tool("gno_egress_audit_list", {}))["receipts"]) == 2


async def test_retention_keeps_traces_within_their_count(engine: Engine, tmp_path: Path) -> None:
    traced_engine(engine, tmp_path, "replay", max_traces=2)
    async with mcp_server(server_environment(engine.location.dirs)) as pipe:
        ids = [trace_id_of(await search(pipe, word)) for word in ("okapi", "launch", "friday")]
        page = await pipe.tool("gno_trace_list", {"limit": 1})
        assert [t["traceId"] for t in page["traces"]] == [ids[2]]
        rest = await pipe.tool("gno_trace_list", {"cursor": page["nextCursor"]})
        assert [t["traceId"] for t in rest["traces"]] == [ids[1]] and rest["nextCursor"] is None
        assert await pipe.tool_error("gno_trace_list", {"cursor": "forged"}) == "INVALID_INPUT"


async def test_a_quiet_open_trace_counts_as_completed(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traced_engine(engine, tmp_path, "replay")
    with engine.connection():  # one connection for the search and its trace, as a tool call
        hits = engine.search.lexical(SearchRequest(query="okapi", limit=5))
        trace_id = engine.traces.record_retrieval(
            pipeline="search", query="okapi", filters={"limit": 5}, result=hits
        )
    assert trace_id is not None
    monkeypatch.setattr(trace_store, "OPEN_WINDOW_MS", 0)
    assert engine.traces.show(trace_id)["trace"]["status"] == "completed"
    exported = engine.traces.export([trace_id])
    assert exported["artifact"]["traces"][0]["trace"]["status"] == "completed"
