"""Two gateways with separate data directories on one PostgreSQL store (team mode).

Each gateway stands for a host: its own data directory, its own process,
one shared database. What team mode shares must then behave as one: a
2025-era session made on A is served by B, one caller has one memory label
on both, a DELETE on B ends A's GET stream at once (NOTIFY, not A's next
reaper pass), and a writer holding the lease on A's side makes B's writer
give up naming it, until the holder is killed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from gno_trio.engine.team.url import TeamStore
from tests.conftest import gno_env
from tests.support.gateway_process import SCOPE, call, gateway_process, remember
from tests.support.http_gateway_support import legacy_headers, rpc
from tests.support.team_hosts import hold_lease, host, okapi_gateways, open_session


async def label_of(url: str, fact: str) -> str:
    """The caller label a gateway gives this test: the session its recall receipt names."""
    async with httpx.AsyncClient(timeout=30) as client:
        await remember(client, url, fact)
        recalled = await call(
            client, url, "gno_recall", query=fact, collection="facts", scopes=[SCOPE]
        )
    session: str = recalled["structuredContent"]["receipt"]["session"]
    return session


@asynccontextmanager
async def two_gateways(
    tmp_path: Path, store: TeamStore, *, traced: bool = False
) -> AsyncIterator[tuple[str, str]]:
    """Gateways A and B (separate data directories) on one store; their MCP URLs."""
    a, b = host(tmp_path / "a", traced=traced), host(tmp_path / "b", traced=traced)
    serve = ("serve", "--store", store.url, "--mcp-enable-write", "--no-embed", "--no-watch")
    async with gateway_process(a, *serve) as on_a, gateway_process(b, *serve) as on_b:
        yield on_a["url"], on_b["url"]


async def test_two_gateways_share_sessions_labels_and_session_ends(
    tmp_path: Path, team_store: TeamStore
) -> None:
    async with (
        two_gateways(tmp_path, team_store) as (url_a, url_b),
        httpx.AsyncClient(timeout=30) as client,
    ):
        session = await open_session(client, url_a, ready_on=url_b)
        listed = await client.post(url_b, headers=legacy_headers(session), json=rpc("tools/list"))
        assert listed.status_code == 200 and listed.json()["result"]["tools"]

        assert await label_of(url_a, "Releases ship on Fridays.") == await label_of(
            url_b, "Hotfixes ship on any weekday."
        )

        stream_headers = {"accept": "text/event-stream", "mcp-session-id": session}
        async with client.stream("GET", url_a, headers=stream_headers) as stream:
            assert stream.status_code == 200
            deleted = await client.delete(url_b, headers={"mcp-session-id": session})
            assert deleted.status_code == 204
            with trio.fail_after(10):  # the reaper alone would take far longer
                async for _ in stream.aiter_bytes():
                    pass
        gone = await client.post(url_a, headers=legacy_headers(session), json=rpc("ping"))
        assert gone.status_code == 404


async def test_a_receipt_a_trace_and_a_job_of_one_gateway_are_honoured_by_the_other(
    tmp_path: Path, team_store: TeamStore
) -> None:
    """A recall receipt issued by A is accepted by B (one caller, one label), a search
    traced on B is listed and shown by A, and a sync job started on B is reported by A."""
    async with (
        two_gateways(tmp_path, team_store, traced=True) as (url_a, url_b),
        httpx.AsyncClient(timeout=60) as client,
    ):
        await remember(client, url_a, "Releases ship on Fridays.")
        recalled = await call(
            client,
            url_a,
            "gno_recall",
            query="when do releases ship",
            collection="facts",
            scopes=[SCOPE],
        )
        receipt = recalled["structuredContent"]["receipt"]
        await remember(client, url_b, "Hotfixes ship on any weekday.", receipt=receipt)
        searched = await call(client, url_b, "gno_search", query="hotfixes", limit=3)
        trace_id = searched["_meta"]["gno"]["retrievalTrace"]["traceId"]
        listed = await call(client, url_a, "gno_trace_list")
        assert [t["traceId"] for t in listed["structuredContent"]["traces"]] == [trace_id]
        shown = await call(client, url_a, "gno_trace_show", traceId=trace_id)
        assert [run["kind"] for run in shown["structuredContent"]["runs"]] == ["retrieval"]
        started = await call(client, url_b, "gno_sync", collection="facts")
        job = started["structuredContent"]["jobId"]
        with trio.fail_after(60):
            while True:  # the job runs on B; A answers for it
                status = await call(client, url_a, "gno_job_status", jobId=job)
                if status["structuredContent"]["status"] != "running":
                    break
                await trio.sleep(0.1)
        assert status["structuredContent"]["status"] == "completed", status


async def test_a_cancel_sent_to_one_gateway_stops_the_request_running_on_the_other(
    tmp_path: Path, team_store: TeamStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "60000")  # the call would wait a minute
    async with (
        two_gateways(tmp_path, team_store) as (url_a, url_b),
        httpx.AsyncClient(timeout=90) as client,
    ):
        session = await open_session(client, url_a, ready_on=url_a)
        remember_call = {
            "name": "gno_remember",
            "arguments": {
                "text": "Cancelled facts are never written.",
                "collection": "facts",
                "scopes": [SCOPE],
                "decision": "add",
            },
        }
        answered: list[httpx.Response] = []

        async def waiting_call() -> None:
            answered.append(
                await client.post(
                    url_a,
                    headers=legacy_headers(session),
                    json=rpc("tools/call", remember_call, "w"),
                )
            )

        holder = await trio.to_thread.run_sync(hold_lease, team_store, tmp_path / "a")
        try:
            with trio.fail_after(20):  # far less than the minute the call would wait
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(waiting_call)
                    await trio.sleep(1.0)  # the call is now queued on the lease, on A
                    cancel = rpc("notifications/cancelled", {"requestId": "w"}, None)
                    sent = await client.post(url_b, headers=legacy_headers(session), json=cancel)
                    assert sent.status_code == 202
            assert holder.poll() is None  # the lease is still held: the cancel ended the call
            assert "result" not in answered[0].text
        finally:
            holder.kill()
            await trio.to_thread.run_sync(holder.wait)
        recalled = await call(
            client, url_a, "gno_recall", query="cancelled facts", collection="facts", scopes=[SCOPE]
        )
        assert not recalled.get("isError"), recalled
        assert recalled["structuredContent"]["facts"] == []


def test_a_writer_on_one_host_holds_the_lease_for_all_until_killed(
    tmp_path: Path, team_store: TeamStore
) -> None:
    a, b = host(tmp_path / "a"), host(tmp_path / "b")
    holder = hold_lease(team_store, a)
    try:
        env: dict[str, Any] = {**gno_env(b), "GNO_STORE": team_store.url}
        env["GNO_WRITE_LOCK_WAIT_MS"] = "300"
        refused = subprocess.run(
            [sys.executable, "-m", "gno_trio", "update"], env=env, capture_output=True, text=True
        )
        assert refused.returncode == 4, refused.stderr
        assert "LOCKED" in refused.stderr and f"held by process {holder.pid}" in refused.stderr
        holder.kill()
        holder.wait()
        env["GNO_WRITE_LOCK_WAIT_MS"] = "20000"  # the server notices the closed socket first
        done = subprocess.run(
            [sys.executable, "-m", "gno_trio", "update"], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    finally:
        holder.kill()
        holder.wait()
    assert os.environ.get("GNO_STORE") is None  # nothing leaked into this process


def test_a_wrong_or_unreachable_store_is_a_clear_start_up_error(tmp_path: Path) -> None:
    base = host(tmp_path / "a")

    def start(*argv: str, store: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**gno_env(base), **({"GNO_STORE": store} if store is not None else {})}
        return subprocess.run(
            [sys.executable, "-m", "gno_trio", *argv],
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    wrong = start("serve", "--port", "0", "--store", "mysql://db.example/notes")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("Error: INVALID_INPUT: Unsupported store")
    nameless = start("daemon", "--port", "0", store="postgresql://db.example")
    assert nameless.returncode == 1 and "names no database" in nameless.stderr
    for argv in (("serve", "--port", "0"), ("daemon", "--port", "0"), ("mcp",)):
        away = start(*argv, "--store", "postgresql://team:s3cret@127.0.0.1:1/notes")
        assert away.returncode == 2, away.stderr
        assert away.stderr.startswith(
            "Error: RUNTIME: Cannot open the store postgresql://team:***@"
        )
        assert "s3cret" not in away.stderr and "Traceback" not in away.stderr


def test_doctor_reports_the_store_and_who_holds_its_lease(
    tmp_path: Path, team_store: TeamStore
) -> None:
    a = host(tmp_path / "a")

    def doctor(store: str) -> tuple[int, dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "gno_trio", "doctor", "--json", "--store", store],
            env=gno_env(a),
            capture_output=True,
            text=True,
        )
        checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
        return done.returncode, checks["store"]

    code, store = doctor(team_store.url)
    assert code == 0 and store["status"] == "ok", store
    holder = hold_lease(team_store, a)
    try:
        code, store = doctor(team_store.url)
        assert store["status"] == "warn" and f"process {holder.pid}" in store["message"]
    finally:
        holder.kill()
        holder.wait()
    code, store = doctor("postgresql://127.0.0.1:1/notes")
    assert code == 2 and store["status"] == "error" and store["details"]


async def test_a_configuration_change_on_one_host_reaches_every_gateway(
    tmp_path: Path, team_store: TeamStore
) -> None:
    async with two_gateways(tmp_path, team_store):
        a_config = tmp_path / "a" / "config" / "index.yml"
        b_config = tmp_path / "b" / "config" / "index.yml"
        assert b_config.read_text() == a_config.read_text()  # the first host seeded the team's
        extra = tmp_path / "extra"
        extra.mkdir()
        added = await trio.run_process(
            [
                sys.executable,
                "-m",
                "gno_trio",
                "--store",
                team_store.url,
                "collection",
                "add",
                str(extra),
                "--name",
                "extra",
            ],
            env=gno_env(tmp_path / "a"),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert added.returncode == 0, added.stderr
        with trio.fail_after(10):  # gateway B hears the change and writes its mirror
            while "extra" not in b_config.read_text():
                await trio.sleep(0.05)
        assert b_config.read_text() == a_config.read_text()


async def _until(check: Any, what: str, seconds: float = 30) -> Any:
    """Poll ``check()`` (async) until it returns something truthy; fail naming ``what``."""
    with trio.fail_after(seconds):
        while not (found := await check()):
            await trio.sleep(0.5)
    assert found, what
    return found


async def test_what_one_gateway_indexes_the_other_finds(
    tmp_path: Path, team_store: TeamStore
) -> None:
    """Documents, memory and the journal are the team's: a note captured on A is found,
    read and listed as a change on B (same cursor), a fact remembered on A is recalled on
    B, and a document deleted on A disappears from B."""
    async with (
        okapi_gateways(tmp_path, team_store) as (notes, url_a, url_b),
        httpx.AsyncClient(timeout=60) as client,
    ):

        async def hits(url: str, query: str) -> list[dict[str, Any]]:
            found = await call(client, url, "gno_search", query=query)
            results: list[dict[str, Any]] = found["structuredContent"]["results"]
            return results

        assert [r["uri"] for r in await hits(url_b, "okapi")] == ["gno://notes/okapi.md"]
        captured = await call(
            client,
            url_a,
            "gno_capture",
            collection="notes",
            title="Quagga",
            content="The quagga was a plains zebra.\n",
        )
        assert not captured.get("isError"), captured
        uri = captured["structuredContent"]["uri"]
        await _until(lambda: hits(url_b, "quagga"), "B finds the note captured on A")
        assert await hits(url_b, "quagga") == await hits(url_a, "quagga")
        read_a = await call(client, url_a, "gno_get", ref=uri)
        read_b = await call(client, url_b, "gno_get", ref=uri)
        assert read_b["structuredContent"] == read_a["structuredContent"]
        changes_a = await call(client, url_a, "gno_changes")
        changes_b = await call(client, url_b, "gno_changes")
        assert changes_b["structuredContent"] == changes_a["structuredContent"]
        assert uri in json.dumps(changes_b["structuredContent"])

        await remember(client, url_a, "The okapi sleeps standing up.")

        async def recalled_on_b() -> list[Any]:
            recalled = await call(
                client, url_b, "gno_recall", query="okapi sleeps", collection="facts",
                scopes=[SCOPE],
            )  # fmt: skip
            facts: list[Any] = recalled["structuredContent"]["facts"]
            return facts

        facts = await _until(recalled_on_b, "B recalls the fact remembered on A")
        assert "The okapi sleeps standing up." in json.dumps(facts)

        (notes / "okapi.md").unlink()
        started = await call(client, url_a, "gno_sync", collection="notes")
        job = started["structuredContent"]["jobId"]

        async def finished() -> str | None:
            status = await call(client, url_a, "gno_job_status", jobId=job)
            state: str = status["structuredContent"]["status"]
            return None if state == "running" else state

        assert await _until(finished, "the sync on A finishes") == "completed"
        assert await hits(url_a, "giraffe") == []

        async def gone_from_b() -> bool:
            return not await hits(url_b, "giraffe")

        await _until(gone_from_b, "the note deleted on A disappears from B")
