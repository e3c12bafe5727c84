"""``serve``/``daemon --detach|--status|--stop``: a real detached gateway, its pid-file and log.

Each test starts real processes in a sandbox (its own data directory) and
stops every one it started, also when an assertion fails.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import gno_schema_errors, write_corpus
from tests.support.cli_support import Cli, make_cli


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    sandbox = make_cli(tmp_path)
    notes = write_corpus(tmp_path / "notes", {"tea.md": "# Tea\n\nGreen tea steeps briefly.\n"})
    sandbox.run("init", str(notes), "--name", "notes")
    yield sandbox
    for mode in ("serve", "daemon"):  # never leave a detached gateway behind
        pid_file = sandbox.data_dir / f"{mode}.pid"
        if pid_file.exists():
            subprocess.run(
                [sys.executable, "-m", "gno_trio", mode, "--stop"],
                env=sandbox.env,
                capture_output=True,
                timeout=30,
                check=False,
            )


def _status(cli: Cli, mode: str, code: int) -> dict[str, object]:
    found = json.loads(cli.run(mode, "--status", "--json", code=code).stdout)
    assert gno_schema_errors("process-status", found) == []
    return found


def test_detach_status_and_stop_manage_one_real_gateway(cli: Cli) -> None:
    assert _status(cli, "serve", 3)["running"] is False
    started = json.loads(cli.run("serve", "--detach", "--port", "0", "--no-embed", "--json").stdout)
    pid, url = started["pid"], started["url"]
    assert isinstance(pid, int) and url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

    found = _status(cli, "serve", 0)
    assert found["running"] is True and found["pid"] == pid and found["cmd"] == "serve"
    assert f":{found['port']}/" in url
    assert (
        isinstance(found["resident"], dict) and found["resident"]["listenerPort"] == found["port"]
    )
    assert found["pid_file"] == str(cli.data_dir / "serve.pid")
    assert found["log_file"] == str(cli.data_dir / "serve.log")

    health = httpx.get(url.replace("/mcp", "/api/resident/status"), timeout=10)
    assert health.status_code == 200 and health.json()["resident"] is True

    # One resident owns a data directory: a second start, either command, fails at once.
    for mode in ("serve", "daemon"):
        second = cli.run(mode, "--port", "0", "--no-embed", code=2)
        assert "RESIDENT_ACTIVE" in second.stderr and f"pid {pid}" in second.stderr
        assert "gno-trio serve --stop" in second.stderr
    again = cli.run("serve", "--detach", "--port", "0", code=2)
    assert "RESIDENT_ACTIVE" in again.stderr

    stopped = json.loads(cli.run("serve", "--stop", "--json").stdout)
    assert stopped == {"stopped": True, "pid": pid, "cmd": "serve", "signal": "SIGTERM"}
    assert not (cli.data_dir / "serve.pid").exists()
    assert _status(cli, "serve", 3)["pid"] is None
    assert "NOT_RUNNING" in cli.run("serve", "--stop", code=3).stderr
    assert (cli.data_dir / "serve.log").stat().st_size > 0  # the child's own announcement

    # The data directory is free again: a new resident may start.
    restarted = json.loads(cli.run("daemon", "--detach", "--port", "0", "--json").stdout)
    assert _status(cli, "daemon", 0)["pid"] == restarted["pid"]
    assert _status(cli, "serve", 3)["running"] is False  # serve's pid-file is its own
    cli.run("daemon", "--stop")


def test_a_stale_pid_file_is_reported_then_removed_by_stop(cli: Cli) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    pid_file = cli.data_dir / "serve.pid"
    pid_file.write_text(
        json.dumps(
            {
                "pid": gone.pid,
                "port": 3999,
                "cmd": "serve",
                "version": "0",
                "started_at": "2026-01-01T00:00:00+00:00",
            }
        )
    )
    found = _status(cli, "serve", 3)
    assert found["running"] is False and found["pid"] == gone.pid
    assert found["uptime_seconds"] is None and found["port"] is None
    assert "stale" in cli.run("serve", "--status", code=3).stdout
    stop = cli.run("serve", "--stop", code=3)
    assert "NOT_RUNNING" in stop.stderr and "stale pid-file" in stop.stderr
    assert not pid_file.exists()


def test_a_child_that_cannot_listen_is_reported_with_its_log(cli: Cli, tmp_path: Path) -> None:
    log = tmp_path / "elsewhere" / "gw.log"
    pid_file = tmp_path / "elsewhere" / "gw.pid"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        failed = cli.run(
            "serve", "--detach", "--port", str(port), "--log-file", str(log),
            "--pid-file", str(pid_file), code=2,
        )  # fmt: skip
    assert "RESIDENT_START_FAILED" in failed.stderr and str(log) in failed.stderr
    assert "GATEWAY_LISTEN_FAILED" in failed.stderr  # the log's tail says why
    assert not pid_file.exists()
    cli.run("serve", "--status", "--pid-file", str(pid_file), code=3)


def test_process_flags_exclude_each_other(cli: Cli) -> None:
    for flags in (("--detach", "--stop"), ("--status", "--stop"), ("--detach", "--status")):
        done = cli.run("serve", *flags, code=1)
        assert "VALIDATION" in done.stderr and "exclude each other" in done.stderr


def test_stop_falls_back_to_sigkill_for_a_process_that_ignores_sigterm(cli: Cli) -> None:
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline() == "ready\n"
        (cli.data_dir / "daemon.pid").write_text(
            json.dumps(
                {
                    "pid": stubborn.pid,
                    "port": 3999,
                    "cmd": "daemon",
                    "version": "0",
                    "started_at": "2026-01-01T00:00:00+00:00",
                }
            )
        )
        began = time.monotonic()
        stopped = json.loads(cli.run("daemon", "--stop", "--json").stdout)
        assert stopped["signal"] == "SIGKILL" and time.monotonic() - began >= 9
        assert stubborn.wait(timeout=10) == -signal.SIGKILL
        assert not (cli.data_dir / "daemon.pid").exists()
    finally:
        if stubborn.poll() is None:
            os.killpg(stubborn.pid, signal.SIGKILL)
