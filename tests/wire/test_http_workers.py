"""``gno-trio serve --workers 2``: 2025-era sessions hold across worker processes sharing a port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import attrs
import httpx
import httpx2
import pytest
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gno_trio.cli.resident import write_record
from gno_trio.engine.ingest.watch_report import publish
from gno_trio.engine.store.atomic import TEMP_PREFIX, TEMP_SUFFIX
from tests.conftest import gno_env
from tests.support.gateway_process import gateway_process, make_index
from tests.support.http_gateway_support import RELAXED, initialize_body, legacy_headers, rpc

FRESH_CONNECTIONS = httpx.Limits(max_keepalive_connections=0)


async def worker_pids(client: httpx.AsyncClient, base: str, probes: int) -> set[int]:
    pids = set()
    for _ in range(probes):
        metrics = (await client.get(base + "/api/resident/metrics")).json()
        pids.add(metrics["worker"]["pid"])
    return pids


async def test_a_legacy_session_lives_on_every_worker_until_deleted(tmp_path: Path) -> None:
    make_index(tmp_path, sync=False, limits=RELAXED)
    async with gateway_process(tmp_path, "serve", "--workers", "2") as announced:
        url = announced["url"]
        base = url.removesuffix("/mcp")
        async with httpx.AsyncClient(limits=FRESH_CONNECTIONS) as client:
            assert len(await worker_pids(client, base, 40)) == 2  # the kernel spreads connections

            init = await client.post(url, headers=legacy_headers(), json=initialize_body())
            assert init.status_code == 200
            session = init.headers["mcp-session-id"]
            seen = set()
            for index in range(30):
                called = await client.post(
                    url,
                    headers=legacy_headers(session),
                    json=rpc("tools/call", {"name": "gno_status", "arguments": {}}, index + 2),
                )
                assert called.status_code == 200, called.text
                assert "result" in called.json()
                seen.add(
                    (await client.get(base + "/api/resident/metrics")).json()["activeSessions"]
                )
            assert seen == {1}  # every worker counts the one shared session

            deleted = await client.request("DELETE", url, headers=legacy_headers(session))
            assert deleted.status_code == 204
            for index in range(10):  # gone on every worker
                after = await client.post(
                    url, headers=legacy_headers(session), json=rpc("ping", None, index + 100)
                )
                assert after.status_code == 404
                assert after.json()["error"]["code"] == -32001


async def test_identity_binding_and_the_session_limit_hold_across_workers(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "token"
    # One token is one identity: let it hold every session, so the global limit is reached.
    make_index(tmp_path, sync=False, limits=attrs.evolve(RELAXED, max_sessions_per_identity=32))
    async with gateway_process(
        tmp_path, "serve", "--workers", "2", "--mcp-token-file", str(token_file)
    ) as announced:
        url = announced["url"]
        token = token_file.read_text().strip()
        owner = {"authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(limits=FRESH_CONNECTIONS) as client:
            sessions = []
            for index in range(32):
                opened = await client.post(
                    url, headers=legacy_headers(**owner), json=initialize_body(index)
                )
                assert opened.status_code == 200
                sessions.append(opened.headers["mcp-session-id"])
            for _ in range(4):  # the limit is global, whichever worker answers
                refused = await client.post(
                    url, headers=legacy_headers(**owner), json=initialize_body(99)
                )
                assert refused.status_code == 429

            # Rotating the token ends every session opened with the old one, on every worker.
            token_file.write_text("r" * 40 + "\n")
            token_file.chmod(0o600)
            fresh = {"authorization": "Bearer " + "r" * 40}
            for session in sessions[:6]:
                gone = await client.post(
                    url, headers=legacy_headers(session, **fresh), json=rpc("ping")
                )
                assert gone.status_code == 404
            reopened = await client.post(
                url, headers=legacy_headers(**fresh), json=initialize_body(1)
            )
            assert reopened.status_code == 200
            session = reopened.headers["mcp-session-id"]
            for index in range(8):  # later noticers on other workers keep the new session
                kept = await client.post(
                    url, headers=legacy_headers(session, **fresh), json=rpc("ping", None, index)
                )
                assert kept.status_code == 200


async def test_official_client_in_legacy_mode_against_two_workers(tmp_path: Path) -> None:
    make_index(tmp_path, sync=False, limits=RELAXED)
    async with gateway_process(tmp_path, "serve", "--workers", "2") as announced:
        http = httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))
        async with (
            http,
            Client(
                streamable_http_client(announced["url"], http_client=http),
                mode="legacy",
                cache=None,
            ) as client,
        ):
            assert client.protocol_version == "2025-11-25"
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "gno_status" in names
            for _ in range(4):
                result = await client.call_tool("gno_status", {})
                assert not result.is_error


async def test_sigterm_stops_every_worker(tmp_path: Path) -> None:
    make_index(tmp_path, sync=False)
    async with gateway_process(tmp_path, "serve", "--workers", "2") as announced:
        process = announced["process"]
        process.send_signal(signal.SIGTERM)
        with trio.fail_after(10):
            assert await process.wait() == 0
        async with httpx.AsyncClient() as client:
            try:
                await client.get(announced["statusUrl"])
            except httpx.ConnectError:
                pass
            else:
                raise AssertionError("a worker still listens after the parent exited")


async def test_an_idle_session_is_reaped_on_every_worker(tmp_path: Path) -> None:
    make_index(
        tmp_path,
        sync=False,
        limits=attrs.evolve(RELAXED, session_idle_timeout_ms=1000),
    )
    async with gateway_process(tmp_path, "serve", "--workers", "2") as announced:
        url = announced["url"]
        async with httpx.AsyncClient(limits=FRESH_CONNECTIONS) as client:
            session = (
                await client.post(url, headers=legacy_headers(), json=initialize_body())
            ).headers["mcp-session-id"]
            for index in range(6):  # in use: kept alive across the timeout
                await trio.sleep(0.3)
                alive = await client.post(
                    url, headers=legacy_headers(session), json=rpc("ping", None, index)
                )
                assert alive.status_code == 200
            await trio.sleep(1.8)
            for index in range(6):
                reaped = await client.post(
                    url, headers=legacy_headers(session), json=rpc("ping", None, index)
                )
                assert reaped.status_code == 404


def _running(pid: int) -> bool:
    """Is ``pid`` a live process (a zombie nobody reaped yet counts as ended)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def test_workers_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    make_index(tmp_path, sync=False, limits=RELAXED)
    process = subprocess.Popen(
        [sys.executable, "-m", "gno_trio", "serve", "--workers", "2", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=gno_env(tmp_path),
        cwd=tmp_path,
    )
    pids: set[int] = set()
    try:
        assert process.stdout is not None
        announced = json.loads(process.stdout.readline())
        assert "url" in announced, announced
        base = announced["url"].removesuffix("/mcp")
        with httpx.Client(limits=FRESH_CONNECTIONS, timeout=10) as client:
            for _ in range(64):
                pids.add(client.get(base + "/api/resident/metrics").json()["worker"]["pid"])
                if len(pids) == 2:
                    break
        assert len(pids) == 2
        process.kill()  # the parent can forward no signal now
        process.wait(timeout=10)
        deadline = time.monotonic() + 30
        while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_running(pid) for pid in pids), "a worker outlived its parent"
        with pytest.raises(httpx.ConnectError):
            httpx.get(announced["statusUrl"], timeout=5)  # nothing serves the port any more
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in pids:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_data_directory_writers_leave_each_others_temporaries_alone(tmp_path: Path) -> None:
    # The parent's pid-file and a worker's watch report are written at the same
    # moment at start-up; one's sweep removed the other's file mid-write
    # (serve --workers then failed to start now and then with RUNTIME).
    in_flight = tmp_path / f"{TEMP_PREFIX}0123456789abcdef{TEMP_SUFFIX}"
    in_flight.write_text("another process is writing this\n")
    publish(tmp_path, {"watching": []})
    write_record(tmp_path / "serve.pid", mode="serve", port=1, url="http://x/mcp", log_file=None)
    assert in_flight.exists()
