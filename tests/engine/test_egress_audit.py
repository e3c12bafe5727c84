"""The egress decision receipts: recorded by the engine, bounded, listed and deleted.

Engine tests drive ``engine.egress.judge`` and the receipt views over a
real index; the wire tests spawn ``python -m gno_trio mcp`` and call the five
``gno_egress_audit_*`` tools, checking every answer against the advertised
schema and against GNO's ``egress-audit-management`` schema.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine import Engine
from gno_trio.engine.egress import audit
from tests.conftest import db_snapshot, error_code
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree

FORBIDDEN_WORDS = ("secret-plan", "notes/", "/tmp", "http")


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    notes = write_tree(tmp_path / "vault" / "notes", {"a.md": "# A\n\nsecret-plan text\n"})
    engine.collections.add(str(notes), name="notes")
    engine.sync()
    return engine


def judge(engine: Engine, zone: Any = "remote", action: Any = "export") -> bool:
    decision = engine.egress.judge(
        collections=["notes"],
        action=action,
        zone=zone,
        content_class="retrieval_trace",
        authenticated=True,
    )
    return decision.allowed


def test_every_enforced_decision_leaves_a_content_free_receipt(vault: Engine) -> None:
    assert judge(vault, zone="remote") is False  # notes is local_only
    assert judge(vault, zone="local_process") is True
    page = vault.egress.audit_list()
    assert [r["decision"] for r in page["receipts"]] == ["allow", "deny"]  # newest first
    denied = page["receipts"][1]
    assert denied["reasonCode"] == "POLICY_LOCAL_ONLY"
    assert (denied["action"], denied["destinationZone"], denied["contentClass"]) == (
        "export",
        "remote",
        "retrieval_trace",
    )
    assert denied["effectivePolicy"] == "local_only" and len(denied["lineageDigest"]) == 64
    assert denied["expiresAtMs"] - denied["createdAtMs"] == audit.MAX_AGE_DAYS * audit.DAY_MS
    text = repr(page)
    assert not any(word in text for word in FORBIDDEN_WORDS)
    assert vault.egress.audit_show(denied["auditId"])["receipt"] == denied
    state = vault.egress.audit_status()
    assert state["receipts"] == 2 and state["bytes"] == sum(r["byteSize"] for r in page["receipts"])
    assert state["oldestCreatedAtMs"] <= state["newestCreatedAtMs"]


def test_delete_and_purge_remove_receipts_and_nothing_else(vault: Engine) -> None:
    judge(vault)
    judge(vault)
    first = vault.egress.audit_list()["receipts"][0]["auditId"]
    before = {k: v for k, v in db_snapshot(vault.location.db_path).items() if "egress" not in k}
    gone = vault.egress.audit_delete(first)
    assert (gone["auditId"], gone["deleted"]) == (first, 1)
    assert gone["physicalCleanup"] in ("completed", "wal_busy")
    assert error_code(lambda: vault.egress.audit_show(first)) == "NOT_FOUND"
    assert error_code(lambda: vault.egress.audit_delete(first)) == "NOT_FOUND"
    purged = vault.egress.audit_purge()
    assert purged["deleted"] == 1 and vault.egress.audit_status()["receipts"] == 0
    after = {k: v for k, v in db_snapshot(vault.location.db_path).items() if "egress" not in k}
    assert after == before


def test_the_receipt_table_holds_no_content_column(vault: Engine) -> None:
    conn = sqlite3.connect(vault.location.db_path)
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(egress_audit_receipts)")]
    finally:
        conn.close()
    assert not {"query", "path", "content", "host", "uri"} & set(columns)


# ---------------------------------------------------------------------------
# Over the wire
# ---------------------------------------------------------------------------


async def test_the_five_tools_over_stdio(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    judge(vault)
    judge(vault, zone="local_process")
    env = server_environment(vault.location.dirs)
    async with mcp_server(env) as pipe:
        listed = await pipe.list_tools()
        for name in ("gno_egress_audit_list", "gno_egress_audit_show", "gno_egress_audit_status"):
            assert listed[name]["inputSchema"]["additionalProperties"] is False
        assert "gno_egress_audit_delete" not in listed
        refused = await pipe.call(
            "tools/call", {"name": "gno_egress_audit_purge", "arguments": {"confirm": True}}
        )
        assert refused["error"]["code"] == -32602
        page = await pipe.tool("gno_egress_audit_list", {"limit": 1})
        schema_check("egress-audit-management", page)
        assert len(page["receipts"]) == 1 and page["nextCursor"]
        rest = await pipe.tool("gno_egress_audit_list", {"cursor": page["nextCursor"]})
        assert rest["nextCursor"] is None and len(rest["receipts"]) == 1
        one = await pipe.tool("gno_egress_audit_show", {"auditId": rest["receipts"][0]["auditId"]})
        schema_check("egress-audit-management", one)
        state = await pipe.tool("gno_egress_audit_status", {})
        schema_check("egress-audit-management", state)
        assert state["receipts"] == 2
        assert await pipe.tool_error("gno_egress_audit_show", {"auditId": "x"}) == "NOT_FOUND"
        for name, arguments in [
            ("gno_egress_audit_list", {"limit": 1001}),
            ("gno_egress_audit_list", {"cursor": "forged"}),
            ("gno_egress_audit_list", {"extra": 1}),
            ("gno_egress_audit_status", {"extra": 1}),
            ("gno_egress_audit_show", {"auditId": ""}),
        ]:
            assert await pipe.tool_error(name, arguments) == "INVALID_INPUT", (name, arguments)
    async with mcp_server(env, "--enable-write") as pipe:
        listed = await pipe.list_tools()
        assert {"gno_egress_audit_delete", "gno_egress_audit_purge"} <= set(listed)
        assert await pipe.tool_error("gno_egress_audit_purge", {"confirm": False}) == (
            "INVALID_INPUT"
        )
        assert await pipe.tool_error("gno_egress_audit_delete", {"auditId": "x"}) == "NOT_FOUND"
        page = await pipe.tool("gno_egress_audit_list", {})
        deleted = await pipe.tool(
            "gno_egress_audit_delete", {"auditId": page["receipts"][0]["auditId"]}
        )
        schema_check("egress-audit-management", deleted)
        purged = await pipe.tool("gno_egress_audit_purge", {"confirm": True})
        schema_check("egress-audit-management", purged)
        assert purged["deleted"] == 1
        assert (await pipe.tool("gno_egress_audit_status", {}))["receipts"] == 0
