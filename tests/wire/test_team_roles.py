"""The database roles the README gives a team store are enough, and no more than needed.

The README's ``psql`` script (two roles: an owner that creates the tables,
a gateway role that only reads and writes them) is run as written, with the
names made unique to this test. Then the doctor finds that the gateway
role cannot create the tables, the owner creates them, and afterwards a
gateway serving as the gateway role does what a gateway does on the store:
sessions, the config row, the write lease, traces, job records, and the
doctor's look.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import trio

from tests.conftest import gno_env
from tests.support import postgres as postgres_support
from tests.support.gateway_process import call, gateway_process, remember
from tests.support.http_gateway_support import legacy_headers, rpc
from tests.support.shared import unavailable
from tests.support.team_hosts import host, open_session

README = Path(__file__).resolve().parents[2] / "README.rst"


def readme_script() -> list[str]:
    """The README's role script: SQL statements and ``\\connect`` lines, in order."""
    text = README.read_text(encoding="utf-8")
    start = text.index("    CREATE ROLE gno_owner")
    block = text[start : text.index("\n\n", start)]
    steps: list[str] = []
    pending = ""
    for line in (raw.strip() for raw in block.splitlines()):
        if line.startswith("\\"):
            steps.append(line)
            continue
        pending = f"{pending} {line}".strip()
        if pending.endswith(";"):
            steps.append(pending)
            pending = ""
    assert not pending and len(steps) > 5
    return steps


@pytest.fixture
def roles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The README's roles and database (unique names), set up as it says; their URLs.

    ``admin`` is the database's URL as a superuser, ``gateway_role`` the gateway role's name.
    """
    try:
        info = postgres_support.server(tmp_path_factory.getbasetemp())
    except Exception as exc:
        unavailable(f"the PostgreSQL test server did not start: {type(exc).__name__}: {exc}")
    suffix = f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"
    names = {"gno_owner": f"owner_{suffix}", "gno_gateway": f"gateway_{suffix}"}
    names["notes"] = f"notes_{suffix}"
    pattern = re.compile(r"\b(" + "|".join(names) + r")\b")
    database = "postgres"
    try:
        for step in readme_script():
            step = pattern.sub(lambda found: names[found.group(1)], step)
            if step.startswith("\\connect "):
                database = step.split()[1]
                continue
            with psycopg.connect(postgres_support.database_url(info, database)) as conn:
                conn.autocommit = True
                conn.execute(step.encode())
        urls = {
            role: postgres_support.database_url(info, names["notes"], names[role])
            for role in ("gno_owner", "gno_gateway")
        }
        admin = postgres_support.database_url(info, names["notes"])
        yield {**urls, "admin": admin, "gateway_role": names["gno_gateway"]}
    finally:
        with psycopg.connect(postgres_support.database_url(info, "postgres")) as admin:
            admin.autocommit = True
            admin.execute(f"DROP DATABASE IF EXISTS {names['notes']} WITH (FORCE)".encode())
            for role in ("gno_owner", "gno_gateway"):
                admin.execute(f"DROP ROLE IF EXISTS {names[role]}".encode())


def doctor(base: Path, store: str) -> tuple[int, dict[str, dict[str, Any]]]:
    """``doctor --json --store``: its exit code and its checks by name."""
    done = gno(base, "doctor", "--json", "--store", store)
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def gno(base: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gno_trio", *argv],
        env=gno_env(base),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


async def test_the_readme_roles_let_the_owner_migrate_and_the_gateway_role_serve(
    tmp_path: Path, roles: dict[str, str]
) -> None:
    base = host(tmp_path / "a")
    owner, gateway = roles["gno_owner"], roles["gno_gateway"]
    code, checks = doctor(base, gateway)  # the doctor says what a start would find
    assert code == 2 and checks["store-privileges"]["status"] == "error", checks
    assert "may not create" in checks["store-privileges"]["message"]
    assert checks["store"]["status"] == "warn"  # the tables are missing
    created = gno(base, "status", "--store", owner)
    assert created.returncode == 0, created.stderr

    serve = ("serve", "--store", gateway, "--mcp-enable-write", "--no-embed", "--no-watch")
    async with gateway_process(base, *serve) as served, httpx.AsyncClient(timeout=60) as client:
        url = served["url"]
        session = await open_session(client, url, ready_on=url)
        listed = await client.post(url, headers=legacy_headers(session), json=rpc("tools/list"))
        assert listed.status_code == 200 and listed.json()["result"]["tools"]
        await remember(client, url, "Releases ship on Fridays.")  # the write lease
        assert (await call(client, url, "gno_trace_list"))["structuredContent"]["traces"] == []
        job = (await call(client, url, "gno_sync", collection="facts"))["structuredContent"]
        with trio.fail_after(60):
            while True:
                status = await call(client, url, "gno_job_status", jobId=job["jobId"])
                if status["structuredContent"]["status"] != "running":
                    break
                await trio.sleep(0.1)
        assert status["structuredContent"]["status"] == "completed", status
        extra = tmp_path / "extra"
        extra.mkdir()
        added = await trio.to_thread.run_sync(
            lambda: gno(
                base, "collection", "add", str(extra), "--name", "extra", "--store", gateway
            )
        )
        assert added.returncode == 0, added.stderr  # the config row, as the gateway role
        code, checks = await trio.to_thread.run_sync(doctor, base, gateway)
    assert code == 0, checks
    assert {name: c["status"] for name, c in checks.items() if name.startswith("store")} == {
        "store": "ok",
        "store-server": "ok",
        "store-privileges": "ok",
        "store-connections": "ok",
        "store-lag": "ok",  # the gateway caught this host up
    }
    assert checks["store-server"]["message"].startswith("PostgreSQL 18.")
    assert checks["store-privileges"]["message"] == "This role may read and write the tables"
    assert checks["store-connections"]["message"].startswith("1 gno-trio process holds ")

    with psycopg.connect(roles["admin"], autocommit=True) as admin:
        admin.execute(f"REVOKE DELETE ON gno_jobs FROM {roles['gateway_role']}".encode())
    code, checks = doctor(base, gateway)
    assert code == 2 and checks["store-privileges"]["status"] == "error", checks
    assert checks["store-privileges"]["message"].endswith("missing on gno_jobs")


def test_doctor_warns_when_the_gateways_at_full_budget_exceed_the_server_s_connections(
    tmp_path: Path,
) -> None:
    base = host(tmp_path / "a")
    with postgres_support.own_server(tmp_path / "server", max_connections=12) as info:
        store = postgres_support.database_url(info, postgres_support.TEMPLATE)
        code, checks = doctor(base, store)
        assert checks["store-connections"]["status"] == "ok", checks
        assert "room for 1 more gno-trio processes" in checks["store-connections"]["message"]
        # Two gno-trio processes elsewhere, one connection each for now, up to 7 each later.
        others = [
            psycopg.connect(store, application_name=f"gno-trio:{pid}@elsewhere")
            for pid in (101, 102)
        ]
        try:
            code, checks = doctor(base, store)
        finally:
            for conn in others:
                conn.close()
    connections = checks["store-connections"]
    assert code == 0 and connections["status"] == "warn", checks
    assert connections["message"].startswith("2 gno-trio processes hold 2 connections")
    assert "the server allows 9 (max_connections 12 less 3 reserved)" in connections["message"]
    assert connections["message"].endswith("they need 14") and connections["details"]
