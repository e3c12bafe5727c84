"""The egress audit and the retrieval traces: one contract on both stores, seen from two hosts.

Two engines stand for two processes writing one index: on the embedded
store, two openings of one data directory (the workers of one host); on a
PostgreSQL store, two data directories joined to one team (two hosts). What
one records, the other lists, pages, shows, judges, exports and deletes,
with the same retention, cursors and errors, through the engine's face only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.config.features import RetrievalTraces, TraceRetention
from gno_trio.engine import ContextRequest, Engine, SearchRequest, Team, TraceJudgment
from gno_trio.engine.egress import audit
from gno_trio.engine.team.url import TeamStore
from tests.conftest import STORES, error_code
from tests.support.tool_pipe import write_tree

NOTES = {
    "launch.md": "# Launch\n\nThe okapi launch is on Friday.\nBring the okapi slides.\n",
    "other.md": "# Other\n\nNothing about the okapi event here.\n",
}


class Hosts:
    """Engines ``a`` and ``b`` over one index; ``open_b`` opens b once a is configured."""

    def __init__(self, tmp_path: Path, store: TeamStore | None) -> None:
        self.tmp_path = tmp_path
        self.store = store
        self.a = self._open("a")
        self.notes = write_tree(tmp_path / "vault" / "notes", NOTES)
        self.b: Engine | None = None

    def _open(self, name: str) -> Engine:
        root = self.tmp_path / (name if self.store is not None else "one")
        engine = Engine.open(
            dirs=Dirs(config=root / "config", data=root / "data", cache=root / "cache")
        )
        if self.store is not None:
            engine.join_team(Team.open(self.store, engine.location.index_name))
        return engine

    def open_b(self) -> Engine:
        self.b = self._open("b")
        return self.b

    def close(self) -> None:
        for engine in (self.a, self.b):
            if engine is not None:
                engine.close()


@pytest.fixture(params=STORES)
def hosts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Hosts]:
    store = request.getfixturevalue("team_store") if request.param == "postgresql" else None
    made = Hosts(tmp_path, store)
    try:
        yield made
    finally:
        made.close()


def audited(hosts: Hosts) -> tuple[Engine, Engine]:
    hosts.a.collections.add(str(hosts.notes), name="notes")
    return hosts.a, hosts.open_b()


def judge(engine: Engine, zone: Any = "remote") -> bool:
    decision = engine.egress.judge(
        collections=["notes"],
        action="export",
        zone=zone,
        content_class="retrieval_trace",
        authenticated=True,
    )
    return decision.allowed


def traced(hosts: Hosts, **retention: int) -> tuple[Engine, Engine]:
    a = hosts.a
    a.collections.add(str(hosts.notes), name="notes")
    settings = RetrievalTraces(
        enabled=True,
        redaction_mode="replay",  # type: ignore[arg-type]
        retention=TraceRetention(**retention),
    )
    a.update_config(lambda current: attrs.evolve(current, retrieval_traces=settings))
    a.sync()
    b = hosts.open_b()
    b.sync()
    return a, b


def record_search(engine: Engine, query: str = "okapi") -> str:
    with engine.connection():  # one connection for the search and its trace, as a tool call
        hits = engine.search.lexical(SearchRequest(query=query, limit=3))
        trace_id = engine.traces.record_retrieval(
            pipeline="search", query=query, filters={"limit": 3}, result=hits
        )
    assert trace_id is not None
    return trace_id


# -- the egress audit ------------------------------------------------------------------------


def test_receipts_written_by_one_are_listed_shown_and_counted_by_the_other(
    hosts: Hosts,
) -> None:
    a, b = audited(hosts)
    assert judge(a, zone="remote") is False  # notes is local_only
    assert judge(b, zone="local_process") is True
    for engine in (a, b):
        page = engine.egress.audit_list()
        assert [r["decision"] for r in page["receipts"]] == ["allow", "deny"]  # newest first
        denied = page["receipts"][1]
        assert denied["reasonCode"] == "POLICY_LOCAL_ONLY" and len(denied["lineageDigest"]) == 64
        assert denied["expiresAtMs"] - denied["createdAtMs"] == audit.MAX_AGE_DAYS * audit.DAY_MS
        assert engine.egress.audit_show(denied["auditId"])["receipt"] == denied
        state = engine.egress.audit_status()
        assert state["receipts"] == 2
        assert state["bytes"] == sum(r["byteSize"] for r in page["receipts"])
        assert state["oldestCreatedAtMs"] < state["newestCreatedAtMs"]
    assert error_code(lambda: b.egress.audit_show("nope")) == "NOT_FOUND"


def test_receipt_pages_interleave_both_writers_and_refuse_forged_cursors(hosts: Hosts) -> None:
    a, b = audited(hosts)
    for turn in range(6):
        judge(a if turn % 2 else b)
    seen: list[int] = []
    cursor = None
    while True:
        page = a.egress.audit_list(limit=4, cursor=cursor)
        seen += [r["createdAtMs"] for r in page["receipts"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
        assert cursor.startswith(audit.CURSOR_PREFIX)
    assert len(seen) == 6 and seen == sorted(seen, reverse=True) and len(set(seen)) == 6
    for bad in ("nope", audit.CURSOR_PREFIX + "AAAA", audit.CURSOR_PREFIX):
        assert error_code(lambda bad=bad: b.egress.audit_list(cursor=bad)) == "INVALID_INPUT"
    assert error_code(lambda: b.egress.audit_list(limit=0)) == "INVALID_INPUT"


def test_writers_at_once_still_give_every_receipt_its_own_moment(hosts: Hosts) -> None:
    """Concurrent writers take turns: creation times stay strictly ordered, none repeats."""
    a, b = audited(hosts)
    each = 15

    def write(engine: Engine) -> None:
        for _ in range(each):
            judge(engine)

    workers = [threading.Thread(target=write, args=(engine,)) for engine in (a, b)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    moments = [r["createdAtMs"] for r in b.egress.audit_list()["receipts"]]
    assert len(moments) == 2 * each and len(set(moments)) == 2 * each


def test_receipt_retention_holds_across_writers(
    hosts: Hosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = audited(hosts)
    real_now = audit.now_ms
    monkeypatch.setattr(audit, "now_ms", lambda: 1_000)  # a receipt from long ago
    judge(a)
    monkeypatch.setattr(audit, "now_ms", real_now)
    judge(b)
    assert b.egress.audit_status()["receipts"] == 1  # past the age bound: gone at the next write
    assert a.egress.audit_status()["oldestCreatedAtMs"] > 1_000
    monkeypatch.setattr(audit, "MAX_RECEIPTS", 3)
    for turn in range(4):
        judge(a if turn % 2 else b)
    kept = b.egress.audit_list()["receipts"]
    assert len(kept) == 3
    size = kept[0]["byteSize"]
    monkeypatch.setattr(audit, "MAX_BYTES", 2 * size)
    judge(a)
    assert a.egress.audit_status()["receipts"] == 2


def test_a_receipt_deleted_on_one_is_gone_for_the_other(hosts: Hosts) -> None:
    a, b = audited(hosts)
    judge(a)
    judge(a)
    first = b.egress.audit_list()["receipts"][0]["auditId"]
    gone = b.egress.audit_delete(first)
    assert (gone["auditId"], gone["deleted"]) == (first, 1)
    assert gone["physicalCleanup"] in ("completed", "wal_busy")
    assert error_code(lambda: a.egress.audit_show(first)) == "NOT_FOUND"
    assert error_code(lambda: a.egress.audit_delete(first)) == "NOT_FOUND"
    purged = a.egress.audit_purge()
    assert purged["deleted"] == 1 and purged["physicalCleanup"] in ("completed", "wal_busy")
    assert b.egress.audit_status()["receipts"] == 0


# -- retrieval traces --------------------------------------------------------------------------


def test_a_trace_recorded_by_one_is_listed_continued_and_shown_by_the_other(hosts: Hosts) -> None:
    a, b = traced(hosts)
    trace_id = record_search(a)
    listed = b.traces.list()["traces"]
    assert [t["traceId"] for t in listed] == [trace_id]
    assert listed[0]["status"] == "open" and "queryText" not in listed[0]
    read = b.documents.get("notes/launch.md", from_line=3, line_count=2)
    assert b.traces.record_read(trace_id, read) is True
    assert b.traces.record_read("nope", read) is False
    shown = a.traces.show(trace_id)
    assert shown["trace"]["queryText"] == "okapi"
    assert [run["kind"] for run in shown["runs"]] == ["retrieval", "get"]
    assert shown["runs"][1]["payload"]["evidence"][0]["startLine"] == 3
    small = b.traces.show(trace_id, detail_limit=1)
    assert small["truncated"]["events"] is True and small["totals"]["events"] == 4
    assert error_code(lambda: a.traces.show("nope")) == "NOT_FOUND"


def test_trace_pages_and_retention_hold_across_writers(hosts: Hosts) -> None:
    a, b = traced(hosts, max_traces=2)
    ids = [
        record_search(engine, word) for engine, word in ((a, "okapi"), (b, "launch"), (a, "friday"))
    ]
    page = b.traces.list(limit=1)
    assert [t["traceId"] for t in page["traces"]] == [ids[2]]
    rest = a.traces.list(cursor=page["nextCursor"])
    assert [t["traceId"] for t in rest["traces"]] == [ids[1]] and rest["nextCursor"] is None
    assert error_code(lambda: a.traces.list(cursor="forged")) == "INVALID_INPUT"
    assert error_code(lambda: b.traces.show(ids[0])) == "NOT_FOUND"


def test_judged_exported_and_deleted_across_writers(hosts: Hosts) -> None:
    a, b = traced(hosts)
    trace_id = record_search(a)
    relevant = TraceJudgment(label="relevant", target_ref="gno://notes/launch.md")
    assert b.traces.label(trace_id, relevant)["result"] == "inserted"
    assert a.traces.label(trace_id, relevant)["result"] == "duplicate"
    assert error_code(lambda: a.traces.export([trace_id])) == "INVALID_INPUT"  # still open
    goal = "when is the okapi launch"
    with b.connection():
        capsule = b.capsules.compile(ContextRequest(goal=goal, budget_tokens=12000))
        finished = b.traces.record_capsule(
            pipeline="context", goal=goal, query=goal, filters={}, capsule=capsule
        )
    assert finished is not None
    exported = a.traces.export([finished, finished])
    assert exported["result"] == "inserted" and exported["manifest"]["traceIds"] == [finished]
    again = b.traces.export([finished])
    assert again["result"] == "duplicate"
    assert again["manifest"]["artifactHash"] == exported["manifest"]["artifactHash"]
    assert b.traces.show(finished)["totals"]["exports"] == 1
    # the export was judged against the egress policy: one shared receipt per export
    assert [r["action"] for r in b.egress.audit_list()["receipts"]] == ["export", "export"]
    deleted = b.traces.delete(finished)
    assert deleted["deleted"] is True and deleted["counts"]["exports"] == 1
    assert deleted["counts"]["exportLinks"] == 1
    assert a.traces.delete(finished)["deleted"] is False
    purged = a.traces.purge()
    assert purged["traces"] == 1 and purged["judgments"] == 1
    assert purged["physicalCleanup"] in ("completed", "wal_busy")
    assert b.traces.list()["traces"] == []
    assert a.egress.audit_status()["receipts"] == 2  # receipts are not traces
