"""``gno-trio serve`` / ``gno-trio daemon`` as a user runs them: a real subprocess."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import trio

from tests.conftest import gno_env
from tests.support.gateway_process import gateway_process, make_index
from tests.support.http_gateway_support import (
    check_schema,
    modern_headers,
    modern_params,
    rpc,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gno_trio", *args],
        env=gno_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )


async def tool_names(client: httpx.AsyncClient, url: str) -> list[str]:
    answer = await client.post(
        url, headers=modern_headers("tools/list"), json=rpc("tools/list", modern_params())
    )
    return [tool["name"] for tool in answer.json()["result"]["tools"]]


async def test_serve_announces_itself_serves_and_drains_on_sigterm(tmp_path: Path) -> None:
    make_index(tmp_path)
    async with gateway_process(tmp_path, "serve") as announced:
        url = announced["url"]
        assert announced["mode"] == "serve"
        assert url == f"http://127.0.0.1:{announced['port']}/mcp"
        assert announced["clientConfig"] == {"mcpServers": {"gno": {"type": "http", "url": url}}}
        async with httpx.AsyncClient() as client:
            status = (await client.get(announced["statusUrl"])).json()
            check_schema("resident-status", status)
            assert status["mode"] == "serve" and status["listenerPort"] == announced["port"]
            found = await client.post(
                url,
                headers=modern_headers("tools/call", "gno_search"),
                json=rpc(
                    "tools/call",
                    modern_params(name="gno_search", arguments={"query": "error handling"}),
                ),
            )
            assert found.json()["result"]["structuredContent"]["results"]
            # An open legacy GET stream does not hold up shutdown.
            init = await client.post(
                url,
                headers={
                    "accept": "application/json, text/event-stream",
                    "content-type": "application/json",
                },
                json=rpc(
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                ),
            )
            session = init.headers["mcp-session-id"]
            async with client.stream(
                "GET", url, headers={"accept": "text/event-stream", "mcp-session-id": session}
            ) as stream:
                assert stream.status_code == 200
                announced["process"].send_signal(signal.SIGTERM)
                with trio.fail_after(10):
                    assert await announced["process"].wait() == 0
                    async for _ in stream.aiter_bytes():
                        pass  # the server ended the stream


async def test_human_output_prints_url_and_client_configuration(tmp_path: Path) -> None:
    make_index(tmp_path)
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "gno_trio", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        env=gno_env(tmp_path),
        cwd=tmp_path,
    )
    assert process.stdout is not None
    text = ""
    try:
        with trio.fail_after(15):
            while not re.search(r"^  zed .*\n", text, re.MULTILINE):
                chunk = await process.stdout.receive_some(4096)
                assert chunk, text
                text += chunk.decode()
    finally:
        process.send_signal(signal.SIGINT)
        with trio.fail_after(10):
            assert await process.wait() == 0
    first, _, rest = text.partition("\n")
    assert first.startswith("gno-trio serve: MCP endpoint http://127.0.0.1:")
    url = first.rsplit(" ", 1)[1]
    shown = {
        name: value
        for line in rest.splitlines()
        if line[:2] == "  " and len(parts := line.split(None, 1)) == 2
        for name, value in [parts]
    }
    assert json.loads(shown["vscode"]) == {"servers": {"gno": {"type": "http", "url": url}}}
    assert json.loads(shown["cursor"]) == {"mcpServers": {"gno": {"url": url}}}
    assert json.loads(shown["windsurf"]) == {"mcpServers": {"gno": {"serverUrl": url}}}
    assert json.loads(shown["zed"]) == {"context_servers": {"gno": {"url": url}}}
    assert json.loads(shown["opencode"])["mcp"]["gno"] == {
        "type": "remote",
        "url": url,
        "enabled": True,
    }
    codex = rest.split("  codex:\n", 1)[1].split("\n  ", 1)[0]  # TOML: its own lines
    assert tomllib.loads(codex) == {"mcp_servers": {"gno": {"url": url}}}


async def test_flags_beat_config_which_beats_defaults(tmp_path: Path) -> None:
    # Config asks for port 1 (unbindable here) and the core profile.
    make_index(tmp_path, port=1, tool_profile="core")
    process = gateway_process(tmp_path, "serve")  # --port 0 beats port 1
    async with process as announced, httpx.AsyncClient() as client:
        core = await tool_names(client, announced["url"])
    assert set(core) <= {
        "gno_query",
        "gno_search",
        "gno_get",
        "gno_multi_get",
        "gno_context",
        "gno_changes",
        "gno_recall",
    }
    process = gateway_process(tmp_path, "serve", "--mcp-tool-profile", "full")
    async with process as announced, httpx.AsyncClient() as client:
        full = await tool_names(client, announced["url"])
    assert set(core) < set(full) and "gno_status" in full
    token = tmp_path / "from-config.token"
    make_index(tmp_path / "second", token_file=token)
    async with gateway_process(tmp_path / "second", "serve") as announced:
        assert token.exists()  # the config's token file was created and is enforced
        async with httpx.AsyncClient() as client:
            refused = await client.get(announced["statusUrl"])
        assert refused.status_code == 401
        assert announced["clientConfig"]["mcpServers"]["gno"]["headers"] == {
            "Authorization": f"Bearer <contents of {token}>"
        }
        printed = {key: value for key, value in announced.items() if key != "process"}
        assert token.read_text().strip() not in json.dumps(printed)


def test_unsafe_or_invalid_starts_are_refused_before_listening(tmp_path: Path) -> None:
    make_index(tmp_path, sync=False)
    serve = run_cli(tmp_path, "serve", "--host", "0.0.0.0", "--port", "0")
    assert serve.returncode == 2
    assert "loopback" in serve.stderr and "GATEWAY_BIND_REFUSED" in serve.stderr
    daemon = run_cli(tmp_path, "daemon", "--host", "0.0.0.0", "--port", "0")
    assert daemon.returncode == 2
    for control in ("token file", "Host allow-list", "Origin allow-list"):
        assert control in daemon.stderr
    partial = run_cli(
        tmp_path,
        "daemon",
        "--host",
        "192.0.2.1",
        "--port",
        "0",
        "--mcp-token-file",
        str(tmp_path / "t"),
        "--mcp-allowed-host",
        "192.0.2.1:9",
    )
    assert partial.returncode == 2 and "Origin allow-list" in partial.stderr
    assert not (tmp_path / "t").exists()
    profile = run_cli(tmp_path, "serve", "--port", "0", "--mcp-tool-profile", "tiny")
    assert profile.returncode == 1 and "VALIDATION" in profile.stderr
    bad_host = run_cli(tmp_path, "serve", "--port", "0", "--mcp-allowed-host", "*.example.com")
    assert bad_host.returncode == 1
    loose = tmp_path / "loose-token"
    loose.write_text("z" * 40)
    loose.chmod(0o644)
    exposed = run_cli(tmp_path, "serve", "--port", "0", "--mcp-token-file", str(loose))
    assert exposed.returncode == 2 and "z" * 40 not in exposed.stderr + exposed.stdout


def test_daemon_needs_a_collection(tmp_path: Path) -> None:
    empty = run_cli(tmp_path, "daemon", "--port", "0")
    assert empty.returncode == 1 and "collection" in empty.stderr


async def test_daemon_listens_off_loopback_with_all_controls_and_syncs_on_start(
    tmp_path: Path,
) -> None:
    make_index(tmp_path, sync=False)
    token = tmp_path / "token"
    args = (
        "daemon",
        "--host",
        "0.0.0.0",
        "--mcp-token-file",
        str(token),
        "--mcp-allowed-host",
        "127.0.0.1:1",
        "--mcp-allowed-origin",
        "http://127.0.0.1:1",
    )
    async with gateway_process(tmp_path, *args) as announced:
        assert announced["mode"] == "daemon"
        assert announced["url"] == "http://127.0.0.1:1/mcp"  # the first allowed Host
        port = announced["port"]
        headers = {"authorization": f"Bearer {token.read_text().strip()}", "host": "127.0.0.1:1"}
        async with httpx.AsyncClient() as client:
            status_url = f"http://127.0.0.1:{port}/api/resident/status"
            status = (await client.get(status_url, headers=headers)).json()
            assert status["mode"] == "daemon"
            # The initial sync runs in the background; the index fills up (a bound
            # for a busy machine: the sync of the corpus alone can take many seconds).
            with trio.fail_after(60):
                while True:
                    found = await client.post(
                        f"http://127.0.0.1:{port}/mcp",
                        headers={**modern_headers("tools/call", "gno_search"), **headers},
                        json=rpc(
                            "tools/call",
                            modern_params(name="gno_search", arguments={"query": "error"}),
                        ),
                    )
                    if found.json()["result"]["structuredContent"]["results"]:
                        break
                    await trio.sleep(0.1)
